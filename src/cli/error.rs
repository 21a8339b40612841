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
    let message = status.message();
    match status.code() {
        Code::InvalidArgument => format!("rejected by the server: {message}"),
        Code::ResourceExhausted => format!("over a server limit: {message}"),
        Code::Unavailable => format!("server unavailable: {message}"),
        // The server's words are for any gRPC client ("send the metadata ..."): say which
        // flag of this one sends the token.
        Code::Unauthenticated => format!(
            "the server requires a bearer token and refused the call ({message}): pass the \
             file holding the server's token with --auth-token-file FILE (or set \
             GRUNDY_AUTH_TOKEN_FILE)"
        ),
        // tonic's own words for a message over a side's limit, which neither names.
        Code::OutOfRange if message.contains("encoded message length too large") => format!(
            "a response was too large for the server to send ({message}): raise \
             --max-message-bytes (with --server, the server's own flag of that name)"
        ),
        Code::OutOfRange if message.contains("decoded message length too large") => {
            format!("a response was too large to receive ({message}): raise --max-message-bytes")
        }
        code => format!("server error ({code:?}): {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_token_names_the_flag_and_variable_that_send_one() {
        for sent in [
            "missing bearer token: send the metadata `authorization: Bearer <token>`",
            "invalid bearer token",
        ] {
            let said = describe(&Status::unauthenticated(sent));
            assert!(said.contains(sent), "{said}");
            for named in ["--auth-token-file", "GRUNDY_AUTH_TOKEN_FILE"] {
                assert!(said.contains(named), "{named}: {said}");
            }
        }
    }

    #[test]
    fn a_message_over_the_size_limit_names_the_flag_that_raises_it() {
        let sent = Status::out_of_range(
            "Error, encoded message length too large: found 1184 bytes, the limit is: 1000 bytes",
        );
        let said = describe(&sent);
        assert!(said.contains("--max-message-bytes"), "{said}");
        assert!(said.contains("found 1184 bytes"), "{said}");
        let received = Status::out_of_range(
            "Error, decoded message length too large: found 1184 bytes, the limit is: 1000 bytes",
        );
        assert!(describe(&received).contains("too large to receive"));
        let other = Status::out_of_range("vertex 7 is out of range");
        assert_eq!(
            describe(&other),
            "server error (OutOfRange): vertex 7 is out of range"
        );
    }
}
