//! One test case: one `Evaluate` stream, from the parser's events to the judge's output.
//!
//! The stream runs in four steps: [`Case::open`] sends the graph and opens the call,
//! [`forward_queries`] sends the parser's query batches (numbering the queries) and
//! half-closes, [`Case::receive_verdicts`] turns the responses into judge lines while the
//! queries are still being sent, and [`Case::finish`] checks that every query was answered.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Status, Streaming};

use super::input::InputEvent;
use super::output::{ProgressCounters, case_footer, case_header, format_outcome, format_verdict};
use super::{JudgeFormat, RunError};
use crate::client::GrundyClient;
use crate::proto::{
    EvaluateRequest, EvaluateResponse, EvaluateStart, Outcome, PackedVerdicts, QueryBatch, Verdict,
    evaluate_request::Payload,
};

/// Initial capacity of a chunk of judge output: a response's lines usually fit.
const CHUNK_BYTES: usize = 64 * 1024;

/// One test case: one `Evaluate` stream.
pub(super) struct Case {
    pub(super) client: GrundyClient,
    /// 1-based test case (or game) number.
    pub(super) number: u64,
    pub(super) label: String,
    pub(super) format: JudgeFormat,
    pub(super) progress: Arc<ProgressCounters>,
}

/// What a test case hands to the in-order writer.
pub(super) enum CaseOutput {
    /// Judge output of the case, in order.
    Text(Vec<u8>),
    /// The case is complete.
    Done,
    /// The case ended with this error, after the text before it.
    Failed(RunError),
}

/// How the parser's side of a stream ended.
struct Forwarded {
    /// The queries sent (ids `0..sent`).
    sent: u64,
    /// The input turned out malformed (or the parser failed) inside the case.
    input_error: Option<RunError>,
}

impl Case {
    /// Streams the case's events (up to its `End`) to the server and its output to `chunks`,
    /// which always ends with `Done` or `Failed` (unless the writer is gone).
    pub(super) async fn run(
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
        let (requests, responses) = self.open(start).await?;
        send_text(output, case_header(self.format, self.number)).await?;
        // Both sides run at once: the server answers batches while later ones are read. The
        // first failure of either side ends both.
        let forward = async { Ok::<_, RunError>(forward_queries(events, requests).await) };
        let receive = self.receive_verdicts(responses, explain, output);
        let (forwarded, received) = tokio::try_join!(forward, receive)?;
        self.finish(forwarded, received, output).await
    }

    /// Sends the stream's first message (the graph) and opens the call. A graph the server
    /// rejects as invalid is bad input; any other refusal is a failure.
    async fn open(
        &mut self,
        start: EvaluateStart,
    ) -> Result<(mpsc::Sender<EvaluateRequest>, Streaming<EvaluateResponse>), RunError> {
        let (requests, request_stream) = mpsc::channel(4);
        let first = EvaluateRequest {
            payload: Some(Payload::Start(start)),
        };
        requests
            .send(first)
            .await
            .map_err(|_| RunError::Failure("request stream closed".into()))?;
        let responses = self
            .client
            .evaluate(ReceiverStream::new(request_stream))
            .await
            .map_err(|status| self.graph_rejected(status))?
            .into_inner();
        Ok((requests, responses))
    }

    /// Formats the verdicts as they arrive and hands them to the writer; returns how many
    /// arrived. They must come in query order.
    async fn receive_verdicts(
        &self,
        mut responses: Streaming<EvaluateResponse>,
        explain: bool,
        output: &mpsc::Sender<CaseOutput>,
    ) -> Result<u64, RunError> {
        let mut lines = JudgeLines {
            label: &self.label,
            format: self.format,
            explain,
            received: 0,
        };
        let mut text = Vec::with_capacity(CHUNK_BYTES);
        while let Some(response) = responses
            .message()
            .await
            .map_err(|status| RunError::Failure(format!("{}: {}", self.label, describe(&status))))?
        {
            let before = lines.received;
            lines.append_verdicts(&response.verdicts, &mut text)?;
            if let Some(packed) = &response.packed_verdicts {
                lines.append_packed(packed, &mut text)?;
            }
            self.progress
                .queries
                .fetch_add(lines.received - before, Ordering::Relaxed);
            if !text.is_empty() {
                let chunk = std::mem::replace(&mut text, Vec::with_capacity(CHUNK_BYTES));
                send_text(output, chunk).await?;
            }
        }
        Ok(lines.received)
    }

