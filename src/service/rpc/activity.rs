//! When a request's body last brought bytes: the clock of the start and idle timeouts
//! (`--start-timeout`, `--stream-idle-timeout`). A message still arriving, frame by frame, is
//! no silence: a large `PutGraph` chunk or query batch from a client on a slow link (minutes,
//! near the message limit) is not ended while it comes.
//!
//! A body read whole before any handler runs (a unary request's message, read by tonic; a
//! `POST /render` body) has no handler to watch that clock: [`StallTimeout`] keeps the same
//! clock inside the body itself, and fails the body once it has brought nothing for the
//! timeout while its reader waits for more.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::time::{Instant, Sleep};
use tonic::Status;

/// When the last frame of a request's body arrived.
#[derive(Debug, Clone)]
pub(crate) struct BodyActivity(Arc<Clock>);

/// An instant, and nanoseconds after it.
#[derive(Debug)]
struct Clock {
    began: Instant,
    last: AtomicU64,
}

impl BodyActivity {
    /// Activity that began now.
    pub(crate) fn new() -> Self {
        Self(Arc::new(Clock {
            began: Instant::now(),
            last: AtomicU64::new(0),
        }))
    }

    /// Notes a frame that arrived now (set by the server's watch of request bodies).
    pub(crate) fn touch(&self) {
        let since = self.0.began.elapsed().as_nanos();
        let since = u64::try_from(since).unwrap_or(u64::MAX);
        self.0.last.store(since, Ordering::Relaxed);
    }

    /// When the body last brought a frame (or the request came).
    pub(crate) fn last(&self) -> Instant {
        self.0.began + Duration::from_nanos(self.0.last.load(Ordering::Relaxed))
    }
}

/// A request body that fails with the status `on_stall` gives once it has brought no frame
/// for `timeout` (counted from its creation, then from its last frame) while its reader
/// waits for the next: a client that sends part of a message and stops no longer holds what
/// it sent, nor the slot the request took, past the timeout. A body read to its end is never
/// failed, however long its reader then takes.
pub(crate) struct StallTimeout {
    body: tonic::body::Body,
    timeout: Duration,
    last_frame: Instant,
    timer: Pin<Box<Sleep>>,
    on_stall: Option<Box<dyn FnOnce() -> Status + Send>>,
}

impl StallTimeout {
    /// `body`, failed with `on_stall()` (called once) when it stalls for `timeout`.
    pub(crate) fn new(
        body: tonic::body::Body,
        timeout: Duration,
        on_stall: impl FnOnce() -> Status + Send + 'static,
    ) -> Self {
        let now = Instant::now();
        Self {
            body,
            timeout,
            last_frame: now,
            timer: Box::pin(tokio::time::sleep_until(far_after(now, timeout))),
            on_stall: Some(Box::new(on_stall)),
        }
    }
}

/// `timeout` after `instant`, or as far as the clock goes.
fn far_after(instant: Instant, timeout: Duration) -> Instant {
    instant
        .checked_add(timeout)
        .unwrap_or_else(|| instant + Duration::from_secs(86_400 * 365 * 30))
}

impl HttpBody for StallTimeout {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = self.get_mut();
        let Some(_) = this.on_stall else {
            // Stalled before: the body is over.
            return Poll::Ready(None);
        };
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            this.last_frame = Instant::now();
            return Poll::Ready(frame);
        }
        let until = far_after(this.last_frame, this.timeout);
        if this.timer.deadline() != until {
            this.timer.as_mut().reset(until);
        }
        ready!(this.timer.as_mut().poll(cx));
        let on_stall = this.on_stall.take().expect("checked above");
        Poll::Ready(Some(Err(on_stall())))
    }

    fn is_end_stream(&self) -> bool {
        self.on_stall.is_none() || self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_moves_the_clock_on() {
        let activity = BodyActivity::new();
        let began = activity.last();
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(activity.last(), began);
        activity.touch();
        assert!(activity.last() >= began + Duration::from_millis(2));
    }
}
