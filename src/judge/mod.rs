//! Judge formats: streaming parsers (pull readers of events) that report errors by line and
//! column. The formats and their samples are described in `docs/games.md`; the judge's output
//! lines are written by the CLI (`cli/output.rs`).
//!
//! - `scanner`: whitespace-separated numbers with their locations, one buffer, over
//!   `digits` (its fast number reader), `window` and `window_values` (a 64-byte window's
//!   numbers found at once, then all converted before any is used, for the bulk read of
//!   lists) and `error`
//!   (locations and syntax errors);
//! - `chess`: the POJ 2425 format;
//! - `addsub`: the LA 4411 format.
//!
//! The readers are public API for programs (and the fuzz tier of the tests) that read judge
//! files themselves; the scanner underneath is internal.

pub mod addsub;
pub mod chess;
mod digits;
mod error;
pub(crate) mod scanner;
mod window;
mod window_values;

pub use error::{JudgeError, Location};
pub use scanner::ListBudget;

/// Test helper: every event of a reader as its `Debug` text, or the first error's message.
#[cfg(test)]
macro_rules! debug_events {
    ($reader:expr) => {{
        let mut reader = $reader;
        let mut out = Vec::new();
        loop {
            match reader.next_event() {
                Ok(None) => break Ok::<Vec<String>, String>(out),
                Ok(Some(event)) => out.push(format!("{event:?}")),
                Err(e) => break Err(e.to_string()),
            }
        }
    }};
}
#[cfg(test)]
use debug_events;
