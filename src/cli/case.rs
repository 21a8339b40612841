//! One test case: one `Evaluate` stream, from the parser's events to the judge's output.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Status};

use super::input::InputEvent;
use super::output::{ProgressCounters, case_footer, case_header, format_outcome, format_verdict};
use super::{JudgeFormat, RunError};
use crate::client::GrundyClient;
use crate::proto::{EvaluateRequest, EvaluateStart, Outcome, evaluate_request::Payload};

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

pub(super) fn describe(status: &Status) -> String {
    match status.code() {
        Code::InvalidArgument => format!("rejected by the server: {}", status.message()),
        Code::ResourceExhausted => format!("over a server limit: {}", status.message()),
        Code::Unavailable => format!("server unavailable: {}", status.message()),
        code => format!("server error ({code:?}): {}", status.message()),
    }
}
