//! Where judge input went wrong: a line and column, and what was expected there.

use std::io;

/// A place in the input: 1-based line and byte column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// 1-based line number.
    pub line: u64,
    /// 1-based byte offset in the line.
    pub column: u64,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Why judge input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// The input is malformed at `location`.
    #[error("{location}: {message}")]
    Syntax {
        /// Where: the offending byte, or the end of input.
        location: Location,
        /// What was expected or what is wrong.
        message: String,
    },
    /// Reading failed (not the input's fault).
    #[error("cannot read input: {0}")]
    Io(#[from] io::Error),
}

impl JudgeError {
    /// A [`JudgeError::Syntax`] at `location`.
    pub(crate) fn syntax(location: Location, message: impl Into<String>) -> Self {
        Self::Syntax {
            location,
            message: message.into(),
        }
    }
}
