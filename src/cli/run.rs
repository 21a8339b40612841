//! What every command of the CLI shares: its input file and its runtime.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use memmap2::{Mmap, MmapOptions};

use super::error::{EXIT_FAILURE, RunError};
use super::input::JudgeSource;
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

/// The input of `file` (stdin when none or `-`), read as a stream.
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

/// The file at `path`, or the error that names it.
fn open_file(path: &PathBuf) -> Result<File, RunError> {
    File::open(path).map_err(|e| RunError::Failure(format!("cannot open {}: {e}", path.display())))
}

/// The judge file of `file` (stdin when none or `-`). A regular file is mapped into memory
/// from where its descriptor stands and read in place (the parser's window onto it moves
/// instead of a buffer being copied into), and the descriptor is moved to its end, as reading
/// it would; anything else (a pipe, a terminal), or a file that cannot be mapped, is read as a
/// stream.
pub(super) fn open_judge_input(file: Option<&PathBuf>) -> Result<JudgeSource, RunError> {
    let opened = match named(file) {
        Some(path) => open_file(path)?,
        None => match stdin_file() {
            Some(file) => file,
            None => return Ok(JudgeSource::Stream(Box::new(std::io::stdin()))),
        },
    };
    Ok(match map_rest(&opened) {
        Some(map) => JudgeSource::Mapped(map),
        // Standard input's descriptor too is read through its file: the stream is the same.
        None => JudgeSource::Stream(Box::new(opened)),
    })
}

/// Standard input's descriptor as a file of its own (sharing its position), where there is
/// one to be had.
fn stdin_file() -> Option<File> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .map(File::from)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The rest of `file` from its descriptor's position, mapped read-only, when it is a regular
/// file with something left to read; the descriptor then stands at its end.
fn map_rest(mut file: &File) -> Option<Mmap> {
    let metadata = file.metadata().ok()?;
    if !metadata.is_file() {
        return None;
    }
    let position = file.stream_position().ok()?;
    let rest = usize::try_from(metadata.len().checked_sub(position)?).ok()?;
    if rest == 0 {
        return None;
    }
    // SAFETY: the mapping is read-only and nothing in this process writes the file. Another
    // process could still change it while it is read, which the type system cannot rule
    // out: grundy maps only a file it was given to read, as other tools that read files in
    // place do (a file rewritten meanwhile reads as a mix of both versions, and one cut
    // shorter ends the process with SIGBUS).
    let map = unsafe { MmapOptions::new().offset(position).len(rest).map(file) }.ok()?;
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    file.seek(SeekFrom::Start(position + rest as u64)).ok()?;
    Some(map)
}
