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
//! What lives where:
//! - this module: the options ([`JudgeArgs`]), exit codes, errors, [`run_judge`] and the
//!   wiring of one run;
//! - `dispatch`: the dispatcher that starts a stream per test case, and the in-order writer
//!   loop;
//! - `case`: one test case's `Evaluate` stream (`Case`);
//! - `input`: the parser thread (`parse_input`) and the batching of queries into requests;
//! - `output`: the stdout writer thread, the progress report and the judge-line formatting;
//! - `embedded`: the in-process server used without `--server`.

mod attempt;
mod case;
mod dispatch;
mod embedded;
mod endpoints;
mod input;
mod output;
mod play;
mod render;
mod replay;
mod retry;
mod upload;
mod verdicts;

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::client::{ClientError, ConnectionArgs};
use crate::service::config::DEFAULT_MAX_MESSAGE_BYTES;

use dispatch::{Dispatcher, write_in_order};
use embedded::EmbeddedServer;
use endpoints::Endpoints;
use input::{batch_limit_bytes, parse_input};
use output::{Output, ProgressReport};

pub use play::{PlayArgs, run_play};
pub use render::{ImageFormat, RenderArgs, ServerChoice, run_render};

/// Exit code for malformed input.
pub(crate) const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for every other failure (server unreachable, server error, I/O).
pub const EXIT_FAILURE: u8 = 1;

/// Which judge format to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum JudgeFormat {
    /// "A Chess Game" (POJ 2425): token sliding, prints WIN / LOSE (DRAW on cyclic graphs).
    Chess,
    /// Addition-Subtraction Game (LA 4411 / UVa 12163): prints Game#g: / Round#r: lines.
    Addsub,
}

/// When to show progress on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Progress {
    /// Only when stderr is a terminal.
    Auto,
    /// Even when stderr is a file or a pipe.
    Always,
    /// Never.
    Never,
}

/// Options of `grundy judge`.
#[derive(Debug, Clone, clap::Args)]
pub struct JudgeArgs {
    /// Judge input format.
    #[arg(value_enum)]
    pub format: JudgeFormat,
    /// Judge input file; standard input when absent or "-".
    pub file: Option<PathBuf>,
    /// URL of a running grundy-server (e.g. http://127.0.0.1:50051), or several
    /// comma-separated: test cases are spread over them, and a stream that breaks is resumed
    /// on the next one. Without it, a server is started in-process on a loopback port and
    /// used over real gRPC.
    #[arg(long, env = "GRUNDY_SERVER")]
    pub server: Option<String>,
    /// How many times in a row a test case's stream is resumed after a lost connection or an
    /// UNAVAILABLE answer (capped exponential backoff from 100 ms to 2 s), before the run
    /// fails (exit 1).
    #[arg(long, env = "GRUNDY_RETRIES", default_value_t = retry::DEFAULT_RETRIES)]
    pub retries: u32,
    /// Append the winning move to each winning line (and a draw-keeping move to DRAW lines).
    /// Output is then no longer judge-exact.
    #[arg(long)]
    pub explain: bool,
    /// Queries per request message.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    pub batch_size: u32,
    /// A line on stderr per test case: time to parse its graph, to upload it (PutGraph, for
    /// graphs larger than one message), to open its stream, and to answer its queries.
    #[arg(long)]
    pub timings: bool,
    /// Progress (test cases, queries, rate) on stderr.
    #[arg(long, value_enum, default_value = "auto")]
    pub progress: Progress,
    /// Largest gRPC message sent or received, in bytes. Query batches are cut well under it;
    /// a graph too large for one message is uploaded with PutGraph in chunks and evaluated by
    /// id; a single query that cannot fit in one message is an error (exit 1).
    #[arg(long, default_value_t = DEFAULT_MAX_MESSAGE_BYTES)]
    pub max_message_bytes: usize,
    /// TLS and authentication for --server (ignored without it: the embedded server is
    /// plaintext on loopback).
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// What ended a judge run early. Each is printed as one `error: ...` line.
#[derive(Debug, thiserror::Error)]
enum RunError {
    /// Malformed input (or a graph the server rejects as invalid): exit 2.
    #[error("{0}")]
    BadInput(String),
    /// Anything else that is not the input's fault: exit 1.
    #[error("{0}")]
    Failure(String),
    /// Connecting to `--server` failed (URL, TLS or token files, or unreachable): exit 1.
    #[error(transparent)]
    Connect(#[from] ClientError),
    /// The embedded server could not listen: exit 1.
    #[error("cannot start the embedded server: {0}")]
    EmbeddedServer(std::io::Error),
    /// Stdout was closed by its reader: not an error, just stop.
    #[error("output closed")]
    OutputClosed,
}

impl RunError {
    fn exit_code(&self) -> u8 {
        match self {
            Self::BadInput(_) => EXIT_BAD_INPUT,
            Self::Failure(_) | Self::Connect(_) | Self::EmbeddedServer(_) => EXIT_FAILURE,
            Self::OutputClosed => 0,
        }
    }
}

/// Runs `grundy judge`; returns the process exit code. Errors are printed to stderr.
pub fn run_judge(args: JudgeArgs) -> u8 {
    run_async(judge(args))
}

/// Runs a command on a new async runtime; returns its exit code, printing its error.
fn run_async(command: impl std::future::Future<Output = Result<(), RunError>>) -> u8 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return EXIT_FAILURE;
        }
    };
    match runtime.block_on(command) {
        Ok(()) => 0,
        Err(RunError::OutputClosed) => 0,
        Err(error) => {
            eprintln!("error: {error}");
            error.exit_code()
        }
    }
}

