//! What every command of the CLI shares: its input file and its runtime.

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

pub(super) fn open_input(file: Option<&PathBuf>) -> Result<Box<dyn Read + Send>, RunError> {
    match file {
        None => Ok(Box::new(std::io::stdin())),
        Some(path) if path.as_os_str() == "-" => Ok(Box::new(std::io::stdin())),
        Some(path) => std::fs::File::open(path)
            .map(|f| Box::new(f) as Box<dyn Read + Send>)
            .map_err(|e| RunError::Failure(format!("cannot open {}: {e}", path.display()))),
    }
}
