//! The one place that maps errors to gRPC statuses, choosing the code and the log level by
//! cause: the client's fault is logged at debug, the server's at error.

use crate::engine::{AnalysisError, GraphError};
use tonic::{Code, Status};

/// Everything a stream can fail with before or while it evaluates queries.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The graph in `start.graph` was malformed.
    #[error("invalid graph: {0}")]
    Graph(#[from] GraphError),
    /// The graph could not be analysed (cycle where none is allowed, limits).
    #[error("{0}")]
    Analysis(#[from] AnalysisError),
    /// The request stream broke the protocol (missing or repeated `start`, ...).
    #[error("{0}")]
    Protocol(String),
    /// A configured server limit was exceeded.
    #[error("{0}")]
    Limit(String),
    /// A registered graph id is unknown.
    #[error("graph {0:?} is not registered; upload it with PutGraph")]
    UnknownGraph(String),
    /// A bug or a panicked worker: never the client's fault.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ServiceError {
    pub fn code(&self) -> Code {
        match self {
            Self::Graph(_) | Self::Protocol(_) => Code::InvalidArgument,
            Self::Analysis(AnalysisError::Cycle { .. }) => Code::InvalidArgument,
            // Too much work or a value beyond 64 bits: the graph is valid, just too hard.
            Self::Analysis(AnalysisError::Split(_)) => Code::ResourceExhausted,
            Self::Limit(_) => Code::ResourceExhausted,
            Self::UnknownGraph(_) => Code::NotFound,
            Self::Internal(_) => Code::Internal,
        }
    }
}

impl From<ServiceError> for Status {
    fn from(error: ServiceError) -> Self {
        let code = error.code();
        if code == Code::Internal {
            tracing::error!(%error, "request failed");
        } else {
            tracing::debug!(%error, ?code, "request rejected");
        }
        Status::new(code, error.to_string())
    }
}
