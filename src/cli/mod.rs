//! The `grundy` client: reads judge files, turns each test case into one `Evaluate` stream
//! (the graph, then the queries in batches) and prints the judge's output as verdicts arrive.
//!
//! Three threads cooperate so that no stage waits for another's I/O: a parser thread reads
//! the input and builds request messages (sending what it has before any read that may
//! block), the async runtime drives the RPCs (and, without `--server`, hosts the embedded
//! server), and a writer thread owns stdout. A few test cases' streams run at once; their
//! outputs are written in input order, and the first error in input order ends the run after
//! everything before it was printed.
//!
//! What lives where (shared types in files of their own; children never import this file):
//! - `args`: the flags of `judge` ([`JudgeArgs`], [`JudgeFormat`], [`Progress`]);
//! - `error`: `RunError`, the exit codes, a server status in words;
//! - `run`: the input file and the async runtime every command uses;
//! - `judge`: one run of `judge`, wired: parser thread, dispatcher, in-order writer;
//! - `input`: the parser thread and the batching of queries into requests; `graphs`: the
//!   test case's graph from the parser's events (the one conversion, also for `render`);
//! - `dispatch`: a stream per test case, and the in-order writer loop; `case_output`: what a
//!   case hands to the writer;
//! - `case`: one test case's stream, resumed on failure; `attempt`: one try of it; `retry`:
//!   which failures are retried; `replay`: the batches not yet answered (graphs too large
//!   for one message go through `PutGraph` with `crate::client::put_graph`);
//! - `endpoints`: the servers (or the embedded one, `embedded`);
//! - `verdicts`, `output`: verdicts to judge lines, stdout, progress; `analysis_lines`:
//!   the JSON lines of `analyse`, with the positions kept in `query_log`;
//! - `render`, `play`: the `render` and `play` commands.

mod analysis_lines;
mod args;
mod attempt;
mod case;
mod case_output;
mod dispatch;
mod embedded;
mod endpoints;
mod error;
mod graphs;
mod input;
mod judge;
mod output;
mod play;
mod query_log;
mod render;
mod replay;
mod retry;
mod run;
mod verdicts;

pub use args::{AnalyseArgs, InputArgs, JudgeArgs, JudgeFormat, Progress};
pub use error::{EXIT_BAD_INPUT, EXIT_FAILURE};
pub use judge::{run_analyse, run_judge};
pub use output::{stderr_line, stderr_text};
pub use play::{PlayArgs, run_play};
pub use render::{ImageFormat, RenderArgs, ServerChoice, run_render};
