//! Telling a client that left from a client that finished: the request body of a stream
//! whose client reset it (SIGINT, a dropped call) or closed its connection (killed, `| head`)
//! ends in an error, which tonic turns into an end of stream (a reset with CANCEL) or an
//! UNKNOWN status. Neither is the client's request being malformed, so the RPC is counted
//! as CANCELLED whatever its handler made of the truncated stream, or as DEADLINE_EXCEEDED
//! when the client left at its deadline ([`left_with`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::time::Instant;
use tonic::Code;

use super::deadline::Deadline;
use crate::proto::ErrorReason;

/// Set once the request body of its RPC failed: the client left mid-stream.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClientLeft(Arc<AtomicBool>);

impl ClientLeft {
    /// Whether the client left before its request stream ended.
    pub(crate) fn left(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Notes that the request body failed (set by the server's watch of request bodies).
    pub(crate) fn mark(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// How an RPC whose client left ended, the client's deadline being `deadline` and the time
/// `now`: DEADLINE_EXCEEDED when the deadline had come, CANCELLED otherwise. Most clients
/// (grpc-go, grpc-python, grpc-java) reset the stream at their deadline, a moment before the
/// server's own timer would end it, so a departure up to [`DEADLINE_SLACK`] early (at most a
/// tenth of the timeout) counts as the deadline: the reset comes one trip after the client's
/// timer, which started one trip before the server's.
pub(crate) fn left_with(deadline: Option<Deadline>, now: Instant) -> (Code, Option<ErrorReason>) {
    match deadline {
        Some(deadline) if now + (deadline.timeout / 10).min(DEADLINE_SLACK) >= deadline.at => {
            (Code::DeadlineExceeded, Some(ErrorReason::DeadlineExceeded))
        }
        _ => (Code::Cancelled, None),
    }
}

/// The most a client's departure can precede its deadline and still count as the deadline
/// (see [`left_with`]).
const DEADLINE_SLACK: Duration = Duration::from_millis(100);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_leaving_at_its_deadline_counts_as_deadline_exceeded() {
        let now = Instant::now();
        let deadline = |timeout: Duration, left: Duration| Deadline {
            at: now + left,
            timeout,
        };
        let second = Duration::from_secs(1);
        let ms = Duration::from_millis;
        let exceeded = (Code::DeadlineExceeded, Some(ErrorReason::DeadlineExceeded));
        let cancelled = (Code::Cancelled, None);
        assert_eq!(left_with(None, now), cancelled);
        // Past its deadline, or the reset of a client whose timer came a moment before ours.
        assert_eq!(
            left_with(Some(deadline(second, Duration::ZERO)), now),
            exceeded
        );
        assert_eq!(left_with(Some(deadline(second, ms(80))), now), exceeded);
        // Long before it: the client gave up of its own accord.
        assert_eq!(left_with(Some(deadline(second, ms(150))), now), cancelled);
        assert_eq!(
            left_with(Some(deadline(10 * second, ms(500))), now),
            cancelled
        );
        // A short timeout allows a tenth of itself.
        assert_eq!(left_with(Some(deadline(ms(50), ms(4))), now), exceeded);
        assert_eq!(left_with(Some(deadline(ms(50), ms(6))), now), cancelled);
    }
}
