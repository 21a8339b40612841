//! The `grundy` client: reads judge files, turns each test case into one `Evaluate` stream
//! (the graph, then the queries in batches) and prints the judge's output as verdicts arrive.
//!
//! Three threads cooperate so that no stage waits for another's I/O: a parser thread reads
//! the input and builds request messages (sending what it has before any read that may
//! block), the async runtime drives the RPCs (and, without `--server`, hosts the embedded
//! server), and a writer thread owns stdout. A few test cases' streams run at once; their
//! outputs are written in input order, and the first error in input order ends the run after
//! everything before it was printed.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use prost::Message;
use prost::encoding::encoded_len_varint;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Status};

use crate::client::{self, ConnectionArgs, GrundyClient};
use crate::engine::Digraph;
use crate::engine::graph::MAX_EDGES;
use crate::judge::addsub::{AddsubEvent, AddsubReader};
use crate::judge::chess::{ChessEvent, ChessReader};
use crate::judge::{JudgeError, Location};
use crate::proto::{
    self, EvaluateRequest, EvaluateStart, Outcome, QueryBatch, Verdict, evaluate_request::Payload,
    evaluate_start::GraphSource,
};
use crate::server::{self, DEFAULT_MAX_MESSAGE_BYTES, ServerConfig};
use crate::service::ServiceConfig;

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
    match runtime.block_on(judge(args)) {
        Ok(()) => 0,
        Err(RunError::OutputClosed) => 0,
        Err(error) => {
            eprintln!("error: {error}");
            error.exit_code()
        }
    }
}

