//! The parser thread: reads the judge file and turns it into request-ready events, batching
//! queries under the message limit.

use std::io::Read;

use prost::Message;
use tokio::sync::mpsc;

use super::args::{InputArgs, JudgeFormat, Report};
use super::error::{RunError, judge_error};
use super::graphs::{InputGraph, addsub_graph, chess_graph};
use crate::judge::addsub::{AddsubEvent, AddsubReader};
use crate::judge::chess::{ChessEvent, ChessReader};
use crate::judge::{JudgeError, ListBudget};
use crate::proto::{self, QueryBatch};
use crate::wire::size;

/// A unit of work from the parser thread.
pub(super) enum InputEvent {
    /// A new test case: its number, a label for messages, and its graph.
    Start {
        number: u64,
        label: String,
        graph: CaseStart,
    },
    /// Queries of the current test case (ids still to be assigned), and the bytes they take
    /// in a request (and their verdicts in a response).
    Queries { batch: QueryBatch, bytes: usize },
    /// The current test case is complete.
    End,
    /// The input is malformed (or unreadable, or too large for a message) here; everything
    /// before it was sent.
    Error(RunError),
}

/// Parser thread: reads the judge file and sends request-ready events.
pub(super) fn parse_input(
    args: InputArgs,
    report: Report,
    input: Box<dyn Read + Send>,
    events: mpsc::Sender<InputEvent>,
) {
    let mut batcher = Batcher::new(&events, &args, report);
    let batcher = &mut batcher;
    let result = match args.format {
        JudgeFormat::Chess => parse_cases(&mut ChessReader::new(input), batcher),
        JudgeFormat::Addsub => parse_cases(&mut AddsubReader::new(input), batcher),
    };
    let error = match result {
        Ok(()) | Err(ParseStop::Closed) => return,
        // A vertex out of range in the very first test case: perhaps the other format (the
        // samples of each read as the other's fail this way).
        Err(ParseStop::Input(JudgeError::Syntax { location, message }))
            if batcher.cases_ended == 0 && message.contains(", out of range: ") =>
        {
            let other = match args.format {
                JudgeFormat::Chess => "addsub",
                JudgeFormat::Addsub => "chess",
            };
            RunError::BadInput(format!(
                "{location}: {message} (if the input is in the {other} format: grundy judge \
                 {other} ...)"
            ))
        }
        Err(ParseStop::Input(error)) => judge_error(error),
        Err(ParseStop::TooLarge(message)) => RunError::Failure(message),
    };
    let _ = events.blocking_send(InputEvent::Error(error));
}

/// Why the parser thread stopped early.
enum ParseStop {
    Input(JudgeError),
    /// A query does not fit in one message under `--max-message-bytes`.
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
        if batcher.push_buffered(|budget, counts, vertices| {
            self.read_buffered_queries(budget, counts, vertices)
        })? {
            return Ok(true);
        }
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
                let case_graph = chess_graph(case, location, vertex_count, out_degrees, targets);
                batcher.start_case(case, case_graph)?;
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

impl<R: Read> CaseSource for AddsubReader<R> {
    fn step(&mut self, batcher: &mut Batcher) -> Result<bool, ParseStop> {
        let Some(event) = self.next_event()? else {
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
                let case_graph = addsub_graph(game, location, vertex_count, &edges, split_counts);
                batcher.start_case(game, case_graph)?;
            }
            AddsubEvent::Round(odd_vertices) => {
                // Only parity matters (two units on a vertex cancel, and the game is acyclic),
                // so a round is the token query "one unit on each odd vertex": it travels in
                // the packed columnar form like chess queries.
                batcher.push_tokens(odd_vertices)?;
            }
            AddsubEvent::EndOfGame => batcher.end_case()?,
        }
        Ok(true)
    }

    fn has_buffered_input(&mut self) -> bool {
        AddsubReader::has_buffered_input(self)
    }
}

/// A test case's graph, as its stream sends it.
pub(super) struct CaseStart {
    pub(super) graph: proto::Graph,
    /// The graph does not fit in one message: it goes through `PutGraph` in chunks, and the
    /// stream names it by id.
    pub(super) upload: bool,
    /// Time the parser took to read it (since the end of the previous test case).
    pub(super) parsed_in: std::time::Duration,
}

