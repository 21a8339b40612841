//! The `grundy` client: reads judge files, turns each test case into one `Evaluate` stream
//! (the graph, then the queries in batches) and prints the judge's output as verdicts arrive.
//!
//! Three threads cooperate so that no stage waits for another's I/O: a parser thread reads
//! the input and builds request messages, the async runtime drives the RPCs (and, without
//! `--server`, hosts the embedded server), and a writer thread owns stdout.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Status};

use crate::client::{self, ConnectionArgs, GrundyClient};
use crate::judge::addsub::{AddsubEvent, AddsubReader};
use crate::judge::chess::{ChessEvent, ChessReader};
use crate::judge::{JudgeError, Location};
use crate::proto::{
    self, EvaluateRequest, EvaluateStart, Outcome, QueryBatch, Verdict, evaluate_request::Payload,
    evaluate_start::GraphSource,
};
use crate::server::{self, DEFAULT_MAX_MESSAGE_BYTES, ServerConfig};

/// Exit code for malformed input.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for every other failure (server unreachable, server error, I/O).
pub const EXIT_FAILURE: u8 = 1;

/// Sets up `tracing` on stderr, filtered by `RUST_LOG` (default: `default_filter`).
pub fn init_tracing_with(default_filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// Tracing for the server: `info` unless `RUST_LOG` says otherwise.
pub fn init_tracing() {
    init_tracing_with("info");
}

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
    /// Largest gRPC message sent or received, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_MESSAGE_BYTES)]
    pub max_message_bytes: usize,
    /// TLS and authentication for --server.
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
    /// A new test case: a label for messages, and the stream's first message.
    Start { label: String, start: EvaluateStart },
    /// Queries of the current test case (ids still to be assigned).
    Queries(QueryBatch),
    /// The current test case is complete.
    End,
    /// The input is malformed (or unreadable) here; everything before it was sent.
    Error(JudgeError),
}

async fn judge(args: JudgeArgs) -> Result<(), RunError> {
    let input = open_input(args.file.as_ref())?;
    let (url, _embedded) = match &args.server {
        Some(url) => (url.clone(), None),
        None => {
            let server = EmbeddedServer::start(args.max_message_bytes).await?;
            (server.url.clone(), Some(server))
        }
    };
    let client = connect(&url, &args.connection, args.max_message_bytes).await?;

    let (event_tx, mut events) = mpsc::channel(16);
    let parser_args = args.clone();
    std::thread::Builder::new()
        .name("grundy-parser".into())
        .spawn(move || parse_input(parser_args, input, event_tx))
        .map_err(|e| RunError::Failure(format!("cannot start the parser thread: {e}")))?;
    let mut output = Output::spawn()?;
    let progress = ProgressReport::start(args.progress);

    let mut result = Ok(());
    while let Some(event) = events.recv().await {
        match event {
            InputEvent::Start { label, start } => {
                let case = Case {
                    client: client.clone(),
                    label,
                    format: args.format,
                    progress: &progress,
                };
                match case.run(start, &mut events, &mut output).await {
                    Ok(None) => {}
                    Ok(Some(input_error)) => {
                        result = Err(input_error);
                        break;
                    }
                    Err(error) => {
                        result = Err(error);
                        break;
                    }
                }
            }
            InputEvent::Error(error) => {
                result = Err(judge_error(error));
                break;
            }
            InputEvent::Queries(_) | InputEvent::End => {
                result = Err(RunError::Failure(
                    "internal error: queries outside a test case".into(),
                ));
                break;
            }
        }
    }
    progress.finish();
    let flushed = output.finish();
    result.and(flushed)
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
        let config = ServerConfig {
            max_message_bytes,
            ..ServerConfig::default()
        };
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

/// One test case: one `Evaluate` stream.
struct Case<'a> {
    client: GrundyClient,
    label: String,
    format: JudgeFormat,
    progress: &'a ProgressReport,
}