/// A unit of work from the parser thread.
enum InputEvent {
    /// A new test case: its number, a label for messages, and the stream's first message.
    Start {
        number: u64,
        label: String,
        start: EvaluateStart,
    },
    /// Queries of the current test case (ids still to be assigned).
    Queries(QueryBatch),
    /// The current test case is complete.
    End,
    /// The input is malformed (or unreadable, or too large for a message) here; everything
    /// before it was sent.
    Error(RunError),
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

fn judge_error(error: JudgeError) -> RunError {
    match error {
        JudgeError::Syntax { .. } => RunError::BadInput(error.to_string()),
        JudgeError::Io(_) => RunError::Failure(error.to_string()),
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
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| RunError::Failure(format!("cannot start the embedded server: {e}")))?;
        let address = listener
            .local_addr()
            .map_err(|e| RunError::Failure(format!("cannot start the embedded server: {e}")))?;
        let (shutdown, stopped) = oneshot::channel::<()>();
        let config = embedded_config(max_message_bytes);
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

/// One test case: one `Evaluate` stream.
struct Case {
    client: GrundyClient,
    /// 1-based test case (or game) number.
    number: u64,
    label: String,
    format: JudgeFormat,
    progress: Arc<ProgressCounters>,
}

/// What a test case hands to the in-order writer.
enum CaseOutput {
    /// Judge output of the case, in order.
    Text(Vec<u8>),
    /// The case is complete.
    Done,
    /// The case ended with this error, after the text before it.
    Failed(RunError),
}

impl Case {
    /// Streams the case's events (up to its `End`) to the server and its output to `chunks`,
    /// which always ends with `Done` or `Failed` (unless the writer is gone).
    async fn run(
        mut self,
        start: EvaluateStart,
        mut events: mpsc::Receiver<InputEvent>,
        chunks: mpsc::Sender<CaseOutput>,
    ) {
        let last = match self.stream(start, &mut events, &chunks).await {
            Ok(None) => CaseOutput::Done,
            Ok(Some(error)) | Err(error) => CaseOutput::Failed(error),
        };
        let _ = chunks.send(last).await;
    }

    /// Returns `Some(error)` when the input turned out malformed inside this case (after
    /// sending every verdict before it).
    async fn stream(
        &mut self,
        start: EvaluateStart,
        events: &mut mpsc::Receiver<InputEvent>,
        output: &mpsc::Sender<CaseOutput>,
    ) -> Result<Option<RunError>, RunError> {
        let explain = start.explain;
        let (request_tx, request_rx) = mpsc::channel(4);
        let first = EvaluateRequest {
            payload: Some(Payload::Start(start)),
        };
        request_tx
            .send(first)
            .await
            .map_err(|_| RunError::Failure("request stream closed".into()))?;
        let mut responses = self
            .client
            .evaluate(ReceiverStream::new(request_rx))
            .await
            .map_err(|status| self.graph_rejected(status))?
            .into_inner();

        send_text(output, case_header(self.format, self.number)).await?;

        // Query ids count from 0 within the case; the verdicts must come back in that order.
        let mut sent = 0u64;
        let forward = async {
            let input_error = loop {
                // The parser ends every test case with `End` (or `Error`); a closed channel
                // here means it stopped abnormally.
                let Some(event) = events.recv().await else {
                    break Some(RunError::Failure(
                        "internal error: the input stopped inside a test case".into(),
                    ));
                };
                match event {
                    InputEvent::Queries(mut batch) => {
                        // The server answers `queries` first, then `packed_tokens`.
                        for query in &mut batch.queries {
                            query.id = sent;
                            sent += 1;
                        }
                        if let Some(packed) = &mut batch.packed_tokens {
                            packed.first_id = sent;
                            sent += packed.token_counts.len() as u64;
                        }
                        let batch = EvaluateRequest {
                            payload: Some(Payload::Queries(batch)),
                        };
                        if request_tx.send(batch).await.is_err() {
                            break None; // the call failed; the response side reports why
                        }
                    }
                    InputEvent::End => break None,
                    InputEvent::Error(error) => break Some(error),
                    InputEvent::Start { .. } => {
                        break Some(RunError::Failure(
                            "internal error: a test case started inside another".into(),
                        ));
                    }
                }
            };
            drop(request_tx); // half-close: the server answers what it has and ends the stream
            Ok::<_, RunError>(input_error)
        };
        let mut received = 0u64;
        let format = self.format;
        let progress = &self.progress;
        let receive = async {
            let mut text = Vec::with_capacity(64 * 1024);
            while let Some(response) = responses.message().await.map_err(|status| {
                RunError::Failure(format!("{}: {}", self.label, describe(&status)))
            })? {
                text.clear();
                let out_of_order = |id: u64, expected: u64| {
                    RunError::Failure(format!(
                        "{}: verdict for query {id} arrived where query {expected} was expected",
                        self.label
                    ))
                };
                let before = received;
                for verdict in &response.verdicts {
                    if verdict.query_id != received {
                        return Err(out_of_order(verdict.query_id, received));
                    }
                    received += 1;
                    format_verdict(format, explain, received, verdict, &mut text).map_err(
                        |message| RunError::Failure(format!("{}: {message}", self.label)),
                    )?;
                }
                if let Some(packed) = &response.packed_verdicts {
                    if packed.first_query_id != received {
                        return Err(out_of_order(packed.first_query_id, received));
                    }
                    if let Some(error) = packed.errors.first().and_then(|e| e.error.as_ref()) {
                        return Err(RunError::Failure(format!(
                            "{}: query rejected: {}: {}",
                            self.label, error.field, error.message
                        )));
                    }
                    for &outcome in &packed.outcomes {
                        received += 1;
                        let outcome = Outcome::try_from(outcome).unwrap_or(Outcome::Unspecified);
                        format_outcome(format, received, outcome, &mut text).map_err(
                            |message| RunError::Failure(format!("{}: {message}", self.label)),
                        )?;
                        text.push(b'\n');
                    }
                }
                progress
                    .queries
                    .fetch_add(received - before, Ordering::Relaxed);
                if !text.is_empty() {
                    let chunk = std::mem::replace(&mut text, Vec::with_capacity(64 * 1024));
                    send_text(output, chunk).await?;
                }
            }
            Ok(())
        };
        let (input_error, ()) = tokio::try_join!(forward, receive)?;
        if received != sent {
            return Err(RunError::Failure(format!(
                "{}: the server answered {received} of {sent} queries",
                self.label
            )));
        }
        self.progress.cases.fetch_add(1, Ordering::Relaxed);
        if input_error.is_none() {
            send_text(output, case_footer(self.format)).await?;
        }
        Ok(input_error)
    }

    fn graph_rejected(&self, status: Status) -> RunError {
        let message = format!("{}: {}", self.label, describe(&status));
        match status.code() {
            Code::InvalidArgument => RunError::BadInput(message),
            _ => RunError::Failure(message),
        }
    }
}

/// Hands `text` to the in-order writer; fails quietly when the writer has stopped.
async fn send_text(output: &mpsc::Sender<CaseOutput>, text: Vec<u8>) -> Result<(), RunError> {
    if text.is_empty() {
        return Ok(());
    }
    output
        .send(CaseOutput::Text(text))
        .await
        .map_err(|_| RunError::OutputClosed)
}

fn describe(status: &Status) -> String {
    match status.code() {
        Code::InvalidArgument => format!("rejected by the server: {}", status.message()),
        Code::ResourceExhausted => format!("over a server limit: {}", status.message()),
        Code::Unavailable => format!("server unavailable: {}", status.message()),
        code => format!("server error ({code:?}): {}", status.message()),
    }
}

fn case_header(format: JudgeFormat, number: u64) -> Vec<u8> {
    match format {
        JudgeFormat::Chess => Vec::new(),
        JudgeFormat::Addsub => format!("Game#{number}:\n").into_bytes(),
    }
}

fn case_footer(format: JudgeFormat) -> Vec<u8> {
    match format {
        JudgeFormat::Chess => Vec::new(),
        JudgeFormat::Addsub => b"\n".to_vec(),
    }
}

/// Appends the judge's line for one verdict. `round` is the 1-based query number in the case.
fn format_verdict(
    format: JudgeFormat,
    explain: bool,
    round: u64,
    verdict: &Verdict,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    if let Some(error) = &verdict.error {
        return Err(format!(
            "query {round} rejected: {}: {}",
            error.field, error.message
        ));
    }
    format_outcome(format, round, verdict.outcome(), out)?;
    if explain && let Some(move_) = verdict.r#move.as_ref().and_then(|m| m.kind.as_ref()) {
        write_move(move_, out);
    }
    out.push(b'\n');
    Ok(())
}

/// Appends `WIN` (chess) or `Round#r: WINNING` (addsub), without the newline.
fn format_outcome(
    format: JudgeFormat,
    round: u64,
    outcome: Outcome,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let word = match (format, outcome) {
        (JudgeFormat::Chess, Outcome::Win) => "WIN",
        (JudgeFormat::Chess, Outcome::Lose) => "LOSE",
        (JudgeFormat::Chess, Outcome::Draw) => "DRAW",
        (JudgeFormat::Addsub, Outcome::Win) => "WINNING",
        (JudgeFormat::Addsub, Outcome::Lose) => "LOSING",
        (JudgeFormat::Addsub, Outcome::Draw) => "DRAWING",
        (_, Outcome::Unspecified) => return Err(format!("query {round}: no outcome")),
    };
    if format == JudgeFormat::Addsub {
        let _ = write!(out, "Round#{round}: ");
    }
    out.extend_from_slice(word.as_bytes());
    Ok(())
}

/// Picks beyond this many are summarised as `w*count` instead of listed one by one.
const MAX_LISTED_PICKS: u64 = 1000;

fn write_move(move_: &proto::r#move::Kind, out: &mut Vec<u8>) {
    use proto::r#move::Kind;
    match move_ {
        Kind::Token(token) => {
            let _ = write!(out, " move {} -> {}", token.from, token.to);
        }
        Kind::Split(split) => {
            let _ = write!(out, " move {} ->", split.vertex);
            // All K picks in increasing vertex order: the pairs join the pair target's place,
            // merged with its odd pick when it has one (one run `w*count`, not two).
            let mut pair_picks = 2 * u64::from(split.pair_count);
            for &target in &split.odd_targets {
                if pair_picks > 0 && split.pair_target <= target {
                    if split.pair_target == target {
                        write_picks(target, pair_picks + 1, out);
                        pair_picks = 0;
                        continue;
                    }
                    write_picks(split.pair_target, pair_picks, out);
                    pair_picks = 0;
                }
                write_picks(target, 1, out);
            }
            if pair_picks > 0 {
                write_picks(split.pair_target, pair_picks, out);
            }
        }
    }
}

/// ` w` `picks` times, or ` w*picks` for a long run.
fn write_picks(target: u32, picks: u64, out: &mut Vec<u8>) {
    if picks > MAX_LISTED_PICKS {
        let _ = write!(out, " {target}*{picks}");
    } else {
        for _ in 0..picks {
            let _ = write!(out, " {target}");
        }
    }
}

/// Parser thread: reads the judge file and sends request-ready events.
fn parse_input(args: JudgeArgs, input: Box<dyn Read + Send>, events: mpsc::Sender<InputEvent>) {
    let mut batcher = Batcher::new(&events, &args);
    let result = match args.format {
        JudgeFormat::Chess => parse_cases(&mut ChessReader::new(input), &mut batcher),
        JudgeFormat::Addsub => parse_cases(
            &mut AddsubCases {
                reader: AddsubReader::new(input),
                odd_vertices: Vec::new(),
            },
            &mut batcher,
        ),
    };
    let error = match result {
        Ok(()) | Err(ParseStop::Closed) => return,
        Err(ParseStop::Input(error)) => judge_error(error),
        Err(ParseStop::TooLarge(message)) => RunError::Failure(message),
    };
    let _ = events.blocking_send(InputEvent::Error(error));
}

/// Why the parser thread stopped early.
enum ParseStop {
    Input(JudgeError),
    /// A graph or query does not fit in one message under `--max-message-bytes`.
    TooLarge(String),
    /// The consumer is gone (a failure or a closed stdout): nothing more to do.
    Closed,
}

impl From<JudgeError> for ParseStop {
    fn from(error: JudgeError) -> Self {
        Self::Input(error)
    }
}

/// A judge format's reader, as the parser loop drives it.
trait CaseSource {
    /// Reads the next event and hands it to `batcher`; false at the clean end of the input.
    fn step(&mut self, batcher: &mut Batcher) -> Result<bool, ParseStop>;
    /// Whether the next event can start without waiting for the input (see
    /// [`crate::judge::scanner::Scanner::has_buffered_input`]).
    fn has_buffered_input(&mut self) -> bool;
}

/// The loop shared by the formats. Pending queries are sent before any read that may block,
/// so a program that writes a query and waits for its answer gets it.
fn parse_cases(source: &mut impl CaseSource, batcher: &mut Batcher) -> Result<(), ParseStop> {
    loop {
        if !source.has_buffered_input() {
            batcher.flush()?;
        }
        match source.step(batcher) {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(ParseStop::Closed) => return Err(ParseStop::Closed),
            // Everything parsed before the error is still sent, so its verdicts are printed.
            Err(stop) => return Err(batcher.flush_then(stop)),
        }
    }
}

impl<R: Read> CaseSource for ChessReader<R> {
    fn step(&mut self, batcher: &mut Batcher) -> Result<bool, ParseStop> {
        let Some(event) = self.next_event()? else {
            return Ok(false);
        };
        match event {
            ChessEvent::Graph {
                case,
                location,
                vertex_count,
                out_degrees,
                targets,
            } => {
                let graph = proto::Graph {
                    vertex_count,
                    out_degrees,
                    targets,
                    split_counts: Vec::new(),
                };
                batcher.start_case(case, case_label("test case", case, location), graph)?;
            }
            ChessEvent::Query(tokens) => batcher.push_tokens(tokens)?,
            ChessEvent::EndOfCase => batcher.end_case()?,
        }
        Ok(true)
    }

