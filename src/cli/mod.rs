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
//! - this module: the options ([`JudgeArgs`]), exit codes, [`run_judge`], the dispatcher that
//!   starts a stream per test case and the in-order writer loop, the connection and the
//!   embedded server;
//! - `case`: one test case's `Evaluate` stream (`Case`);
//! - `input`: the parser thread (`parse_input`) and the batching of queries into requests;
//! - `output`: the stdout writer thread, the progress report and the judge-line formatting.

mod case;
mod input;
mod output;
mod play;
mod render;

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::client::{self, ConnectionArgs, GrundyClient};
use crate::engine::graph::MAX_EDGES;
use crate::service::config::DEFAULT_MAX_MESSAGE_BYTES;
use crate::service::{self as server, ServerConfig, ServiceConfig};

use case::{Case, CaseOutput};
use input::{InputEvent, parse_input};
use output::{Output, ProgressCounters, ProgressReport};

pub use play::{PlayArgs, run_play};
pub use render::{ImageFormat, RenderArgs, ServerChoice, run_render};

/// Exit code for malformed input.
pub const EXIT_BAD_INPUT: u8 = 2;
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
    Always,
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
    /// URL of a running grundy-server (e.g. http://127.0.0.1:50051). Without it, a server is
    /// started in-process on a loopback port and used over real gRPC.
    #[arg(long, env = "GRUNDY_SERVER")]
    pub server: Option<String>,
    /// Append the winning move to each winning line (and a draw-keeping move to DRAW lines).
    /// Output is then no longer judge-exact.
    #[arg(long)]
    pub explain: bool,
    /// Queries per request message.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    pub batch_size: u32,
    /// Progress (test cases, queries, rate) on stderr.
    #[arg(long, value_enum, default_value = "auto")]
    pub progress: Progress,
    /// Largest gRPC message sent or received, in bytes. Query batches are cut well under it;
    /// a graph or a single query that cannot fit in one message is an error (exit 1).
    #[arg(long, default_value_t = DEFAULT_MAX_MESSAGE_BYTES)]
    pub max_message_bytes: usize,
    /// TLS and authentication for --server (ignored without it: the embedded server is
    /// plaintext on loopback).
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// What ended a judge run early.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error("{0}")]
    BadInput(String),
    #[error("{0}")]
    Failure(String),
    /// Stdout was closed by its reader: not an error, just stop.
    #[error("output closed")]
    OutputClosed,
}