impl Case<'_> {
    /// Streams the case's queries and prints its verdicts. Returns `Some(error)` when the input
    /// turned out malformed inside this case (after printing every verdict before it).
    async fn run(
        mut self,
        start: EvaluateStart,
        events: &mut mpsc::Receiver<InputEvent>,
        output: &mut Output,
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

        output.send(case_header(self.format, &self.label))?;

        // Query ids count from 0 within the case; the verdicts must come back in that order.
        let mut sent = 0u64;
        let forward = async {
            let mut input_error = None;
            while let Some(event) = events.recv().await {
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
                            break; // the call failed; the response side reports why
                        }
                    }
                    InputEvent::End => break,
                    InputEvent::Error(error) => {
                        input_error = Some(judge_error(error));
                        break;
                    }
                    InputEvent::Start { .. } => {
                        input_error = Some(RunError::Failure(
                            "internal error: a test case started inside another".into(),
                        ));
                        break;
                    }
                }
            }
            drop(request_tx); // half-close: the server answers what it has and ends the stream
            Ok::<_, RunError>(input_error)
        };
        let mut received = 0u64;
        let format = self.format;
        let progress = self.progress;
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
                progress.add_queries(received - before);
                if !text.is_empty() {
                    output.send(std::mem::replace(&mut text, Vec::with_capacity(64 * 1024)))?;
                }
            }
            Ok(output)
        };
        let (input_error, output) = tokio::try_join!(forward, receive)?;
        if received != sent {
            return Err(RunError::Failure(format!(
                "{}: the server answered {received} of {sent} queries",
                self.label
            )));
        }
        self.progress.add_case();
        if input_error.is_none() {
            output.send(case_footer(self.format))?;
        }
        Ok(input_error)
    }

    fn graph_rejected(&mut self, status: Status) -> RunError {
        let message = format!("{}: {}", self.label, describe(&status));
        match status.code() {
            Code::InvalidArgument => RunError::BadInput(message),
            _ => RunError::Failure(message),
        }
    }
}

fn describe(status: &Status) -> String {
    match status.code() {
        Code::InvalidArgument => format!("rejected by the server: {}", status.message()),
        Code::ResourceExhausted => format!("over a server limit: {}", status.message()),
        Code::Unavailable => format!("server unavailable: {}", status.message()),
        code => format!("server error ({code:?}): {}", status.message()),
    }
}

fn case_header(format: JudgeFormat, label: &str) -> Vec<u8> {
    match format {
        JudgeFormat::Chess => Vec::new(),
        // label is "game N (line L)"; the judge prints "Game#N:".
        JudgeFormat::Addsub => {
            let number = label
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string();
            format!("Game#{number}:\n").into_bytes()
        }
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
            let pair_picks = 2 * u64::from(split.pair_count);
            // All K picks in increasing vertex order; the pair target's picks sit in its place.
            let mut pairs_written = pair_picks == 0;
            for &target in &split.odd_targets {
                if !pairs_written && split.pair_target < target {
                    write_pair_picks(split.pair_target, pair_picks, out);
                    pairs_written = true;
                }
                let _ = write!(out, " {target}");
            }
            if !pairs_written {
                write_pair_picks(split.pair_target, pair_picks, out);
            }
        }
    }
}

fn write_pair_picks(target: u32, picks: u64, out: &mut Vec<u8>) {
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
    let batch_size = args.batch_size as usize;
    let result = match args.format {
        JudgeFormat::Chess => parse_chess(input, &events, batch_size, args.explain),
        JudgeFormat::Addsub => parse_addsub(input, &events, batch_size, args.explain),
    };
    if let Err(ParseStop::Input(error)) = result {
        let _ = events.blocking_send(InputEvent::Error(error));
    }
}

/// Why the parser thread stopped early.
enum ParseStop {
    Input(JudgeError),
    /// The consumer is gone (a failure or a closed stdout): nothing more to do.
    Closed,
}

impl From<JudgeError> for ParseStop {
    fn from(error: JudgeError) -> Self {
        Self::Input(error)
    }
}

/// Collects token queries into batches and sends them in the packed (columnar) form: no
/// per-query message to build, encode or decode.
struct Batcher<'a> {
    events: &'a mpsc::Sender<InputEvent>,
    batch: QueryBatch,
    queries: usize,
    batch_size: usize,
}

impl<'a> Batcher<'a> {
    fn new(events: &'a mpsc::Sender<InputEvent>, batch_size: usize) -> Self {
        Self {
            events,
            batch: QueryBatch::default(),
            queries: 0,
            batch_size,
        }
    }