    fn has_buffered_input(&mut self) -> bool {
        ChessReader::has_buffered_input(self)
    }
}

/// The addsub reader with the scratch list of a round's odd vertices.
struct AddsubCases<R> {
    reader: AddsubReader<R>,
    odd_vertices: Vec<u32>,
}

impl<R: Read> CaseSource for AddsubCases<R> {
    fn step(&mut self, batcher: &mut Batcher) -> Result<bool, ParseStop> {
        let Some(event) = self.reader.next_event()? else {
            return Ok(false);
        };
        match event {
            AddsubEvent::Game {
                game,
                location,
                vertex_count,
                edges,
                split_counts,
                rounds: _,
            } => {
                let graph = graph_from_edges(vertex_count, &edges, split_counts);
                batcher.start_case(game, case_label("game", game, location), graph)?;
            }
            AddsubEvent::Round(values) => {
                // Only parity matters (two units on a vertex cancel, and the game is acyclic),
                // so a round is the token query "one unit on each odd vertex": it travels in
                // the packed columnar form like chess queries.
                self.odd_vertices.clear();
                self.odd_vertices.extend(
                    values
                        .iter()
                        .enumerate()
                        .filter(|&(_, value)| value & 1 == 1)
                        .map(|(vertex, _)| vertex as u32),
                );
                batcher.push_tokens(&self.odd_vertices)?;
            }
            AddsubEvent::EndOfGame => batcher.end_case()?,
        }
        Ok(true)
    }