async fn judge(args: JudgeArgs) -> Result<(), RunError> {
    let input = open_input(args.file.as_ref())?;
    let endpoints = match &args.server {
        Some(servers) => {
            Endpoints::connect(servers, &args.connection, args.max_message_bytes).await?
        }
        // The embedded server is plaintext on loopback: TLS and token settings (often
        // inherited from GRUNDY_* variables) are only for --server.
        None => Endpoints::embedded(args.max_message_bytes).await?,
    };

    let (event_tx, events) = mpsc::channel(16);
    let parser_args = args.clone();
    let parser = std::thread::Builder::new()
        .name("grundy-parser".into())
        .spawn(move || parse_input(parser_args, input, event_tx))
        .map_err(|e| RunError::Failure(format!("cannot start the parser thread: {e}")))?;
    let mut output = Output::spawn()?;
    let progress = ProgressReport::start(args.progress);

    let (slot_tx, slots) = mpsc::unbounded_channel();
    let dispatcher = Dispatcher {
        endpoints: Arc::new(endpoints),
        format: args.format,
        progress: progress.counters(),
        slots: slot_tx,
        retries: args.retries,
        batch_bytes: batch_limit_bytes(args.max_message_bytes),
        timings: args.timings,
    };
    let result = {
        let dispatched = dispatcher.run(events, parser);
        let written = write_in_order(slots, &mut output);
        tokio::pin!(dispatched, written);
        // The writer stops at the first error in input order; the dispatcher (perhaps waiting
        // for input) is then dropped, and with it the events channel, which stops the parser.
        tokio::select! {
            result = &mut written => result,
            () = &mut dispatched => written.await,
        }
    };
    progress.finish();
    let flushed = output.finish();
    result.and(flushed)
}

fn open_input(file: Option<&PathBuf>) -> Result<Box<dyn Read + Send>, RunError> {
    match file {
        None => Ok(Box::new(std::io::stdin())),
        Some(path) if path.as_os_str() == "-" => Ok(Box::new(std::io::stdin())),
        Some(path) => std::fs::File::open(path)
            .map(|f| Box::new(f) as Box<dyn Read + Send>)
            .map_err(|e| RunError::Failure(format!("cannot open {}: {e}", path.display()))),
    }
}
