//! One attempt at a test case's `Evaluate` stream, on one server: open the stream (uploading
//! the graph first when it is too large for one message), send the batches left unanswered
//! by an earlier attempt, then the parser's new ones, while the verdicts are turned into
//! judge lines. State that must survive a broken stream lives in [`CaseState`].

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Status, Streaming};

use super::args::Report;
use super::case_output::{CaseOutput, send_text};
use super::endpoints::Endpoint;
use super::error::RunError;
use super::input::InputEvent;
use super::output::ProgressCounters;
use super::output::stderr_line;
use super::replay::{Replay, merge};
use super::verdicts::JudgeLines;
use crate::client::put_graph;
use crate::proto::{
    self, EvaluateRequest, EvaluateResponse, EvaluateStart, evaluate_request::Payload,
    evaluate_start::GraphSource,
};

/// Initial capacity of a chunk of judge output: a response's lines usually fit.
const CHUNK_BYTES: usize = 64 * 1024;

/// Why an attempt ended early.
pub(super) enum Broken {
    /// The call failed with this status (`opening`: before the stream was open).
    Status { status: Status, opening: bool },
    /// The run ends with this error.
    Run(RunError),
}

/// How the parser's side of the case stands.
pub(super) enum Input {
    /// More events may come.
    Open,
    /// The case's events ended; with an error when the input turned malformed inside it.
    Ended(Option<RunError>),
}

/// The graph of a test case and how it travels.
pub(super) struct SentGraph {
    /// The graph's message (shared with the upload's chunks).
    pub(super) message: Arc<proto::Graph>,
    /// What the stream asks for (`explain`, `analysis`).
    pub(super) report: Report,
    /// Uploaded with `PutGraph` (too large for one message), then named by id.
    pub(super) upload: bool,
    /// The id of an uploaded graph, once known.
    pub(super) id: Option<String>,
    /// Bytes per `PutGraph` chunk.
    pub(super) chunk_bytes: usize,
    /// Time spent in `PutGraph` (the upload and the server's analysis of the graph).
    pub(super) upload_time: Duration,
    /// Time spent opening streams (the analysis of an inline graph, or the lookup by id).
    pub(super) open_time: Duration,
}

/// What survives from one attempt to the next.
pub(super) struct CaseState<'a> {
    pub(super) lines: JudgeLines<'a>,
    pub(super) replay: Replay,
    pub(super) input: Input,
    /// An event taken from the parser but not yet handled.
    pub(super) pending: Option<InputEvent>,
    /// Bytes up to which waiting batches are merged into one message.
    pub(super) merge_bytes: usize,
    /// The case's header (`Game#g:`), printed once a server accepted the graph (a graph it
    /// rejects ends the output before its case).
    pub(super) header: Option<Vec<u8>>,
}

impl CaseState<'_> {
    /// Runs the stream on `endpoint` until every query is answered (`Ok`) or it breaks.
    pub(super) async fn attempt(
        &mut self,
        endpoint: &Endpoint,
        graph: &mut SentGraph,
        events: &mut mpsc::Receiver<InputEvent>,
        output: &mpsc::Sender<CaseOutput>,
        progress: &ProgressCounters,
    ) -> Result<(), Broken> {
        let (requests, responses) = open(endpoint, graph, self.lines.label).await?;
        if let Some(header) = self.header.take() {
            send_text(output, header).await.map_err(Broken::Run)?;
        }
        let (answered, answers) = watch::channel(self.lines.received);
        let Self {
            lines,
            replay,
            input,
            pending,
            merge_bytes,
            header: _,
        } = self;
        replay.trim(lines.received);
        let send = send_queries(
            replay,
            input,
            pending,
            *merge_bytes,
            events,
            requests,
            answers,
        );
        let receive = receive_verdicts(lines, responses, answered, output, progress);
        tokio::try_join!(send, receive)?;
        Ok(())
    }
}