    fn has_buffered_input(&mut self) -> bool {
        self.reader.has_buffered_input()
    }
}

/// Bytes a request message takes beyond its packed lists: tags, lengths and `first_id`.
const MESSAGE_OVERHEAD_BYTES: usize = 64;
/// Room reserved per query for its verdict in the response (outcome and nim-sum; a move
/// with `--explain`), so that responses stay under the limit too.
const RESPONSE_BYTES_PER_QUERY: usize = 16;
const RESPONSE_BYTES_PER_EXPLAINED_QUERY: usize = 64;
/// Requests are cut at this size even when the message limit is far larger: smaller messages
/// keep the pipeline moving.
const MAX_BATCH_BYTES: usize = 4 << 20;

/// Collects token queries into batches and sends them in the packed (columnar) form: no
/// per-query message to build, encode or decode. A batch is sent when it holds
/// `--batch-size` queries or its encoded size nears the message limit.
struct Batcher<'a> {
    events: &'a mpsc::Sender<InputEvent>,
    explain: bool,
    batch: QueryBatch,
    queries: usize,
    /// Encoded bytes of `batch` (and of the room its verdicts take in the response).
    batch_bytes: usize,
    batch_size: usize,
    /// Size at which a batch is sent: well under the message limit.
    flush_bytes: usize,
    max_message_bytes: usize,
    /// The current test case, for error messages, and its queries so far.
    label: String,
    case_queries: u64,
}

