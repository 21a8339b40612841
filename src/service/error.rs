//! The one place that maps errors to gRPC statuses, choosing the code and the log level by
//! cause: the client's fault is logged at debug, the server's at error. Every status also
//! carries machine-readable details (the `google.rpc` error model, see
//! `proto/grundy/v1/errors.proto`): an `ErrorInfo` with a stable reason, and by code a
//! `BadRequest`, a `QuotaFailure` or a `RetryInfo`.

use std::collections::HashMap;
use std::time::Duration;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use super::excerpt::{decoder_text, excerpt};
pub(crate) use super::limit::Limit;
use super::metrics::WorkKind;
use super::store::StoreError;
use crate::engine::split::SplitError;
use crate::engine::{AnalysisError, GraphError};
use crate::proto::ErrorReason;

/// The `ErrorInfo.domain` of every status the server sends (documented in errors.proto).
pub const ERROR_DOMAIN: &str = "grundy.v1";

/// How long a client should wait before retrying a retryable failure (draining, overload, a
/// store outage, the concurrency limit): long enough for a restart or a burst to pass.
const RETRY_DELAY: Duration = Duration::from_secs(1);

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
    /// The request broke the protocol (missing or repeated `start`, ...). `field` is the
    /// field path the message names, for the `BadRequest` detail.
    #[error("{message}")]
    Protocol {
        /// The offending field's path, e.g. `start.graph_source`.
        field: String,
        /// The whole message, naming the field.
        message: String,
    },
    /// A configured server limit was exceeded: names the limit (as its flag says it) and
    /// its value, so that the client knows what to shrink.
    #[error("{what} exceeds the server's limit {limit} = {value}")]
    LimitExceeded {
        /// The limit.
        limit: Limit,
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
    /// A unary request's message (read whole before its handler runs) stopped arriving: its
    /// body brought nothing for the server's start timeout. It held a concurrency slot, and
    /// what it had sent, for nothing.
    #[error(
        "the request message stopped arriving: nothing of it for the server's start_timeout \
         of {0:?}; send the message whole right after the headers"
    )]
    RequestStalled(Duration),
    /// An `Evaluate` stream whose client had read every answer sent nothing more within the
    /// server's stream idle timeout: it held a concurrency slot for nothing.
    #[error(
        "nothing sent for the server's stream_idle_timeout of {0:?} after every answer was \
         read; the stream is ended: open a new one when there is more to ask"
    )]
    IdleTimeout(Duration),
    /// A `PutGraph` stream sent no next chunk within the server's stream idle timeout.
    #[error(
        "no next chunk within the server's stream_idle_timeout of {0:?}; the upload is \
         dropped: send the graph again, without pauses between its chunks"
    )]
    UploadIdleTimeout(Duration),
    /// Every slot of a queue of the work pool (analyses, searches, renders) stayed busy for
    /// the server's `analysis_queue_timeout`: retry later or on another replica.
    #[error(
        "all {slots} {queue} slots stayed busy for the server's analysis_queue_timeout of \
         {waited:?}; retry later",
        queue = .queue.label()
    )]
    QueueFull {
        /// The queue: the kind of work waited for.
        queue: WorkKind,
        /// The jobs of that kind that may run at once.
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
    /// A JSON over HTTP request for a path no route has (quoted in a bounded excerpt).
    #[error("no route {method} {}; the routes are listed in docs/api.md", excerpt(.path))]
    UnknownRoute {
        /// The request's method.
        method: String,
        /// The request's path.
        path: String,
    },
    /// A JSON over HTTP request whose path's route takes other methods.
    #[error("{path} takes {allowed}, not {method}")]
    MethodNotAllowed {
        /// The route's template, from the proto.
        path: String,
        /// The request's method.
        method: String,
        /// The methods the path takes, comma-separated.
        allowed: String,
    },
    /// A JSON over HTTP body over the server's JSON body limit: by its `Content-Length`, or
    /// counted as it arrived.
    #[error("the JSON body{} exceeds the server's limit json_body_bytes = {limit}", size_text(*.size))]
    JsonBodyTooLarge {
        /// The limit, in bytes.
        limit: u64,
        /// The body's declared size, when its `Content-Length` gave it.
        size: Option<u64>,
    },
    /// The client sent more requests than `--rate-limit` allows.
    #[error(
        "more requests than the server's rate_limit = {rate} from this client (by {key}); \
         retry in {} ms",
        .retry_after.as_millis().max(1)
    )]
    RateLimited {
        /// The limit, as its flag spells it (`50/s`).
        rate: String,
        /// What the client was told apart by: `token` or `address`.
        key: &'static str,
        /// When the next request is allowed.
        retry_after: Duration,
    },
    /// A bug or a panicked worker: never the client's fault.
    #[error("internal error: {0}")]
    Internal(String),
}