impl RunError {
    fn exit_code(&self) -> u8 {
        match self {
            Self::BadInput(_) => EXIT_BAD_INPUT,
            Self::Failure(_) => EXIT_FAILURE,
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

/// Test cases whose streams run at once. Many small test cases are bound by round trips, not
/// by work: a few streams in flight hide them. Their output is still written in input order.
const CASES_IN_FLIGHT: usize = 8;

async fn judge(args: JudgeArgs) -> Result<(), RunError> {
    let input = open_input(args.file.as_ref())?;
    let (url, connection, _embedded) = match &args.server {
        Some(url) => (url.clone(), args.connection.clone(), None),
        // The embedded server is plaintext on loopback: TLS and token settings (often
        // inherited from GRUNDY_* variables) are only for --server.
        None => {
            let server = EmbeddedServer::start(args.max_message_bytes).await?;
            (server.url.clone(), ConnectionArgs::default(), Some(server))
        }
    };
    let client = connect(&url, &connection, args.max_message_bytes).await?;

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
        client,
        format: args.format,
        progress: progress.counters(),
        slots: slot_tx,
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

/// What the writer prints next, in input order.
enum Slot {
    /// A test case's output, as its stream produces it.
    Case {
        label: String,
        chunks: mpsc::Receiver<CaseOutput>,
    },
    /// The run fails here (malformed input between test cases, a parser failure).
    Error(RunError),
}

/// Reads the parser's events and starts a stream per test case, up to [`CASES_IN_FLIGHT`] at
/// once, queueing their outputs for the writer in input order.
struct Dispatcher {
    client: GrundyClient,
    format: JudgeFormat,
    progress: Arc<ProgressCounters>,
    slots: mpsc::UnboundedSender<Slot>,
}

impl Dispatcher {
    async fn run(
        self,
        mut events: mpsc::Receiver<InputEvent>,
        parser: std::thread::JoinHandle<()>,
    ) {
        let permits = Arc::new(tokio::sync::Semaphore::new(CASES_IN_FLIGHT));
        loop {
            let Some(event) = events.recv().await else {
                // The parser dropped its sender: it returned or panicked.
                if let Err(error) = join_parser(parser, false) {
                    let _ = self.slots.send(Slot::Error(error));
                }
                return;
            };
            let (number, label, start) = match event {
                InputEvent::Start {
                    number,
                    label,
                    start,
                } => (number, label, start),
                InputEvent::Error(error) => {
                    let _ = self.slots.send(Slot::Error(error));
                    return;
                }
                InputEvent::Queries(_) | InputEvent::End => {
                    let error =
                        RunError::Failure("internal error: queries outside a test case".into());
                    let _ = self.slots.send(Slot::Error(error));
                    return;
                }
            };
            let Ok(permit) = permits.clone().acquire_owned().await else {
                return; // never closed
            };
            let (case_events, case_receiver) = mpsc::channel(16);
            let (chunks, chunk_receiver) = mpsc::channel(64);
            let slot = Slot::Case {
                label: label.clone(),
                chunks: chunk_receiver,
            };
            if self.slots.send(slot).is_err() {
                return; // the writer stopped
            }
            let case = Case {
                client: self.client.clone(),
                number,
                label,
                format: self.format,
                progress: self.progress.clone(),
            };
            tokio::spawn(async move {
                let _permit = permit;
                case.run(start, case_receiver, chunks).await;
            });
            // The case's queries, up to its end.
            loop {
                let Some(event) = events.recv().await else {
                    // The parser stopped inside the test case: a failure, never a clean end.
                    let error = join_parser(parser, true)
                        .expect_err("an end inside a test case is an error");
                    let _ = case_events.send(InputEvent::Error(error)).await;
                    return;
                };
                let last = matches!(event, InputEvent::End);
                let stop = matches!(event, InputEvent::Error(_) | InputEvent::Start { .. });
                if case_events.send(event).await.is_err() || stop {
                    // The case failed (it reports why), or the input did.
                    return;
                }
                if last {
                    break;
                }
            }
        }
    }
}

/// Writes the test cases' outputs in input order and stops at the first error.
async fn write_in_order(
    mut slots: mpsc::UnboundedReceiver<Slot>,
    output: &mut Output,
) -> Result<(), RunError> {
    while let Some(slot) = slots.recv().await {
        let (label, mut chunks) = match slot {
            Slot::Case { label, chunks } => (label, chunks),
            Slot::Error(error) => return Err(error),
        };
        loop {
            match chunks.recv().await {
                Some(CaseOutput::Text(text)) => output.send(text)?,
                Some(CaseOutput::Done) => break,
                Some(CaseOutput::Failed(error)) => return Err(error),
                None => {
                    return Err(RunError::Failure(format!(
                        "internal error: {label} stopped without finishing"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Why the parser thread's events ended: a panic is a failure, and so is an end inside a
/// test case (`inside_case`), never a clean end with truncated output. Call it only once the
/// event channel is closed (the thread is then finishing).
fn join_parser(parser: std::thread::JoinHandle<()>, inside_case: bool) -> Result<(), RunError> {
    match parser.join() {
        Err(panic) => {
            let reason = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown cause".into());
            Err(RunError::Failure(format!(
                "internal error: the input parser panicked: {reason}"
            )))
        }
        Ok(()) if inside_case => Err(RunError::Failure(
            "internal error: the input parser stopped inside a test case".into(),
        )),
        Ok(()) => Ok(()),
    }
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

async fn connect(
    url: &str,
    connection: &ConnectionArgs,
    max_message_bytes: usize,
) -> Result<GrundyClient, RunError> {
    client::connect(url, connection, max_message_bytes)
        .await
        .map_err(RunError::Failure)
}

/// The in-process server used without `--server`; stops when dropped.
struct EmbeddedServer {
    url: String,
    _shutdown: oneshot::Sender<()>,
}

impl EmbeddedServer {
    async fn start(max_message_bytes: usize) -> Result<Self, RunError> {
        let address = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        Self::start_with(address, embedded_config(max_message_bytes)).await
    }

    async fn start_with(
        address: std::net::SocketAddr,
        config: ServerConfig,
    ) -> Result<Self, RunError> {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|e| RunError::Failure(format!("cannot start the embedded server: {e}")))?;
        let address = listener
            .local_addr()
            .map_err(|e| RunError::Failure(format!("cannot start the embedded server: {e}")))?;
        let (shutdown, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let stop = async {
                let _ = stopped.await;
            };
            if let Err(e) = server::run(listener, config, stop).await {
                tracing::error!("embedded server failed: {e}");
            }
        });
        Ok(Self {
            url: format!("http://{address}"),
            _shutdown: shutdown,
        })
    }
}

/// The embedded server serves this one run: no table cache (each test case's table is
/// dropped once its stream ends, so memory does not grow with the number of test cases) and
/// the engine's own maxima instead of a shared server's limits. Only the user's
/// `--max-message-bytes` applies.
fn embedded_config(max_message_bytes: usize) -> ServerConfig {
    ServerConfig {
        service: ServiceConfig {
            cache_bytes: 0,
            max_vertices: u32::MAX,
            max_edges: MAX_EDGES,
            max_queries_per_stream: u64::MAX,
            ..ServiceConfig::default()
        },
        max_message_bytes,
        ..ServerConfig::default()
    }
}

/// The embedded server of `render` and `play`: as [`embedded_config`], plus a small table
/// cache, since they register the graph (`PutGraph`) and read its values (`GetValues`).
fn viewer_config(max_message_bytes: usize) -> ServerConfig {
    const VIEWER_CACHE_BYTES: usize = 256 << 20;
    let mut config = embedded_config(max_message_bytes);
    config.service.cache_bytes = VIEWER_CACHE_BYTES;
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_server_caches_nothing_and_has_only_the_engines_limits() {
        let config = embedded_config(12345);
        assert_eq!(config.max_message_bytes, 12345);
        assert_eq!(config.service.cache_bytes, 0);
        assert_eq!(config.service.max_vertices, u32::MAX);
        assert_eq!(config.service.max_edges, u64::from(u32::MAX));
        assert_eq!(config.service.max_queries_per_stream, u64::MAX);
    }

    #[test]
    fn a_parser_that_panics_fails_the_run() {
        let parser = std::thread::spawn(|| panic!("bad state"));
        let error = join_parser(parser, false).unwrap_err();
        assert_eq!(error.exit_code(), EXIT_FAILURE);
        assert!(error.to_string().contains("bad state"), "{error}");

        let parser = std::thread::spawn(|| {});
        let error = join_parser(parser, true).unwrap_err();
        assert_eq!(error.exit_code(), EXIT_FAILURE);
        assert!(join_parser(std::thread::spawn(|| {}), false).is_ok());
    }
}