impl<'a> Batcher<'a> {
    fn new(events: &'a mpsc::Sender<InputEvent>, args: &JudgeArgs) -> Self {
        Self {
            events,
            explain: args.explain,
            batch: QueryBatch::default(),
            queries: 0,
            batch_bytes: 0,
            batch_size: args.batch_size as usize,
            flush_bytes: (args.max_message_bytes / 2).min(MAX_BATCH_BYTES),
            max_message_bytes: args.max_message_bytes,
            label: String::new(),
            case_queries: 0,
        }
    }

    fn start_case(
        &mut self,
        number: u64,
        label: String,
        graph: proto::Graph,
    ) -> Result<(), ParseStop> {
        let start = EvaluateStart {
            graph_source: Some(GraphSource::Graph(graph)),
            explain: self.explain,
        };
        let request = EvaluateRequest {
            payload: Some(Payload::Start(start)),
        };
        let bytes = request.encoded_len();
        if bytes > self.max_message_bytes {
            return Err(ParseStop::TooLarge(format!(
                "{label}: the graph takes {bytes} bytes encoded, more than --max-message-bytes \
                 {} allows in one message",
                self.max_message_bytes
            )));
        }
        let Some(Payload::Start(start)) = request.payload else {
            unreachable!("built above");
        };
        self.label.clone_from(&label);
        self.case_queries = 0;
        self.send(InputEvent::Start {
            number,
            label,
            start,
        })
    }

