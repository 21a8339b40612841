//! Bearer-token files, read alike by the client and the server (both take
//! `--auth-token-file`): neither side depends on the other for it.

use std::path::{Path, PathBuf};

/// Why a token file gives no usable token.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// The file could not be read.
    #[error("cannot read the token file {}: {cause}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// The file holds only whitespace.
    #[error("the token file {} is empty", .path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The token holds a space or a byte that is not printable ASCII.
    #[error("the token in {} must be printable ASCII without spaces", .path.display())]
    Unprintable {
        /// The file.
        path: PathBuf,
    },
}

/// Reads a token file: its content without surrounding whitespace (a trailing newline is
/// normal). An empty token, or one that cannot travel in a header, is an error.
pub fn read_token_file(path: &Path) -> Result<String, TokenFileError> {
    let text = std::fs::read_to_string(path).map_err(|cause| TokenFileError::Read {
        path: path.to_path_buf(),
        cause,
    })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(TokenFileError::Empty {
            path: path.to_path_buf(),
        });
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(TokenFileError::Unprintable {
            path: path.to_path_buf(),
        });
    }
    Ok(token.to_string())
}