/// " of N bytes", for a size known.
fn size_text(size: Option<u64>) -> String {
    size.map(|size| format!(" of {size} bytes"))
        .unwrap_or_default()
}

impl ServiceError {
    /// The gRPC status code of the error.
    pub(crate) fn code(&self) -> Code {
        match self {
            Self::Graph(_) | Self::Protocol { .. } => Code::InvalidArgument,
            Self::Analysis(AnalysisError::Cycle { .. }) => Code::InvalidArgument,
            // Too much work or a value beyond 64 bits: the graph is valid, just too hard.
            Self::Analysis(AnalysisError::Split(_) | AnalysisError::CyclicWork(_)) => {
                Code::ResourceExhausted
            }
            Self::Analysis(AnalysisError::Cancelled(_)) => Code::Cancelled,
            Self::LimitExceeded { .. } => Code::ResourceExhausted,
            Self::ShuttingDown => Code::Unavailable,
            Self::DeadlineExceeded(_)
            | Self::StartTimeout(_)
            | Self::RequestStalled(_)
            | Self::IdleTimeout(_)
            | Self::UploadIdleTimeout(_) => Code::DeadlineExceeded,
            Self::QueueFull { .. } => Code::Unavailable,
            Self::Unauthenticated(_) => Code::Unauthenticated,
            Self::UnknownGraph(_) => Code::NotFound,
            Self::Store(StoreError::Unavailable { .. }) => Code::Unavailable,
            // The client's remedy is the same as for an unknown id: upload the graph again.
            Self::Store(StoreError::Corrupt { .. }) => Code::NotFound,
            Self::UnknownRoute { .. } => Code::NotFound,
            Self::MethodNotAllowed { .. } => Code::Unimplemented,
            Self::JsonBodyTooLarge { .. } | Self::RateLimited { .. } => Code::ResourceExhausted,
            Self::Internal(_) => Code::Internal,
        }
    }
}