    fn push_tokens(&mut self, tokens: &[u32]) -> Result<(), ParseStop> {
        self.case_queries += 1;
        let request_bytes = encoded_len_varint(tokens.len() as u64)
            + tokens
                .iter()
                .map(|&vertex| encoded_len_varint(u64::from(vertex)))
                .sum::<usize>();
        if request_bytes + MESSAGE_OVERHEAD_BYTES > self.max_message_bytes {
            return Err(ParseStop::TooLarge(format!(
                "{}: query {} takes {} bytes encoded, more than --max-message-bytes {} allows \
                 in one message",
                self.label,
                self.case_queries,
                request_bytes + MESSAGE_OVERHEAD_BYTES,
                self.max_message_bytes
            )));
        }
        let query_bytes = request_bytes
            + if self.explain {
                RESPONSE_BYTES_PER_EXPLAINED_QUERY
            } else {
                RESPONSE_BYTES_PER_QUERY
            };
        if self.queries > 0 && self.batch_bytes + query_bytes > self.flush_bytes {
            self.flush()?;
        }
        let packed = self
            .batch
            .packed_tokens
            .get_or_insert_with(Default::default);
        packed.token_counts.push(tokens.len() as u32);
        packed.vertices.extend_from_slice(tokens);
        self.queries += 1;
        self.batch_bytes += query_bytes;
        if self.queries >= self.batch_size || self.batch_bytes >= self.flush_bytes {
            self.flush()?;
        }
        Ok(())
    }

    fn end_case(&mut self) -> Result<(), ParseStop> {
        self.flush()?;
        self.send(InputEvent::End)
    }

    fn send(&self, event: InputEvent) -> Result<(), ParseStop> {
        self.events
            .blocking_send(event)
            .map_err(|_| ParseStop::Closed)
    }

    fn flush(&mut self) -> Result<(), ParseStop> {
        if self.queries == 0 {
            return Ok(());
        }
        self.queries = 0;
        self.batch_bytes = 0;
        let batch = std::mem::take(&mut self.batch);
        self.send(InputEvent::Queries(batch))
    }

    /// Sends what was parsed before an input error, so its verdicts are still printed.
    fn flush_then(&mut self, stop: ParseStop) -> ParseStop {
        match self.flush() {
            Ok(()) => stop,
            Err(closed) => closed,
        }
    }
}

fn case_label(kind: &str, number: u64, location: Location) -> String {
    format!("{kind} {number} (line {})", location.line)
}

/// Wire graph from an edge list (validated by the parser: endpoints in range), in the CSR
/// form the engine builds.
fn graph_from_edges(
    vertex_count: u32,
    edges: &[(u32, u32)],
    split_counts: Vec<u32>,
) -> proto::Graph {
    let digraph = Digraph::from_edges(vertex_count, edges)
        .expect("the parser checks the vertex count, the edge count and the endpoints");
    proto::Graph {
        vertex_count,
        out_degrees: digraph
            .offsets()
            .windows(2)
            .map(|pair| pair[1] - pair[0])
            .collect(),
        targets: digraph.targets().to_vec(),
        split_counts,
    }
}

/// Stdout, owned by a writer thread so that a slow reader never blocks the async runtime.
struct Output {
    chunks: Option<mpsc::Sender<Vec<u8>>>,
    writer: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Output {
    fn spawn() -> Result<Self, RunError> {
        let (chunks, mut receiver) = mpsc::channel::<Vec<u8>>(64);
        let writer = std::thread::Builder::new()
            .name("grundy-stdout".into())
            .spawn(move || {
                let stdout = std::io::stdout();
                let mut stdout = stdout.lock();
                while let Some(chunk) = receiver.blocking_recv() {
                    stdout.write_all(&chunk)?;
                    // Flush when caught up, so output appears as verdicts arrive.
                    if receiver.is_empty() {
                        stdout.flush()?;
                    }
                }
                stdout.flush()
            })
            .map_err(|e| RunError::Failure(format!("cannot start the output thread: {e}")))?;
        Ok(Self {
            chunks: Some(chunks),
            writer: Some(writer),
        })
    }

    fn send(&mut self, chunk: Vec<u8>) -> Result<(), RunError> {
        if chunk.is_empty() {
            return Ok(());
        }
        let chunks = self.chunks.as_ref().ok_or(RunError::OutputClosed)?;
        // A full channel means stdout is slow: block this task only briefly per chunk.
        match chunks.try_send(chunk) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(chunk)) => tokio::task::block_in_place(|| {
                chunks
                    .blocking_send(chunk)
                    .map_err(|_| RunError::OutputClosed)
            }),
            Err(mpsc::error::TrySendError::Closed(_)) => Err(self.writer_error()),
        }
    }

    /// Why the writer stopped: a closed pipe is a quiet stop, anything else a failure.
    fn writer_error(&mut self) -> RunError {
        self.chunks = None;
        match self.writer.take().map(|w| w.join()) {
            Some(Ok(Err(e))) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                RunError::Failure(format!("cannot write output: {e}"))
            }
            _ => RunError::OutputClosed,
        }
    }

    /// Flushes everything and waits for the writer.
    fn finish(mut self) -> Result<(), RunError> {
        self.chunks = None;
        match self.writer.take().map(|w| w.join()) {
            Some(Ok(Err(e))) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(RunError::Failure(format!("cannot write output: {e}")))
            }
            Some(Err(_)) => Err(RunError::Failure("the output thread panicked".into())),
            _ => Ok(()),
        }
    }
}

