//! Which failures of a test case's stream are worth another attempt, how long to wait
//! before it, and what to tell the user.
//!
//! A stream is retried when its connection was lost (the server process died, a network
//! fault, a cancelled stream at the end of a drain) or the server answered UNAVAILABLE (it is
//! draining, or its store is unreachable): another endpoint, or the same one once it is back,
//! can finish the job. A stream the server ended for its idle timeout (IDLE_TIMEOUT: standard
//! input at a terminal, say, where nobody typed for a while) failed nothing: the case opens a
//! new one on the same server when more input comes, without a retry. Every other status is
//! the server's verdict on the request and is final.

use std::error::Error;
use std::time::Duration;

use tonic::{Code, Status};
use tonic_types::StatusExt;

use super::error::{RunError, describe};
use crate::client::ConnectionArgs;

/// Default of `--retries`.
pub(crate) const DEFAULT_RETRIES: u32 = 5;
/// Wait before the first retry; doubled for every further one, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// Longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Whether `status` (from a call to the server at `url`, reached as `connection` says; `None`
/// for an embedded server) is worth another attempt; `Err` is the error that ends the run. A
/// lost connection that is a TLS mismatch or refusal is final, with the fix.
pub(super) async fn classify(
    status: &Status,
    url: &str,
    connection: Option<&ConnectionArgs>,
    label: &str,
) -> Result<String, RunError> {
    if is_transport_error(status) {
        if let Some(explained) = tls_failure(status, url, connection).await {
            return Err(RunError::Failure(format!("{label}: {explained}")));
        }
        return Ok(transport_failure(status, url));
    }
    if status.code() == Code::Unavailable {
        return Ok(format!("{url}: {}", describe(status)));
    }
    Err(RunError::Failure(format!("{label}: {}", describe(status))))
}

/// True for the server's IDLE_TIMEOUT: every query sent had its answer, read, and the stream
/// sent nothing more for the server's `--stream-idle-timeout`.
pub(super) fn is_idle_timeout(status: &Status) -> bool {
    status.code() == Code::DeadlineExceeded
        && status
            .get_error_details()
            .error_info()
            .is_some_and(|info| info.reason == "IDLE_TIMEOUT")
}

/// The explanation, with the fix, when `status` is a lost connection that TLS explains: a
/// plaintext URL dialled at a TLS server, or a TLS server that refused the handshake (a
/// client certificate missing or not trusted). Neither is transient: retrying cannot help.
pub(super) async fn tls_failure(
    status: &Status,
    url: &str,
    connection: Option<&ConnectionArgs>,
) -> Option<String> {
    if let Some(explained) = plaintext_at_tls(status, url).await {
        return Some(explained);
    }
    let connection = connection.filter(|_| url.starts_with("https://"))?;
    if !is_transport_error(status) {
        return None;
    }
    // The alert itself never reaches the call (see `client::tls_refusal`): ask again.
    let alert = crate::client::refused_handshake(url, connection).await?;
    Some(format!("{url}: {}", crate::client::refusal_words(alert)))
}

/// The explanation, with the fix, when `status` is a lost connection to a TLS server dialled
/// with a plaintext (http://) URL: all the client sees of it is a broken HTTP/2 connection.
async fn plaintext_at_tls(status: &Status, url: &str) -> Option<String> {
    let plaintext = is_transport_error(status) || status.message().contains("h2 protocol error");
    if !(plaintext && url.starts_with("http://") && crate::client::speaks_tls(url).await) {
        return None;
    }
    Some(format!(
        "{url} is a TLS server, and the URL is plaintext (http://): use https://{}, with \
         --tls-ca CA.pem if its certificate is not signed by a system-trusted authority",
        url.trim_start_matches("http://")
    ))
}

/// True for a status the client made up from a failed connection (it keeps the transport
/// error as its source), as opposed to one the server sent in its trailers (no source).
fn is_transport_error(status: &Status) -> bool {
    status.source().is_some()
        || (status.code() == Code::Unavailable && status.message().contains("transport error"))
}

/// The user's words for a transport failure.
fn transport_failure(status: &Status, url: &str) -> String {
    let mut source: Option<&dyn Error> = status.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return format!("cannot connect to the server at {url} (connection refused)");
        }
        source = cause.source();
    }
    format!("the connection to the server was lost ({url})")
}

/// Wait before retry number `retry` (1-based): capped exponential backoff.
pub(super) fn backoff(retry: u32) -> Duration {
    let doublings = retry.saturating_sub(1).min(16);
    (FIRST_BACKOFF * (1u32 << doublings)).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let waits: Vec<u64> = (1..=7).map(|r| backoff(r).as_millis() as u64).collect();
        assert_eq!(waits, vec![100, 200, 400, 800, 1600, 2000, 2000]);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }

    #[tokio::test]
    async fn server_statuses_are_final_except_unavailable() {
        let url = "http://127.0.0.1:9";
        let draining = Status::unavailable("the server is shutting down");
        let said = classify(&draining, url, None, "test case 1").await.unwrap();
        assert_eq!(
            said,
            "http://127.0.0.1:9: server unavailable: the server is shutting down"
        );
        let refused = Status::invalid_argument("graph.targets[3]: out of range");
        let error = classify(&refused, url, None, "test case 1")
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "test case 1: rejected by the server: graph.targets[3]: out of range"
        );
        let lost = Status::from_error(Box::new(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "reset",
        )));
        let said = classify(&lost, url, None, "test case 1").await.unwrap();
        assert_eq!(
            said,
            "the connection to the server was lost (http://127.0.0.1:9)"
        );
        let quiet = Status::with_error_details(
            Code::DeadlineExceeded,
            "nothing sent for the server's stream_idle_timeout",
            tonic_types::ErrorDetails::with_error_info(
                "IDLE_TIMEOUT",
                "grundy.v1",
                std::collections::HashMap::new(),
            ),
        );
        assert!(is_idle_timeout(&quiet));
        let late = Status::deadline_exceeded("the client's deadline passed");
        assert!(!is_idle_timeout(&late));
        assert!(classify(&late, url, None, "test case 1").await.is_err());
    }
}
