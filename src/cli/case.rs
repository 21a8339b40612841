//! One test case: its `Evaluate` stream, from the parser's events to the judge's output,
//! resumed on another server (or the same one once it is back) when it breaks.
//!
//! [`Case::run`] makes attempts (see `attempt`) on the endpoints in turn, starting at the
//! case's own (cases are spread over the endpoints), until one answers every query; an
//! attempt that breaks with a retryable failure (see `retry`) is followed by another from
//! the first unanswered query, after a capped exponential backoff, up to `--retries` in a
//! row without progress. The output is never repeated nor cut: every line is printed once.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tonic::{Code, Status};

use super::args::{JudgeFormat, Report};
use super::attempt::{Broken, CaseState, Input, SentGraph};
use super::case_output::{CaseOutput, send_text};
use super::endpoints::Endpoints;
use super::error::{RunError, describe};
use super::input::{CaseStart, InputEvent};
use super::output::stderr_line;
use super::output::{ProgressCounters, case_footer, case_header};
use super::replay::Replay;
use super::retry;
use super::verdicts::JudgeLines;

/// One test case: one `Evaluate` stream (or more, when one breaks).
pub(super) struct Case {
    pub(super) endpoints: Arc<Endpoints>,
    /// 1-based test case (or game) number.
    pub(super) number: u64,
    pub(super) label: String,
    pub(super) format: JudgeFormat,
    /// What is printed for each query.
    pub(super) report: Report,
    pub(super) progress: Arc<ProgressCounters>,
    /// Attempts after a failure without progress, before giving up.
    pub(super) retries: u32,
    /// Bytes up to which waiting query batches are merged, and of each `PutGraph` chunk.
    pub(super) batch_bytes: usize,
    /// `--timings`: a line on stderr per test case.
    pub(super) timings: bool,
}

impl Case {
    /// Streams the case's events (up to its `End`) to the servers and its output to `chunks`,
    /// which always ends with `Done` or `Failed` (unless the writer is gone).
    pub(super) async fn run(
        self,
        graph: CaseStart,
        mut events: mpsc::Receiver<InputEvent>,
        chunks: mpsc::Sender<CaseOutput>,
    ) {
        let last = match self.stream(graph, &mut events, &chunks).await {
            Ok(None) => CaseOutput::Done,
            Ok(Some(error)) | Err(error) => CaseOutput::Failed(error),
        };
        let _ = chunks.send(last).await;
    }

    /// Returns `Some(error)` when the input turned out malformed inside this case (after
    /// sending every verdict before it).
    async fn stream(
        &self,
        graph: CaseStart,
        events: &mut mpsc::Receiver<InputEvent>,
        output: &mpsc::Sender<CaseOutput>,
    ) -> Result<Option<RunError>, RunError> {
        let CaseStart {
            graph,
            upload,
            parsed_in,
        } = graph;
        let mut graph = SentGraph {
            message: Arc::new(graph),
            report: self.report.clone(),
            upload,
            id: None,
            chunk_bytes: self.batch_bytes,
            upload_time: Duration::ZERO,
            open_time: Duration::ZERO,
        };
        let lines = JudgeLines::new(&self.label, self.number, self.format, self.report.clone());
        let mut state = CaseState {
            replay: Replay::with_log(lines.query_log()),
            lines,
            input: Input::Open,
            pending: None,
            merge_bytes: self.batch_bytes,
            header: Some(self.header()),
        };
        let began = Instant::now();
        self.attempts(&mut state, &mut graph, events, output)
            .await?;
        if self.timings {
            self.report_timings(parsed_in, began.elapsed(), &graph, state.replay.sent());
        }
        self.finish(state, output).await
    }