    fn push_tokens(&mut self, tokens: &[u32]) -> Result<(), ParseStop> {
        let packed = self
            .batch
            .packed_tokens
            .get_or_insert_with(Default::default);
        packed.token_counts.push(tokens.len() as u32);
        packed.vertices.extend_from_slice(tokens);
        self.queries += 1;
        if self.queries >= self.batch_size {
            self.flush()?;
        }
        Ok(())
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
        let batch = std::mem::take(&mut self.batch);
        self.send(InputEvent::Queries(batch))
    }

    /// Sends what was parsed before an input error, so its verdicts are still printed.
    fn flush_then<E>(&mut self, error: E) -> ParseStop
    where
        ParseStop: From<E>,
    {
        match self.flush() {
            Ok(()) => ParseStop::from(error),
            Err(closed) => closed,
        }
    }
}

fn start_message(graph: proto::Graph, explain: bool) -> EvaluateStart {
    EvaluateStart {
        graph_source: Some(GraphSource::Graph(graph)),
        explain,
    }
}

fn case_label(kind: &str, number: u64, location: Location) -> String {
    format!("{kind} {number} (line {})", location.line)
}

fn parse_chess(
    input: Box<dyn Read + Send>,
    events: &mpsc::Sender<InputEvent>,
    batch_size: usize,
    explain: bool,
) -> Result<(), ParseStop> {
    let mut reader = ChessReader::new(input);
    let mut batcher = Batcher::new(events, batch_size);
    loop {
        let event = match reader.next_event() {
            Ok(Some(event)) => event,
            Ok(None) => return Ok(()),
            Err(error) => return Err(batcher.flush_then(error)),
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
                batcher.send(InputEvent::Start {
                    label: case_label("test case", case, location),
                    start: start_message(graph, explain),
                })?;
            }
            ChessEvent::Query(tokens) => batcher.push_tokens(tokens)?,
            ChessEvent::EndOfCase => {
                batcher.flush()?;
                batcher.send(InputEvent::End)?;
            }
        }
    }
}

fn parse_addsub(
    input: Box<dyn Read + Send>,
    events: &mpsc::Sender<InputEvent>,
    batch_size: usize,
    explain: bool,
) -> Result<(), ParseStop> {
    let mut reader = AddsubReader::new(input);
    let mut batcher = Batcher::new(events, batch_size);
    let mut odd_vertices = Vec::new();
    loop {
        let event = match reader.next_event() {
            Ok(Some(event)) => event,
            Ok(None) => return Ok(()),
            Err(error) => return Err(batcher.flush_then(error)),
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
                batcher.send(InputEvent::Start {
                    label: case_label("game", game, location),
                    start: start_message(graph, explain),
                })?;
            }
            AddsubEvent::Round(values) => {
                // Only parity matters (two units on a vertex cancel, and the game is acyclic),
                // so a round is the token query "one unit on each odd vertex": it travels in
                // the packed columnar form like chess queries.
                odd_vertices.clear();
                odd_vertices.extend(
                    values
                        .iter()
                        .enumerate()
                        .filter(|&(_, value)| value & 1 == 1)
                        .map(|(vertex, _)| vertex as u32),
                );
                batcher.push_tokens(&odd_vertices)?;
            }
            AddsubEvent::EndOfGame => {
                batcher.flush()?;
                batcher.send(InputEvent::End)?;
            }
        }
    }
}

/// Wire graph from an edge list (validated by the parser: endpoints in range).
fn graph_from_edges(
    vertex_count: u32,
    edges: &[(u32, u32)],
    split_counts: Vec<u32>,
) -> proto::Graph {
    let mut out_degrees = vec![0u32; vertex_count as usize];
    for &(from, _) in edges {
        out_degrees[from as usize] += 1;
    }
    let mut cursor: Vec<usize> = Vec::with_capacity(out_degrees.len());
    let mut running = 0usize;
    for &degree in &out_degrees {
        cursor.push(running);
        running += degree as usize;
    }
    let mut targets = vec![0u32; edges.len()];
    for &(from, to) in edges {
        let slot = &mut cursor[from as usize];
        targets[*slot] = to;
        *slot += 1;
    }
    proto::Graph {
        vertex_count,
        out_degrees,
        targets,
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

    fn add_queries(&self, count: u64) {
        self.counters.queries.fetch_add(count, Ordering::Relaxed);
    }

    fn add_case(&self) {
        self.counters.cases.fetch_add(1, Ordering::Relaxed);
    }

    fn finish(self) {
        if let Some(ticker) = self.ticker {
            ticker.abort();
            eprint!("\r\x1b[K");
        }
    }
}
