//! Telling a client that left from a client that finished: the request body of a stream
//! whose client reset it (SIGINT, a dropped call) or closed its connection (killed, `| head`)
//! ends in an error, which tonic turns into an end of stream (a reset with CANCEL) or an
//! UNKNOWN status. Neither is the client's request being malformed, so the RPC is counted
//! as CANCELLED whatever its handler made of the truncated stream.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use http_body_util::BodyExt;

/// Set once the request body of its RPC failed: the client left mid-stream.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClientLeft(Arc<AtomicBool>);

impl ClientLeft {
    /// Whether the client left before its request stream ended.
    pub(crate) fn left(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Watches a request's body (a layer of [`super::server`]): a body error sets the request's
/// [`ClientLeft`], which its RPC reads from the extensions.
pub(crate) fn watch_departure(
    mut request: http::Request<tonic::body::Body>,
) -> http::Request<tonic::body::Body> {
    let flag = ClientLeft::default();
    request.extensions_mut().insert(flag.clone());
    request.map(|body| {
        tonic::body::Body::new(body.map_err(move |error| {
            flag.0.store(true, Ordering::Relaxed);
            error
        }))
    })
}