    /// Makes attempts until one answers every query, moving on to the next endpoint after a
    /// retryable failure; fails after `--retries` failures in a row without a new verdict.
    async fn attempts(
        &self,
        state: &mut CaseState<'_>,
        graph: &mut SentGraph,
        events: &mut mpsc::Receiver<InputEvent>,
        output: &mpsc::Sender<CaseOutput>,
    ) -> Result<(), RunError> {
        // Cases start on the endpoints in turn, skipping those found dead; a failed attempt
        // moves on to the next live one.
        let own = (self.number.saturating_sub(1) % self.endpoints.len() as u64) as usize;
        let mut index = self.endpoints.choose(own);
        let mut retry = 0u32;
        // What broke the first stream of the current run of failures: the news for the user
        // (the retries often fail only because that server is gone).
        let mut first_broken = String::new();
        loop {
            let endpoint = if graph.upload {
                self.endpoints.for_upload(index).await?
            } else {
                self.endpoints.get(index)
            };
            let before = state.lines.received;
            let broken = match state
                .attempt(endpoint, graph, events, output, &self.progress)
                .await
            {
                Ok(()) => {
                    self.endpoints.mark_live(index);
                    return Ok(());
                }
                Err(Broken::Run(error)) => return Err(error),
                Err(Broken::Status { status, opening }) => {
                    if opening && status.code() == Code::InvalidArgument {
                        return Err(RunError::BadInput(self.server_said(&status)));
                    }
                    if retry::is_idle_timeout(&status) {
                        // The server ended a stream that had every answer and sent nothing
                        // more: nothing failed. A new stream on the same server opens once
                        // more input comes (each time an event of the input at least, so
                        // this loop ends with it), without a retry or a wait; at once when
                        // a query went out as the server ended the stream (its answer is
                        // owed, and the input may wait for it).
                        let all_answered = state.replay.sent() == state.lines.received;
                        if all_answered
                            && state.pending.is_none()
                            && matches!(state.input, Input::Open)
                        {
                            state.pending = events.recv().await;
                        }
                        continue;
                    }
                    retry::classify(
                        &status,
                        &endpoint.url,
                        endpoint.connection.as_ref(),
                        &self.label,
                    )
                    .await?
                }
            };
            if output.is_closed() {
                // Nobody reads this case's output any more (stdout closed, or an earlier case
                // failed): the broken stream is the run ending, not a failure to report.
                return Err(RunError::OutputClosed);
            }
            self.endpoints.mark_failed(index);
            if state.lines.received > before {
                retry = 0; // progress: the budget is for failures in a row
            }
            if retry == 0 {
                first_broken.clone_from(&broken);
            }
            retry += 1;
            if retry > self.retries {
                return Err(self.gave_up(&first_broken, &broken));
            }
            index = self.endpoints.choose(index + 1);
            let delay = retry::backoff(retry);
            stderr_line(format_args!(
                "grundy: {}: {broken}; resuming at query {} on {} in {} ms (retry {retry} of {})",
                self.label,
                state.lines.received + 1,
                self.endpoints.get(index).url,
                delay.as_millis(),
                self.retries
            ));
            tokio::time::sleep(delay).await;
        }
    }

    /// The `--timings` line: where the case's time went.
    fn report_timings(
        &self,
        parsed_in: Duration,
        total: Duration,
        graph: &SentGraph,
        queries: u64,
    ) {
        let streaming = total.saturating_sub(graph.upload_time + graph.open_time);
        // The upload is named only when there was one (a graph too large for one message).
        let (upload, open) = if graph.upload {
            let upload = graph.upload_time.as_secs_f64();
            (
                format!(" upload {upload:.3} s (PutGraph, with the server's analysis),"),
                "",
            )
        } else {
            (String::new(), " (with the graph's analysis)")
        };
        stderr_line(format_args!(
            "grundy: {}: parse {:.3} s,{upload} open {:.3} s{open}, queries {:.3} s \
             ({queries} queries)",
            self.label,
            parsed_in.as_secs_f64(),
            graph.open_time.as_secs_f64(),
            streaming.as_secs_f64(),
        ));
    }

    /// Ends a case whose stream closed: every query answered, then the footer (unless the
    /// input failed inside the case, which is then the case's result).
    async fn finish(
        &self,
        state: CaseState<'_>,
        output: &mpsc::Sender<CaseOutput>,
    ) -> Result<Option<RunError>, RunError> {
        let (sent, received) = (state.replay.sent(), state.lines.received);
        let input_error = match state.input {
            Input::Ended(error) => error,
            Input::Open => Some(RunError::Failure(format!(
                "{}: the server ended the stream before the input did",
                self.label
            ))),
        };
        if received != sent {
            return Err(RunError::Failure(format!(
                "{}: the server answered {received} of {sent} queries",
                self.label
            )));
        }
        self.progress.cases.fetch_add(1, Ordering::Relaxed);
        if input_error.is_none() {
            send_text(output, self.footer()).await?;
        }
        Ok(input_error)
    }

    /// The error once the retries are exhausted.
    fn gave_up(&self, first: &str, last: &str) -> RunError {
        let retries = match self.retries {
            0 => "no retries (--retries 0)".to_string(),
            1 => "gave up after 1 retry (--retries)".to_string(),
            n => format!("gave up after {n} retries (--retries)"),
        };
        let last = if last == first {
            String::new()
        } else {
            format!("; last: {last}")
        };
        RunError::Failure(format!("{}: {first}; {retries}{last}", self.label))
    }

    /// The case's header line (`Game#g:`); none in a JSON report.
    fn header(&self) -> Vec<u8> {
        match self.report {
            Report::Judge { .. } => case_header(self.format, self.number),
            Report::Analysis { .. } => Vec::new(),
        }
    }

    /// The case's footer (a blank line after an addsub game); none in a JSON report.
    fn footer(&self) -> Vec<u8> {
        match self.report {
            Report::Judge { .. } => case_footer(self.format),
            Report::Analysis { .. } => Vec::new(),
        }
    }

    fn server_said(&self, status: &Status) -> String {
        format!("{}: {}", self.label, describe(status))
    }
}