/// Opens the stream: the graph inline, or by id after a `PutGraph` (again when the server
/// answers NOT_FOUND: it does not share the store of the server that took the upload).
async fn open(
    endpoint: &Endpoint,
    graph: &mut SentGraph,
    label: &str,
) -> Result<(mpsc::Sender<EvaluateRequest>, Streaming<EvaluateResponse>), Broken> {
    let opening = |status| Broken::Status {
        status,
        opening: true,
    };
    let mut client = endpoint.client.clone();
    let mut uploaded_here = false;
    loop {
        if graph.upload && graph.id.is_none() {
            let began = Instant::now();
            let id = put_graph(&mut client, graph.message.clone(), graph.chunk_bytes).await;
            graph.upload_time += began.elapsed();
            graph.id = Some(id.map_err(opening)?);
            if endpoint.keeps_uploads {
                // No other server to upload to: the copy would only double the memory.
                graph.message = Arc::new(proto::Graph::default());
            }
            uploaded_here = true;
        }
        let source = match &graph.id {
            Some(id) if graph.upload => GraphSource::GraphId(id.clone()),
            _ => GraphSource::Graph(proto::Graph::clone(&graph.message)),
        };
        let (requests, request_stream) = mpsc::channel(4);
        let start = EvaluateRequest {
            payload: Some(Payload::Start(EvaluateStart {
                graph_source: Some(source),
                explain: graph.report.explain(),
                analysis: graph.report.analysis(),
                play_convention: graph.report.play_convention().into(),
            })),
        };
        if requests.send(start).await.is_err() {
            unreachable!("the receiver is held above");
        }
        let began = Instant::now();
        let opened = client.evaluate(ReceiverStream::new(request_stream)).await;
        graph.open_time += began.elapsed();
        match opened {
            Ok(response) => return Ok((requests, response.into_inner())),
            Err(status) if status.code() == Code::NotFound && graph.upload && !uploaded_here => {
                stderr_line(format_args!(
                    "grundy: {label}: {} does not hold the graph; uploading it again",
                    endpoint.url
                ));
                graph.id = None;
            }
            Err(status) => return Err(opening(status)),
        }
    }
}

/// Sends the batches an earlier attempt left unanswered, then the parser's new ones (merging
/// those already waiting into one message), up to the case's end; then half-closes so that
/// the server answers what it has and ends the stream. Every batch is queued in `replay`
/// before it is sent, so a stream that breaks at any point loses none.
async fn send_queries(
    replay: &mut Replay,
    input: &mut Input,
    pending: &mut Option<InputEvent>,
    merge_bytes: usize,
    events: &mut mpsc::Receiver<InputEvent>,
    requests: mpsc::Sender<EvaluateRequest>,
    mut answers: watch::Receiver<u64>,
) -> Result<(), Broken> {
    let send = async |batch| {
        let request = EvaluateRequest {
            payload: Some(Payload::Queries(batch)),
        };
        // A closed stream: the receiving side reports why.
        requests.send(request).await.is_ok()
    };
    for batch in replay.unanswered().collect::<Vec<_>>() {
        if !send(batch).await {
            return Ok(());
        }
    }
    while let Input::Open = input {
        let event = match pending.take() {
            Some(event) => event,
            // The parser ends every test case with `End` (or `Error`); a closed channel here
            // means it stopped abnormally.
            None => events.recv().await.unwrap_or_else(|| {
                InputEvent::Error(RunError::Failure(
                    "internal error: the input stopped inside a test case".into(),
                ))
            }),
        };
        let (mut batch, mut bytes) = match event {
            InputEvent::Queries { batch, bytes } => (batch, bytes),
            InputEvent::End => {
                *input = Input::Ended(None);
                break;
            }
            InputEvent::Error(error) => {
                *input = Input::Ended(Some(error));
                break;
            }
            InputEvent::Start { .. } => {
                let error = "internal error: a test case started inside another";
                *input = Input::Ended(Some(RunError::Failure(error.into())));
                break;
            }
        };
        merge_waiting(&mut batch, &mut bytes, merge_bytes, events, pending);
        let batch = replay.push(batch, bytes);
        loop {
            replay.trim(*answers.borrow_and_update());
            if replay.has_room() {
                break;
            }
            if answers.changed().await.is_err() {
                return Ok(()); // the stream ended; the receiving side says how
            }
        }
        if !send(batch).await {
            return Ok(());
        }
    }
    drop(requests); // the half-close
    Ok(())
}

