//! Judge formats: streaming parsers that report errors by line and column, and the judge's
//! output lines.

pub mod addsub;
pub mod chess;
pub mod scanner;

pub use scanner::{JudgeError, Location};