impl ServiceError {
    /// A protocol error about `field`, with `message` naming it.
    pub(crate) fn protocol(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Protocol {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The stable reason of the error, sent in its `ErrorInfo`.
    pub(crate) fn reason(&self) -> ErrorReason {
        match self {
            Self::Graph(_) => ErrorReason::InvalidGraph,
            Self::Analysis(error) => analysis_reason(error),
            Self::Protocol { .. } => ErrorReason::InvalidRequest,
            Self::LimitExceeded { limit, .. } => limit.reason(),
            Self::ShuttingDown => ErrorReason::ShuttingDown,
            Self::QueueFull { .. } => ErrorReason::AnalysisQueueFull,
            Self::StartTimeout(_) | Self::RequestStalled(_) => ErrorReason::StartTimeout,
            Self::IdleTimeout(_) | Self::UploadIdleTimeout(_) => ErrorReason::IdleTimeout,
            Self::DeadlineExceeded(_) => ErrorReason::DeadlineExceeded,
            Self::Unauthenticated(_) => ErrorReason::Unauthenticated,
            Self::UnknownGraph(_) => ErrorReason::UnknownGraph,
            Self::Store(StoreError::Unavailable { .. }) => ErrorReason::StoreUnavailable,
            Self::Store(StoreError::Corrupt { .. }) => ErrorReason::StoredGraphCorrupt,
            Self::UnknownRoute { .. } | Self::MethodNotAllowed { .. } => ErrorReason::UnknownRoute,
            Self::JsonBodyTooLarge { .. } => ErrorReason::MessageTooLarge,
            Self::RateLimited { .. } => ErrorReason::RateLimited,
            Self::Internal(_) => ErrorReason::Internal,
        }
    }

    /// The machine-readable details of the error's status: an `ErrorInfo` always, and the
    /// `BadRequest`, `QuotaFailure` or `RetryInfo` its code calls for.
    fn details(&self) -> ErrorDetails {
        let mut metadata = HashMap::new();
        let mut details = ErrorDetails::new();
        let description = self.to_string();
        let mut quota = |metadata: &mut HashMap<String, String>, limit: &str, value: u64| {
            metadata.insert("limit".to_string(), limit.to_string());
            metadata.insert("limit_value".to_string(), value.to_string());
            details.add_quota_failure_violation(limit, description.clone());
        };
        match self {
            Self::Graph(error) => {
                details.add_bad_request_violation(graph_error_field(error), self.to_string());
            }
            Self::Protocol { field, message } => {
                details.add_bad_request_violation(field.clone(), message.clone());
            }
            Self::Analysis(AnalysisError::Cycle { .. }) => {
                details.add_bad_request_violation("targets", self.to_string());
            }
            Self::Analysis(AnalysisError::CyclicWork(exceeded)) => {
                quota(&mut metadata, "max_cyclic_work", exceeded.budget);
            }
            Self::Analysis(AnalysisError::Split(SplitError::WorkBudget {
                vertex, budget, ..
            })) => {
                quota(&mut metadata, "work_budget_per_vertex", *budget);
                metadata.insert("vertex".into(), vertex.to_string());
            }
            Self::Analysis(AnalysisError::Split(SplitError::ValueOverflow { vertex })) => {
                metadata.insert("vertex".into(), vertex.to_string());
            }
            Self::LimitExceeded { limit, value, .. } => {
                quota(&mut metadata, limit.name(), *value);
                if matches!(limit, Limit::MaxConcurrentStreams | Limit::JsonBodies) {
                    details.set_retry_info(Some(RETRY_DELAY));
                }
            }
            Self::JsonBodyTooLarge { limit, .. } => {
                quota(&mut metadata, "json_body_bytes", *limit);
            }
            Self::RateLimited {
                rate, retry_after, ..
            } => {
                metadata.insert("limit".into(), "rate_limit".into());
                metadata.insert("limit_value".into(), rate.clone());
                details.add_quota_failure_violation("rate_limit", description.clone());
                details.set_retry_info(Some(*retry_after));
            }
            Self::ShuttingDown | Self::Store(StoreError::Unavailable { .. }) => {
                details.set_retry_info(Some(RETRY_DELAY));
            }
            Self::QueueFull {
                queue,
                slots,
                waited,
            } => {
                metadata.insert("limit".into(), "analysis_queue_timeout".into());
                metadata.insert("timeout_ms".into(), waited.as_millis().to_string());
                metadata.insert("queue".into(), queue.label().into());
                metadata.insert(format!("{}_slots", queue.label()), slots.to_string());
                details.set_retry_info(Some(RETRY_DELAY));
            }
            Self::DeadlineExceeded(timeout)
            | Self::StartTimeout(timeout)
            | Self::RequestStalled(timeout)
            | Self::IdleTimeout(timeout)
            | Self::UploadIdleTimeout(timeout) => {
                metadata.insert("timeout_ms".into(), timeout.as_millis().to_string());
            }
            Self::Analysis(AnalysisError::Cancelled(_))
            | Self::Unauthenticated(_)
            | Self::UnknownGraph(_)
            | Self::Store(StoreError::Corrupt { .. })
            | Self::UnknownRoute { .. }
            | Self::MethodNotAllowed { .. }
            | Self::Internal(_) => {}
        }
        details.set_error_info(reason_name(self.reason()), ERROR_DOMAIN, metadata);
        details
    }
}

/// The reason of an analysis failure.
fn analysis_reason(error: &AnalysisError) -> ErrorReason {
    match error {
        AnalysisError::Cycle { .. } => ErrorReason::SplitGraphCycle,
        AnalysisError::Split(SplitError::WorkBudget { .. }) => ErrorReason::SplitWorkBudget,
        AnalysisError::Split(SplitError::ValueOverflow { .. }) => ErrorReason::ValueOverflow,
        AnalysisError::CyclicWork(_) => ErrorReason::CyclicWorkBudget,
        AnalysisError::Cancelled(_) => ErrorReason::AnalysisCancelled,
    }
}

/// `ErrorInfo.reason`: the enum value's name without its `ERROR_REASON_` prefix.
pub(crate) fn reason_name(reason: ErrorReason) -> &'static str {
    let name = reason.as_str_name();
    name.strip_prefix("ERROR_REASON_").unwrap_or(name)
}

/// The reason that a status this service wrote carries in its `ErrorInfo`: `None` for a
/// status without one (OK, a client that left, one of tonic's own).
pub(crate) fn status_reason(status: &Status) -> Option<ErrorReason> {
    let info = status.get_details_error_info()?;
    if info.domain != ERROR_DOMAIN {
        return None;
    }
    ErrorReason::from_str_name(&format!("ERROR_REASON_{}", info.reason))
}

/// The field a graph error names, as its message does (with the index).
fn graph_error_field(error: &GraphError) -> String {
    match error {
        GraphError::NoVertices => "vertex_count".into(),
        GraphError::DegreeCount { .. } => "out_degrees".into(),
        GraphError::TargetCount { .. } | GraphError::TooManyEdges { .. } => "targets".into(),
        GraphError::TargetOutOfRange { index, .. } => format!("targets[{index}]"),
        GraphError::SplitCountLength { .. } => "split_counts".into(),
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
        Status::with_error_details(code, error.to_string(), error.details())
    }
}

/// The status for an error read from a request stream. tonic reports a message over
/// `max_message_bytes` as OUT_OF_RANGE; gRPC's convention (and this API's contract) is
/// RESOURCE_EXHAUSTED naming the limit, so that one is rewritten. Bytes that do not decode
/// (a malformed protobuf message, a frame cut short) tonic reports as INTERNAL, the code this
/// API keeps for server bugs: they are the client's fault, INVALID_ARGUMENT.
pub(crate) fn request_stream_status(status: Status) -> Status {
    let rewritten = if is_message_size_error(status.code(), status.message()) {
        message_too_large(status.message())
    } else if is_decode_error(status.code(), status.message()) {
        let message = format!(
            "malformed request message: {}",
            decoder_text(
                status.message(),
                DECODER_TEXTS
                    .iter()
                    .any(|decoder| status.message().starts_with(decoder)),
            )
        );
        Status::from(ServiceError::protocol("request", message))
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
    code == Code::Internal && DECODER_TEXTS.iter().any(|text| message.contains(text))
}

/// How tonic's texts about request bytes that are no valid message begin: prost's
/// "failed to decode Protobuf message", "Unexpected EOF decoding stream", "Error
/// decompressing".
const DECODER_TEXTS: [&str; 3] = ["failed to decode", "Unexpected EOF", "Error decompressing"];

/// RESOURCE_EXHAUSTED for tonic's "message length too large" `message`, naming the limit,
/// with its details (the limit's value read from tonic's message, which states it).
pub(crate) fn message_too_large(message: &str) -> Status {
    const LIMIT: &str = "max_message_bytes";
    let text = format!("{LIMIT}: {message}");
    let mut metadata = HashMap::from([("limit".to_string(), LIMIT.to_string())]);
    if let Some(value) = stated_limit(message) {
        metadata.insert("limit_value".into(), value.to_string());
    }
    let mut details = ErrorDetails::new();
    details
        .add_quota_failure_violation(LIMIT, text.clone())
        .set_error_info(
            reason_name(ErrorReason::MessageTooLarge),
            ERROR_DOMAIN,
            metadata,
        );
    Status::with_error_details(Code::ResourceExhausted, text, details)
}

/// The limit in tonic's "... found N bytes, the limit is: L bytes".
fn stated_limit(message: &str) -> Option<u64> {
    let (_, tail) = message.rsplit_once("the limit is: ")?;
    tail.split_whitespace().next()?.parse().ok()
}

/// True for tonic's "decoded message length too large" status.
pub(crate) fn is_message_size_error(code: Code, message: &str) -> bool {
    code == Code::OutOfRange && message.contains("message length too large")
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