/// Requests are cut at this size even when the message limit is far larger: smaller messages
/// keep the pipeline moving.
const MAX_BATCH_BYTES: usize = 4 << 20;

/// Size at which a query batch is sent (and up to which waiting batches are merged): well
/// under the message limit.
pub(super) fn batch_limit_bytes(max_message_bytes: usize) -> usize {
    (max_message_bytes / 2).min(MAX_BATCH_BYTES)
}

/// Collects token queries into batches and sends them in the packed (columnar) form: no
/// per-query message to build, encode or decode. A batch is sent when it holds
/// `--batch-size` queries or its encoded size nears the message limit.
struct Batcher<'a> {
    events: &'a mpsc::Sender<InputEvent>,
    /// What the stream asks for (it sizes the `start` message and the verdicts).
    report: Report,
    batch: QueryBatch,
    queries: usize,
    /// At least the encoded bytes of `batch` (a bound: five per token), plus the room its
    /// verdicts take in the response.
    batch_bytes: usize,
    batch_size: usize,
    /// Size at which a batch is sent: well under the message limit.
    flush_bytes: usize,
    max_message_bytes: usize,
    /// The current test case, for error messages, and its queries so far.
    label: String,
    case_queries: u64,
    /// When the parser started reading the current test case.
    case_began: std::time::Instant,
    /// Test cases read to their end.
    cases_ended: u64,
    /// The lengths of the last packed batch sent (its queries' counts and tokens).
    packed_room: (usize, usize),
}

impl<'a> Batcher<'a> {
    fn new(events: &'a mpsc::Sender<InputEvent>, args: &InputArgs, report: Report) -> Self {
        Self {
            events,
            report,
            batch: QueryBatch::default(),
            queries: 0,
            batch_bytes: 0,
            batch_size: args.batch_size as usize,
            flush_bytes: batch_limit_bytes(args.max_message_bytes),
            max_message_bytes: args.max_message_bytes,
            label: String::new(),
            case_queries: 0,
            case_began: std::time::Instant::now(),
            cases_ended: 0,
            packed_room: (0, 0),
        }
    }

    fn start_case(&mut self, number: u64, case_graph: InputGraph) -> Result<(), ParseStop> {
        let InputGraph { label, graph } = case_graph;
        // The size of the `start` message, computed without building it.
        let options = proto::EvaluateStart {
            graph_source: None,
            explain: self.report.explain(),
            analysis: self.report.analysis(),
            play_convention: self.report.play_convention().into(),
        };
        // Every entry of the graph's lists takes a byte at least: a graph with more entries
        // than the limit needs no pass over them to be sized.
        let entries = graph.out_degrees.len() + graph.targets.len() + graph.split_counts.len();
        let upload = entries > self.max_message_bytes
            || size::start_request_len(&options, graph.encoded_len()) > self.max_message_bytes;
        self.label.clone_from(&label);
        self.case_queries = 0;
        self.send(InputEvent::Start {
            number,
            label,
            graph: CaseStart {
                graph,
                upload,
                parsed_in: self.case_began.elapsed(),
            },
        })
    }

    fn push_tokens(&mut self, tokens: &[u32]) -> Result<(), ParseStop> {
        self.case_queries += 1;
        // A bound (a varint of a u32 takes at most five bytes) instead of a pass over the
        // tokens; the exact size only when the bound is over the limit.
        let mut request_bytes = size::MAX_U32_VARINT * (1 + tokens.len());
        if request_bytes + size::PACKED_QUERIES_FRAME > self.max_message_bytes {
            request_bytes = size::packed_query_len(tokens);
        }
        if request_bytes + size::PACKED_QUERIES_FRAME > self.max_message_bytes {
            return Err(ParseStop::TooLarge(format!(
                "{}: query {} takes {} bytes encoded, more than --max-message-bytes {} allows \
                 in one message",
                self.label,
                self.case_queries,
                request_bytes + size::PACKED_QUERIES_FRAME,
                self.max_message_bytes
            )));
        }
        let query_bytes = request_bytes + self.response_bytes_per_query();
        if self.queries > 0 && self.batch_bytes + query_bytes > self.flush_bytes {
            self.flush()?;
        }
        let packed = self.packed_batch();
        packed.token_counts.push(tokens.len() as u32);
        packed.vertices.extend_from_slice(tokens);
        self.queries += 1;
        self.batch_bytes += query_bytes;
        if self.queries >= self.batch_size || self.batch_bytes >= self.flush_bytes {
            self.flush()?;
        }
        Ok(())
    }

