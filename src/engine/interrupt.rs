//! Cooperative cancellation: a flag that another thread raises when nobody waits for an
//! analysis any more, polled by the engine's long loops at a bounded interval.
//!
//! The engine stays synchronous: the caller (an async service, a CLI) owns an [`Interrupt`],
//! hands a clone to [`super::analyse_interruptible`], and calls [`Interrupt::interrupt`] from
//! wherever it learns that the result is no longer wanted. The loops read the flag with one
//! relaxed load every [`CHECK_INTERVAL`] units of work (edge visits, enumeration steps), so the
//! check costs nothing measurable and an analysis stops within about a millisecond of work.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Units of work (edge visits, set enumerations, DP state updates) between two reads of the
/// flag: 2^16, tens of microseconds on one core.
pub const CHECK_INTERVAL: u64 = 1 << 16;

/// A shared cancellation flag. Clones share the flag; [`Interrupt::default`] is a fresh one
/// that nothing has raised.
#[derive(Debug, Clone, Default)]
pub struct Interrupt {
    flag: Arc<AtomicBool>,
}

impl Interrupt {
    /// A fresh flag, not raised.
    pub fn new() -> Self {
        Self::default()
    }

    /// Raises the flag: every analysis holding a clone stops at its next check and returns
    /// [`super::AnalysisError::Cancelled`]. Idempotent; it cannot be lowered again.
    pub fn interrupt(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// Whether the flag was raised. One relaxed load: the engine needs no ordering with other
    /// memory, only to see the store eventually.
    #[inline]
    pub fn is_interrupted(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// `Err(Cancelled)` once the flag is raised.
    #[inline]
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_interrupted() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }

    /// A guard that raises this flag when it is dropped: held by whoever waits for the
    /// work, so that the work stops once nobody does (its future dropped, its stream gone).
    pub fn raise_on_drop(&self) -> RaiseOnDrop {
        RaiseOnDrop(self.clone())
    }

    /// A work counter that polls this flag every [`CHECK_INTERVAL`] units.
    pub(crate) fn poller(&self) -> Poller<'_> {
        Poller {
            interrupt: self,
            until_check: CHECK_INTERVAL,
        }
    }
}

/// Raises its [`Interrupt`] when dropped (see [`Interrupt::raise_on_drop`]).
#[derive(Debug)]
#[must_use = "the flag is raised as soon as the guard is dropped"]
pub struct RaiseOnDrop(Interrupt);

impl Drop for RaiseOnDrop {
    fn drop(&mut self) {
        self.0.interrupt();
    }
}

/// The analysis was stopped by its [`Interrupt`] before it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the analysis was cancelled: nobody waits for its result any more")]
pub struct Cancelled;

/// Counts work done by a loop and reads the flag each time another [`CHECK_INTERVAL`] units
/// are done: a subtraction and a predictable branch per call, one load per interval.
#[derive(Debug)]
pub(crate) struct Poller<'a> {
    interrupt: &'a Interrupt,
    until_check: u64,
}

impl Poller<'_> {
    /// Records `work` more units, reading the flag when an interval is complete.
    #[inline]
    pub(crate) fn tick(&mut self, work: u64) -> Result<(), Cancelled> {
        match self.until_check.checked_sub(work) {
            Some(left) if left > 0 => {
                self.until_check = left;
                Ok(())
            }
            _ => {
                self.until_check = CHECK_INTERVAL;
                self.interrupt.check()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let interrupt = Interrupt::new();
        let clone = interrupt.clone();
        assert_eq!(clone.check(), Ok(()));
        interrupt.interrupt();
        assert!(clone.is_interrupted());
        assert_eq!(clone.check(), Err(Cancelled));
    }

    #[test]
    fn a_guard_raises_the_flag_when_dropped() {
        let interrupt = Interrupt::new();
        let guard = interrupt.raise_on_drop();
        assert!(!interrupt.is_interrupted());
        drop(guard);
        assert!(interrupt.is_interrupted());
    }

    #[test]
    fn poller_reads_the_flag_once_per_interval() {
        let interrupt = Interrupt::new();
        let mut poller = interrupt.poller();
        interrupt.interrupt();
        // Within the first interval the flag is not read yet.
        assert_eq!(poller.tick(CHECK_INTERVAL - 1), Ok(()));
        assert_eq!(poller.tick(1), Err(Cancelled));
        // One big step completes an interval at once.
        let mut poller = interrupt.poller();
        assert_eq!(poller.tick(10 * CHECK_INTERVAL), Err(Cancelled));
    }
}