/// Progress on stderr: test cases, queries and rate, refreshed twice a second.
struct ProgressReport {
    counters: Arc<ProgressCounters>,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

#[derive(Default)]
struct ProgressCounters {
    cases: AtomicU64,
    queries: AtomicU64,
}

impl ProgressReport {
    fn start(mode: Progress) -> Self {
        let counters = Arc::new(ProgressCounters::default());
        let enabled = match mode {
            Progress::Always => true,
            Progress::Never => false,
            Progress::Auto => std::io::stderr().is_terminal(),
        };
        let ticker = enabled.then(|| {
            let counters = counters.clone();
            tokio::spawn(async move {
                let started = Instant::now();
                let mut interval = tokio::time::interval(Duration::from_millis(500));
                interval.tick().await;
                loop {
                    interval.tick().await;
                    let queries = counters.queries.load(Ordering::Relaxed);
                    let cases = counters.cases.load(Ordering::Relaxed);
                    let rate = queries as f64 / started.elapsed().as_secs_f64().max(1e-9);
                    eprint!(
                        "\rgrundy: {cases} cases done, {queries} queries, {rate:.0} queries/s "
                    );
                }
            })
        });
        Self { counters, ticker }
    }

    /// The counters test cases update.
    fn counters(&self) -> Arc<ProgressCounters> {
        self.counters.clone()
    }

    fn finish(self) {
        if let Some(ticker) = self.ticker {
            ticker.abort();
            eprint!("\r\x1b[K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::SplitMove;

    fn split_line(odd_targets: Vec<u32>, pair_target: u32, pair_count: u32) -> String {
        let mut out = Vec::new();
        let split = SplitMove {
            vertex: 0,
            odd_targets,
            pair_target,
            pair_count,
        };
        write_move(&proto::r#move::Kind::Split(split), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn split_moves_list_every_pick_in_order_with_long_runs_counted() {
        assert_eq!(split_line(vec![1, 3], 0, 0), " move 0 -> 1 3");
        assert_eq!(split_line(vec![1, 3], 2, 1), " move 0 -> 1 2 2 3");
        assert_eq!(split_line(vec![1, 3], 5, 1), " move 0 -> 1 3 5 5");
        // The pair target's odd pick joins its pairs: one run.
        assert_eq!(split_line(vec![1, 3], 1, 1), " move 0 -> 1 1 1 3");
        assert_eq!(split_line(vec![1, 3], 1, 1000), " move 0 -> 1*2001 3");
        assert_eq!(split_line(vec![2], 2, 500), " move 0 -> 2*1001");
        assert_eq!(split_line(vec![], 4, 501), " move 0 -> 4*1002");
    }

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

    #[test]
    fn graphs_from_edges_are_csr() {
        let graph = graph_from_edges(4, &[(2, 1), (0, 3), (2, 3), (0, 1)], vec![1; 4]);
        assert_eq!(graph.out_degrees, vec![2, 0, 2, 0]);
        assert_eq!(graph.targets, vec![3, 1, 1, 3]);
    }
}
