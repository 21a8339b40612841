//! What every command of the CLI shares: its input file and its runtime.

use std::fs::File;
use std::io::Read;
use std::path::PathBuf;

use super::error::{EXIT_FAILURE, RunError};
use super::output::stderr_line;

/// Runs a command on a new async runtime; returns its exit code, printing its error.
pub(super) fn run_async(command: impl std::future::Future<Output = Result<(), RunError>>) -> u8 {
    crate::allocator::keep_freed_memory(crate::allocator::SHORT_RUN);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            stderr_line(format_args!("error: cannot start the async runtime: {e}"));
            return EXIT_FAILURE;
        }
    };
    match runtime.block_on(command) {
        Ok(()) => 0,
        Err(RunError::OutputClosed) => 0,
        Err(error) => {
            stderr_line(format_args!("error: {error}"));
            error.exit_code()
        }
    }
}

/// The input of `file` (stdin when none or `-`), read as a stream: a judge file too, with
/// plain reads (a file cut shorter while it is read ends early, as a pipe does, and the
/// parser says where).
pub(super) fn open_input(file: Option<&PathBuf>) -> Result<Box<dyn Read + Send>, RunError> {
    Ok(match named(file) {
        Some(path) => Box::new(open_file(path)?),
        None => Box::new(std::io::stdin()),
    })
}

/// The file a command was given, or `None` for standard input (no file, or `-`).
fn named(file: Option<&PathBuf>) -> Option<&PathBuf> {
    file.filter(|path| path.as_os_str() != "-")
}

/// The file at `path`, or the error that names it. A directory is refused here: it opens (on
/// Unix), and its first read would fail with "Is a directory" and no name.
fn open_file(path: &PathBuf) -> Result<File, RunError> {
    let file = File::open(path)
        .map_err(|e| RunError::Failure(format!("cannot open {}: {e}", path.display())))?;
    if file.metadata().is_ok_and(|metadata| metadata.is_dir()) {
        return Err(RunError::Failure(format!(
            "cannot read {}: it is a directory; give a judge file, or - for standard input",
            path.display()
        )));
    }
    Ok(file)
}
