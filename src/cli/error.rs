//! What ends a run early, the exit codes, and how a server's status reads on stderr.

use tonic::{Code, Status};

use crate::client::ClientError;
use crate::judge::JudgeError;

/// Exit code for malformed input.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for every other failure (server unreachable, server error, I/O).
pub const EXIT_FAILURE: u8 = 1;

/// What ended a judge run early. Each is printed as one `error: ...` line.
#[derive(Debug, thiserror::Error)]
pub(super) enum RunError {
    /// Malformed input (or a graph the server rejects as invalid): exit 2.
    #[error("{0}")]
    BadInput(String),
    /// Anything else that is not the input's fault: exit 1.
    #[error("{0}")]
    Failure(String),
    /// Connecting to `--server` failed (URL, TLS or token files, or unreachable): exit 1.
    #[error(transparent)]
    Connect(#[from] ClientError),
    /// The embedded server could not listen: exit 1.
    #[error("cannot start the embedded server: {0}")]
    EmbeddedServer(std::io::Error),
    /// Stdout was closed by its reader: not an error, just stop.
    #[error("output closed")]
    OutputClosed,
}

impl RunError {
    pub(super) fn exit_code(&self) -> u8 {
        match self {
            Self::BadInput(_) => EXIT_BAD_INPUT,
            Self::Failure(_) | Self::Connect(_) | Self::EmbeddedServer(_) => EXIT_FAILURE,
            Self::OutputClosed => 0,
        }
    }
}

/// A malformed input, as a run error (exit 2), its text naming line and column.
pub(super) fn judge_error(error: JudgeError) -> RunError {
    match error {
        JudgeError::Syntax { .. } => RunError::BadInput(error.to_string()),
        JudgeError::Io(_) => RunError::Failure(error.to_string()),
    }
}

/// A server's status in words, by its code.
pub(super) fn describe(status: &Status) -> String {
    match status.code() {
        Code::InvalidArgument => format!("rejected by the server: {}", status.message()),
        Code::ResourceExhausted => format!("over a server limit: {}", status.message()),
        Code::Unavailable => format!("server unavailable: {}", status.message()),
        code => format!("server error ({code:?}): {}", status.message()),
    }
}
