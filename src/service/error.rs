//! The one place that maps errors to gRPC statuses, choosing the code and the log level by
//! cause: the client's fault is logged at debug, the server's at error.

use std::time::Duration;

use tonic::{Code, Status};

use super::store::StoreError;
use crate::engine::{AnalysisError, GraphError};

/// Everything a stream can fail with before or while it evaluates queries. `Clone` so that
/// one failed computation can be reported to every request that waited for it.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum ServiceError {
    /// The graph in `start.graph` was malformed.
    #[error("invalid graph: {0}")]
    Graph(#[from] GraphError),
    /// The graph could not be analysed (cycle where none is allowed, limits). A limit the
    /// server's flags set is named, as [`ServiceError::LimitExceeded`] does.
    #[error("{error}{hint}", error = .0, hint = limit_hint(.0))]
    Analysis(#[from] AnalysisError),
    /// The request stream broke the protocol (missing or repeated `start`, ...).
    #[error("{0}")]
    Protocol(String),
    /// A configured server limit was exceeded: names the limit (as its flag says it) and
    /// its value, so that the client knows what to shrink.
    #[error("{what} exceeds the server's limit {limit} = {value}")]
    LimitExceeded {
        /// The limit's name, as its flag spells it with underscores.
        limit: &'static str,
        /// The limit's value.
        value: u64,
        /// What exceeded it, with its size.
        what: String,
    },
    /// The server is shutting down: new streams are refused, and streams still running when
    /// the drain period ends are cancelled. Retry on another server (or this one, restarted).
    #[error("server shutting down")]
    ShuttingDown,
    /// The client's deadline (grpc-timeout) passed before the stream was done.
    #[error("deadline of {0:?} exceeded")]
    DeadlineExceeded(Duration),
    /// The stream sent no first message (`start`, or a `PutGraph` chunk) within the server's
    /// start timeout: it held a concurrency slot for nothing.
    #[error(
        "no first message (`start` or a graph chunk) within the server's start_timeout of \
         {0:?}; send `start` right after opening the stream"
    )]
    StartTimeout(Duration),
    /// Every analysis slot stayed busy for the server's `analysis_queue_timeout`: retry
    /// later or on another replica.
    #[error(
        "all {slots} analysis slots stayed busy for the server's analysis_queue_timeout of \
         {waited:?}; retry later"
    )]
    AnalysisQueueFull {
        /// The analyses that may run at once.
        slots: usize,
        /// How long this request waited.
        waited: Duration,
    },
    /// Missing or wrong credentials.
    #[error("{0}")]
    Unauthenticated(&'static str),
    /// A registered graph id is unknown (quoted in a bounded excerpt: ids come from clients).
    #[error("graph {} is not registered; upload it with PutGraph", excerpt(.0))]
    UnknownGraph(String),
    /// The graph store failed: unreachable (retry later, or send the graph inline), or a
    /// stored entry failed its checks (never served: upload the graph again).
    #[error("{0}")]
    Store(#[from] StoreError),
    /// A bug or a panicked worker: never the client's fault.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ServiceError {
    /// The gRPC status code of the error.
    pub(crate) fn code(&self) -> Code {
        match self {
            Self::Graph(_) | Self::Protocol(_) => Code::InvalidArgument,
            Self::Analysis(AnalysisError::Cycle { .. }) => Code::InvalidArgument,
            // Too much work or a value beyond 64 bits: the graph is valid, just too hard.
            Self::Analysis(AnalysisError::Split(_) | AnalysisError::CyclicWork(_)) => {
                Code::ResourceExhausted
            }
            Self::Analysis(AnalysisError::Cancelled(_)) => Code::Cancelled,
            Self::LimitExceeded { .. } => Code::ResourceExhausted,
            Self::ShuttingDown => Code::Unavailable,
            Self::DeadlineExceeded(_) | Self::StartTimeout(_) => Code::DeadlineExceeded,
            Self::AnalysisQueueFull { .. } => Code::Unavailable,
            Self::Unauthenticated(_) => Code::Unauthenticated,
            Self::UnknownGraph(_) => Code::NotFound,
            Self::Store(StoreError::Unavailable { .. }) => Code::Unavailable,
            // The client's remedy is the same as for an unknown id: upload the graph again.
            Self::Store(StoreError::Corrupt { .. }) => Code::NotFound,
            Self::Internal(_) => Code::Internal,
        }
    }
}

/// Names the server flag behind an engine limit, for the client to quote to the operator.
fn limit_hint(error: &AnalysisError) -> String {
    match error {
        AnalysisError::CyclicWork(exceeded) => {
            format!(
                " (the server's limit max_cyclic_work = {})",
                exceeded.budget
            )
        }
        AnalysisError::Cycle { .. } | AnalysisError::Split(_) | AnalysisError::Cancelled(_) => {
            String::new()
        }
    }
}

impl From<ServiceError> for Status {
    fn from(error: ServiceError) -> Self {
        let code = error.code();
        if code == Code::Internal {
            tracing::error!(%error, "request failed");
        } else if matches!(error, ServiceError::Store(_)) {
            // The server's side, though no bug: the operator wants to see it.
            tracing::warn!(%error, ?code, "graph store failed");
        } else {
            tracing::debug!(%error, ?code, "request rejected");
        }
        Status::new(code, error.to_string())
    }
}

/// The status for an error read from a request stream. tonic reports a message over
/// `max_message_bytes` as OUT_OF_RANGE; gRPC's convention (and this API's contract) is
/// RESOURCE_EXHAUSTED naming the limit, so that one is rewritten. Bytes that do not decode
/// (a malformed protobuf message, a frame cut short) tonic reports as INTERNAL, the code this
/// API keeps for server bugs: they are the client's fault, INVALID_ARGUMENT.
pub(crate) fn request_stream_status(status: Status) -> Status {
    let rewritten = if is_message_size_error(status.code(), status.message()) {
        Status::resource_exhausted(format!("max_message_bytes: {}", status.message()))
    } else if is_decode_error(status.code(), status.message()) {
        Status::invalid_argument(format!(
            "malformed request message: {}",
            excerpt_plain(status.message())
        ))
    } else {
        return status;
    };
    tracing::debug!(status = %rewritten, "request rejected");
    rewritten
}

/// True for tonic's statuses about request bytes that are no valid message: protobuf that
/// does not decode (prost's "failed to decode Protobuf message"), a stream that ends inside a
/// length-prefixed frame, a frame that does not decompress. (A compressed flag without
/// `grpc-encoding` stays INTERNAL: the gRPC compression spec requires that code.)
fn is_decode_error(code: Code, message: &str) -> bool {
    code == Code::Internal
        && ["failed to decode", "Unexpected EOF", "Error decompressing"]
            .iter()
            .any(|needle| message.contains(needle))
}

/// A library's error text about client bytes, cut like [`excerpt`] but unquoted.
fn excerpt_plain(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS * 2) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}

/// True for tonic's "decoded message length too large" status.
pub(crate) fn is_message_size_error(code: Code, message: &str) -> bool {
    code == Code::OutOfRange && message.contains("message length too large")
}

/// Most characters of client-supplied text quoted in an error message.
const EXCERPT_CHARS: usize = 80;

/// Client-supplied text for an error message: quoted, and cut to a short prefix (with its
/// full length) when long, so that a status never echoes unbounded input into its header.
pub(crate) fn excerpt(text: &str) -> String {
    if text.chars().count() <= EXCERPT_CHARS {
        return format!("{text:?}");
    }
    let prefix: String = text.chars().take(EXCERPT_CHARS).collect();
    format!("{prefix:?}... ({} bytes)", text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_client_text_is_quoted_in_a_bounded_excerpt() {
        assert_eq!(excerpt("abc"), "\"abc\"");
        let long = "x".repeat(20_000);
        let quoted = excerpt(&long);
        assert!(quoted.len() < 120, "{quoted}");
        assert!(quoted.ends_with("... (20000 bytes)"), "{quoted}");
        let message = ServiceError::UnknownGraph(long).to_string();
        assert!(message.len() < 200, "{message}");
    }
}