    /// Ends a case whose stream closed: every query answered, then the footer (unless the
    /// input failed inside the case, which is then the case's result).
    async fn finish(
        &self,
        forwarded: Forwarded,
        received: u64,
        output: &mpsc::Sender<CaseOutput>,
    ) -> Result<Option<RunError>, RunError> {
        let Forwarded { sent, input_error } = forwarded;
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

/// Sends the case's query batches, numbered from 0 in input order, up to the case's `End`,
/// then half-closes the stream so that the server answers what it has and ends it.
async fn forward_queries(
    events: &mut mpsc::Receiver<InputEvent>,
    requests: mpsc::Sender<EvaluateRequest>,
) -> Forwarded {
    let mut sent = 0u64;
    let input_error = loop {
        // The parser ends every test case with `End` (or `Error`); a closed channel here
        // means it stopped abnormally.
        let Some(event) = events.recv().await else {
            break Some(RunError::Failure(
                "internal error: the input stopped inside a test case".into(),
            ));
        };
        match event {
            InputEvent::Queries(mut batch) => {
                sent = number_queries(&mut batch, sent);
                let batch = EvaluateRequest {
                    payload: Some(Payload::Queries(batch)),
                };
                if requests.send(batch).await.is_err() {
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
    drop(requests); // the half-close
    Forwarded { sent, input_error }
}

/// Gives the batch's queries the ids `first..`, in the order the server answers them
/// (`queries` first, then `packed_tokens`); returns the next free id.
fn number_queries(batch: &mut QueryBatch, first: u64) -> u64 {
    let mut next = first;
    for query in &mut batch.queries {
        query.id = next;
        next += 1;
    }
    if let Some(packed) = &mut batch.packed_tokens {
        packed.first_query_id = next;
        next += packed.token_counts.len() as u64;
    }
    next
}

/// Turns a case's verdicts into judge lines, checking that they arrive in query order.
struct JudgeLines<'a> {
    /// The case, for messages.
    label: &'a str,
    format: JudgeFormat,
    explain: bool,
    /// Verdicts so far: the id the next one must carry.
    received: u64,
}

impl JudgeLines<'_> {
    /// Appends a line per verdict of the per-query form (`--explain`, or rejected queries).
    fn append_verdicts(
        &mut self,
        verdicts: &[Verdict],
        text: &mut Vec<u8>,
    ) -> Result<(), RunError> {
        for verdict in verdicts {
            self.expect_id(verdict.query_id)?;
            self.received += 1;
            format_verdict(self.format, self.explain, self.received, verdict, text)
                .map_err(|error| self.failure(error))?;
        }
        Ok(())
    }

    /// Appends a line per outcome of the packed (columnar) form.
    fn append_packed(
        &mut self,
        packed: &PackedVerdicts,
        text: &mut Vec<u8>,
    ) -> Result<(), RunError> {
        self.expect_id(packed.first_query_id)?;
        if let Some(error) = packed.errors.first().and_then(|e| e.error.as_ref()) {
            return Err(RunError::Failure(format!(
                "{}: query rejected: {}: {}",
                self.label, error.field, error.message
            )));
        }
        for &outcome in &packed.outcomes {
            self.received += 1;
            let outcome = Outcome::try_from(outcome).unwrap_or(Outcome::Unspecified);
            format_outcome(self.format, self.received, outcome, text)
                .map_err(|error| self.failure(error))?;
            text.push(b'\n');
        }
        Ok(())
    }

    fn expect_id(&self, id: u64) -> Result<(), RunError> {
        if id == self.received {
            return Ok(());
        }
        Err(RunError::Failure(format!(
            "{}: verdict for query {id} arrived where query {} was expected",
            self.label, self.received
        )))
    }

    fn failure(&self, error: impl std::fmt::Display) -> RunError {
        RunError::Failure(format!("{}: {error}", self.label))
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

pub(super) fn describe(status: &Status) -> String {
    match status.code() {
        Code::InvalidArgument => format!("rejected by the server: {}", status.message()),
        Code::ResourceExhausted => format!("over a server limit: {}", status.message()),
        Code::Unavailable => format!("server unavailable: {}", status.message()),
        code => format!("server error ({code:?}): {}", status.message()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{PackedTokenQueries, Query};

    #[test]
    fn queries_are_numbered_in_the_order_the_server_answers_them() {
        let mut batch = QueryBatch {
            queries: vec![Query::default(), Query::default()],
            packed_tokens: Some(PackedTokenQueries {
                token_counts: vec![1, 2, 1],
                ..PackedTokenQueries::default()
            }),
        };
        assert_eq!(number_queries(&mut batch, 5), 10);
        let ids: Vec<u64> = batch.queries.iter().map(|q| q.id).collect();
        assert_eq!(ids, vec![5, 6]);
        assert_eq!(batch.packed_tokens.unwrap().first_query_id, 7);
    }

    #[test]
    fn verdicts_out_of_order_fail_the_case() {
        let mut lines = JudgeLines {
            label: "test case 3 (line 9)",
            format: JudgeFormat::Chess,
            explain: false,
            received: 0,
        };
        let mut text = Vec::new();
        let packed = PackedVerdicts {
            first_query_id: 0,
            outcomes: vec![Outcome::Win as i32, Outcome::Lose as i32],
            ..PackedVerdicts::default()
        };
        lines.append_packed(&packed, &mut text).unwrap();
        assert_eq!(text, b"WIN\nLOSE\n");
        let late = PackedVerdicts {
            first_query_id: 3,
            ..PackedVerdicts::default()
        };
        let error = lines.append_packed(&late, &mut text).unwrap_err();
        assert_eq!(
            error.to_string(),
            "test case 3 (line 9): verdict for query 3 arrived where query 2 was expected"
        );
    }
}
