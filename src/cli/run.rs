//! What every command of the CLI shares: its input file and its runtime.

use std::io::Read;
use std::path::PathBuf;

use super::error::{EXIT_FAILURE, RunError};
use super::output::stderr_line;

/// Runs a command on a new async runtime; returns its exit code, printing its error.
pub(super) fn run_async(command: impl std::future::Future<Output = Result<(), RunError>>) -> u8 {
    keep_freed_memory();
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

/// Lets the allocator keep what a run frees. A judge run allocates and frees a few hundred
/// kilobytes per query batch on each of its threads, and glibc's defaults hand the top of a
/// heap back to the kernel whenever more than 128 KiB of it is free, so the next batch takes
/// fresh pages again, each a page fault and a page of zeroes (a quarter of the run's CPU time
/// was the kernel's). The CLI is one short process: its heaps grow 16 MiB at a time, keep up
/// to 64 MiB free, and only blocks from 32 MiB get their own mapping (a large graph's arrays).
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets malloc's parameters; called before the runtime's threads
    // start, and any value is valid for these three.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 16 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}
