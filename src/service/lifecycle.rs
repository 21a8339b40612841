//! Where the server is in its life, and how many RPCs are in progress: streams watch the
//! phase to stop at shutdown, and the server waits for the count to reach zero to drain.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

/// The phase of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Serving every RPC.
    Serving,
    /// New streams are refused; streams in progress go on.
    Draining,
    /// Streams still in progress end now with UNAVAILABLE.
    Cancelling,
}

/// The phase, the count of RPCs in progress, and the slots that bound that count.
#[derive(Debug)]
pub(crate) struct Lifecycle {
    phase: watch::Sender<Phase>,
    active: watch::Sender<usize>,
    slots: Arc<Semaphore>,
}

impl Lifecycle {
    /// Serving, with room for `max_streams` RPCs at once.
    pub(crate) fn new(max_streams: usize) -> Self {
        Self {
            phase: watch::Sender::new(Phase::Serving),
            active: watch::Sender::new(0),
            slots: Arc::new(Semaphore::new(max_streams.clamp(1, Semaphore::MAX_PERMITS))),
        }
    }

    /// A slot for one more RPC, or None when all are taken.
    pub(crate) fn try_slot(&self) -> Option<OwnedSemaphorePermit> {
        self.slots.clone().try_acquire_owned().ok()
    }

    /// Counts an RPC as in progress until the returned guard drops.
    pub(crate) fn enter(self: &Arc<Self>) -> ActiveGuard {
        self.active.send_modify(|count| *count += 1);
        ActiveGuard(self.clone())
    }

    /// RPCs in progress.
    pub(crate) fn active(&self) -> usize {
        *self.active.borrow()
    }

    /// Watches the phase.
    pub(crate) fn subscribe(&self) -> watch::Receiver<Phase> {
        self.phase.subscribe()
    }

    /// Refuses new streams from now on; streams in progress go on.
    pub(crate) fn begin_drain(&self) {
        self.phase.send_if_modified(|phase| {
            let serving = *phase == Phase::Serving;
            if serving {
                *phase = Phase::Draining;
            }
            serving
        });
    }

    /// True once draining or cancelling.
    pub(crate) fn is_draining(&self) -> bool {
        *self.phase.borrow() != Phase::Serving
    }

    /// Ends every stream in progress (and refuses new ones).
    pub(crate) fn cancel_streams(&self) {
        self.phase.send_replace(Phase::Cancelling);
    }

    /// Resolves when no RPC is in progress.
    pub(crate) async fn wait_idle(&self) {
        let mut active = self.active.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = active.wait_for(|&count| count == 0).await;
    }
}

/// One RPC counted as in progress (see [`Lifecycle::enter`]).
#[derive(Debug)]
pub(crate) struct ActiveGuard(Arc<Lifecycle>);

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.active.send_modify(|count| *count -= 1);
    }
}

/// Resolves once the server cancels streams (never, if the phase sender is gone).
pub(crate) async fn cancelled(phase: &mut watch::Receiver<Phase>) {
    if phase.wait_for(|&p| p == Phase::Cancelling).await.is_err() {
        std::future::pending::<()>().await;
    }
}
