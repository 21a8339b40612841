//! When a request's body last brought bytes: the clock of the idle timeout
//! (`--stream-idle-timeout`). A message still arriving, frame by frame, is no silence: a
//! large `PutGraph` chunk or query batch from a client on a slow link (minutes, near the
//! message limit) is not ended as idle while it comes.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http_body_util::BodyExt;
use tokio::time::Instant;

/// When the last frame of a request's body arrived (absent when the service is called
/// directly), in nanoseconds after [`epoch`].
#[derive(Debug, Clone)]
pub(crate) struct BodyActivity(Arc<AtomicU64>);

/// The instant the activity clocks count from: the first one read in the process.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

impl BodyActivity {
    /// Activity that began now.
    fn new() -> Self {
        let activity = Self(Arc::default());
        activity.touch();
        activity
    }

    fn touch(&self) {
        let since = epoch().elapsed().as_nanos();
        self.0
            .store(u64::try_from(since).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// When the body last brought a frame (or the request came).
    pub(crate) fn last(&self) -> Instant {
        epoch() + Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }
}

/// Watches a request's body (a layer of [`super::server`]): every frame it brings sets the
/// request's [`BodyActivity`], which its RPC reads from the extensions.
pub(crate) fn watch_activity(
    mut request: http::Request<tonic::body::Body>,
) -> http::Request<tonic::body::Body> {
    let activity = BodyActivity::new();
    request.extensions_mut().insert(activity.clone());
    request.map(|body| {
        tonic::body::Body::new(body.map_frame(move |frame| {
            activity.touch();
            frame
        }))
    })
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
