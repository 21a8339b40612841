//! Judge formats: streaming parsers that report errors by line and column, and the judge's
//! output lines.

pub mod addsub;
pub mod chess;
pub mod scanner;

pub use scanner::{JudgeError, Location};

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
