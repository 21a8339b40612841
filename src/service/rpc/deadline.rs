//! Client deadlines: when a request arrived, and the timeout its `grpc-timeout` header gives.

use std::time::Duration;

use tokio::time::Instant;
use tonic::metadata::MetadataMap;

/// When the server received a request: stamped by [`stamp_arrival`], in a layer that tonic
/// calls before it starts its own `grpc-timeout` timer. Absent when the service is called
/// directly, without the server around it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestArrival(pub(crate) Instant);

/// Stamps a request with its [`RequestArrival`] (a layer of [`super::server`]).
pub(crate) fn stamp_arrival<B>(mut request: http::Request<B>) -> http::Request<B> {
    request
        .extensions_mut()
        .insert(RequestArrival(Instant::now()));
    request
}

/// A client's deadline: when it passes, and the timeout it came from (for the message).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    /// The instant the RPC must be done by.
    pub(crate) at: Instant,
    /// The client's timeout.
    pub(crate) timeout: Duration,
}

/// When the RPC of `metadata` started (its stamped arrival, else now) and its deadline.
///
/// tonic's server fails a call still without response headers at its `grpc-timeout` with
/// CANCELLED "Timeout expired", timed from just after the stamp. Timed from the stamp, this
/// RPC's deadline comes no later, so a client waiting for the server's answer gets
/// DEADLINE_EXCEEDED. (tonic clients time out first, on their own side: see
/// docs/operating.md.)
pub(crate) fn start_and_deadline(
    metadata: &MetadataMap,
    extensions: &http::Extensions,
) -> (Instant, Option<Deadline>) {
    let started = extensions
        .get::<RequestArrival>()
        .map_or_else(Instant::now, |arrival| arrival.0);
    let deadline = grpc_timeout(metadata).map(|timeout| Deadline {
        at: started + timeout,
        timeout,
    });
    (started, deadline)
}

/// Resolves when the deadline passes; never without one.
pub(crate) async fn deadline_passed(deadline: Option<Deadline>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.at).await,
        None => std::future::pending().await,
    }
}

/// The client's timeout from the `grpc-timeout` header: an integer of at most 8 digits and a
/// unit (H, M, S, m, u, n). A malformed header is ignored, as tonic does. tonic parses the
/// header too, but privately, and its timer only covers the handler up to the response
/// headers; this one bounds the whole stream.
fn grpc_timeout(metadata: &MetadataMap) -> Option<Duration> {
    let value = metadata.get("grpc-timeout")?.to_str().ok()?;
    if value.len() < 2 || value.len() > 9 {
        return None;
    }
    let (digits, unit) = value.split_at(value.len() - 1);
    let amount: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(amount * 3600),
        "M" => Duration::from_secs(amount * 60),
        "S" => Duration::from_secs(amount),
        "m" => Duration::from_millis(amount),
        "u" => Duration::from_micros(amount),
        "n" => Duration::from_nanos(amount),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts_parse() {
        let with = |value: &str| {
            let mut metadata = MetadataMap::new();
            metadata.insert("grpc-timeout", value.parse().unwrap());
            grpc_timeout(&metadata)
        };
        assert_eq!(with("250m"), Some(Duration::from_millis(250)));
        assert_eq!(with("3S"), Some(Duration::from_secs(3)));
        assert_eq!(with("2M"), Some(Duration::from_secs(120)));
        assert_eq!(with("1H"), Some(Duration::from_secs(3600)));
        assert_eq!(with("7u"), Some(Duration::from_micros(7)));
        assert_eq!(with("9n"), Some(Duration::from_nanos(9)));
        assert_eq!(with("12"), None);
        assert_eq!(with("m"), None);
        assert_eq!(with("123456789S"), None);
        assert_eq!(grpc_timeout(&MetadataMap::new()), None);
    }
}