/// Appends the query batches already waiting to `batch`, while both it and the next have
/// fewer than [`MERGE_BELOW`] queries and the sum stays within
/// `merge_bytes` (the size at which the parser cuts a batch, well under the message limit,
/// its verdicts' room in the response included): one message
/// for them all, so that one query per message (a `--batch-size 1` or an interactive
/// producer) costs the server one message per wake-up, not per query. It never waits for
/// more input; an event that is not a batch is kept in `pending`.
fn merge_waiting(
    batch: &mut proto::QueryBatch,
    bytes: &mut usize,
    merge_bytes: usize,
    events: &mut mpsc::Receiver<InputEvent>,
    pending: &mut Option<InputEvent>,
) {
    while *bytes < merge_bytes && batch.queries.is_empty() && packed_queries(batch) < MERGE_BELOW {
        match events.try_recv() {
            Ok(InputEvent::Queries {
                batch: more,
                bytes: more_bytes,
            }) if more.queries.is_empty()
                && packed_queries(&more) < MERGE_BELOW
                && *bytes + more_bytes <= merge_bytes =>
            {
                merge(batch, more);
                *bytes += more_bytes;
            }
            Ok(other) => {
                *pending = Some(other);
                return;
            }
            Err(_) => return,
        }
    }
}

/// Batches of this many queries or more are sent as they are: merging saves the per-message
/// cost, which matters for small batches only, and it copies every query it merges (merging
/// the parser's 4,096-query batches cost the judge path 8% of its CPU, most of it page faults
/// of the merged copies).
const MERGE_BELOW: usize = 1024;

/// The packed queries of `batch`.
fn packed_queries(batch: &proto::QueryBatch) -> usize {
    batch
        .packed_tokens
        .as_ref()
        .map_or(0, |packed| packed.token_counts.len())
}

/// Formats the verdicts as they arrive and hands them to the writer, publishing how many
/// arrived so far (the sender's window). They must come in query order.
async fn receive_verdicts(
    lines: &mut JudgeLines<'_>,
    mut responses: Streaming<EvaluateResponse>,
    answered: watch::Sender<u64>,
    output: &mpsc::Sender<CaseOutput>,
    progress: &ProgressCounters,
) -> Result<(), Broken> {
    let mut text = Vec::with_capacity(CHUNK_BYTES);
    loop {
        let response = match responses.message().await {
            Ok(Some(response)) => response,
            Ok(None) => return Ok(()),
            Err(status) => {
                return Err(Broken::Status {
                    status,
                    opening: false,
                });
            }
        };
        let before = lines.received;
        lines
            .append_verdicts(&response.verdicts, &mut text)
            .map_err(Broken::Run)?;
        if let Some(packed) = &response.packed_verdicts {
            lines
                .append_packed(packed, &mut text)
                .map_err(Broken::Run)?;
        }
        progress
            .queries
            .fetch_add(lines.received - before, Ordering::Relaxed);
        answered.send_replace(lines.received);
        if !text.is_empty() {
            let chunk = std::mem::replace(&mut text, Vec::with_capacity(CHUNK_BYTES));
            send_text(output, chunk).await.map_err(Broken::Run)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::PackedTokenQueries;

    /// A batch of `queries` one-token queries, as the parser sends it.
    fn event(queries: usize) -> InputEvent {
        InputEvent::Queries {
            batch: proto::QueryBatch {
                queries: vec![],
                packed_tokens: Some(PackedTokenQueries {
                    first_query_id: 0,
                    token_counts: vec![1; queries],
                    vertices: vec![0; queries],
                }),
            },
            bytes: queries * 8,
        }
    }

    /// What `merge_waiting` makes of the first waiting batch: the query counts of the
    /// messages, in order.
    fn messages(waiting: &[usize]) -> Vec<usize> {
        let (tx, mut events) = mpsc::channel(waiting.len().max(1));
        for &queries in waiting {
            tx.try_send(event(queries)).unwrap();
        }
        drop(tx);
        let mut pending = None;
        let mut sent = Vec::new();
        loop {
            let next = match pending.take() {
                Some(event) => Some(event),
                None => events.try_recv().ok(),
            };
            let Some(InputEvent::Queries {
                mut batch,
                mut bytes,
            }) = next
            else {
                return sent;
            };
            merge_waiting(&mut batch, &mut bytes, 1 << 20, &mut events, &mut pending);
            sent.push(packed_queries(&batch));
        }
    }

    #[test]
    fn small_waiting_batches_merge_and_large_ones_go_as_they_are() {
        assert_eq!(messages(&[1, 1, 1]), vec![3]);
        assert_eq!(messages(&[MERGE_BELOW - 1, 1, 1]), vec![MERGE_BELOW, 1]);
        assert_eq!(messages(&[4096, 4096, 10]), vec![4096, 4096, 10]);
        assert_eq!(messages(&[10, 4096, 4096]), vec![10, 4096, 4096]);
    }
}