    /// Lets `read` append queries straight into the batch, as many as the batch has room for
    /// (each within the message limit, so none needs `push_tokens`'s check); false when it
    /// read none.
    fn push_buffered(
        &mut self,
        read: impl FnOnce(ListBudget, &mut Vec<u32>, &mut Vec<u32>) -> usize,
    ) -> Result<bool, ParseStop> {
        let item_bytes = size::MAX_U32_VARINT as u64;
        let list_bytes = item_bytes + self.response_bytes_per_query() as u64;
        let budget = ListBudget {
            lists: self.batch_size.saturating_sub(self.queries),
            bytes: self.flush_bytes.saturating_sub(self.batch_bytes) as u64,
            list_bytes,
            item_bytes,
            // A query this long fits in a message by the bound alone.
            min_list: 1,
            max_list: (self
                .max_message_bytes
                .saturating_sub(size::PACKED_QUERIES_FRAME)
                / size::MAX_U32_VARINT)
                .saturating_sub(1)
                .min(u32::MAX as usize) as u64,
        };
        let packed = self.packed_batch();
        let tokens_before = packed.vertices.len();
        let read = read(budget, &mut packed.token_counts, &mut packed.vertices);
        if read == 0 {
            return Ok(false);
        }
        let tokens = (packed.vertices.len() - tokens_before) as u64;
        self.queries += read;
        self.case_queries += read as u64;
        self.batch_bytes += (read as u64 * list_bytes + tokens * item_bytes) as usize;
        if self.queries >= self.batch_size || self.batch_bytes >= self.flush_bytes {
            self.flush()?;
        }
        Ok(true)
    }

    fn response_bytes_per_query(&self) -> usize {
        if self.report.full_verdicts() {
            size::EXPLAINED_VERDICT_ROOM
        } else {
            size::PACKED_VERDICT_ROOM
        }
    }

    fn end_case(&mut self) -> Result<(), ParseStop> {
        self.flush()?;
        self.case_began = std::time::Instant::now();
        self.cases_ended += 1;
        self.send(InputEvent::End)
    }

    fn send(&self, event: InputEvent) -> Result<(), ParseStop> {
        self.events
            .blocking_send(event)
            .map_err(|_| ParseStop::Closed)
    }

    /// The batch's packed queries, started with the room the last batch took and an eighth
    /// more: growing them from empty copied every batch about once more.
    fn packed_batch(&mut self) -> &mut proto::PackedTokenQueries {
        let (counts, vertices) = self.packed_room;
        let (counts, vertices) = (counts + counts / 8, vertices + vertices / 8 + 64);
        self.batch
            .packed_tokens
            .get_or_insert_with(|| proto::PackedTokenQueries {
                token_counts: Vec::with_capacity(counts),
                vertices: Vec::with_capacity(vertices),
                ..Default::default()
            })
    }

    fn flush(&mut self) -> Result<(), ParseStop> {
        if self.queries == 0 {
            return Ok(());
        }
        self.queries = 0;
        let bytes = std::mem::take(&mut self.batch_bytes);
        let batch = std::mem::take(&mut self.batch);
        if let Some(packed) = &batch.packed_tokens {
            self.packed_room = (packed.token_counts.len(), packed.vertices.len());
        }
        self.send(InputEvent::Queries { batch, bytes })
    }

    /// Sends what was parsed before an input error, so its verdicts are still printed.
    fn flush_then(&mut self, stop: ParseStop) -> ParseStop {
        match self.flush() {
            Ok(()) => stop,
            Err(closed) => closed,
        }
    }
}
