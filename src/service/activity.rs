//! When a request's body last brought bytes: the clock of the start and idle timeouts
//! (`--start-timeout`, `--stream-idle-timeout`). A message still arriving, frame by frame, is
//! no silence: a large `PutGraph` chunk or query batch from a client on a slow link (minutes,
//! near the message limit) is not ended while it comes.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

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
