//! From the parser's events to the test cases' streams, and their output back in input order.
//!
//! The [`Dispatcher`] starts a [`Case`] per test case (a few at once) and queues a [`Slot`]
//! for each; [`write_in_order`] drains the slots in that order, so the output is the judge's
//! whatever order the streams finish in, and the first error in input order ends the run.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

use super::args::{JudgeFormat, Report};
use super::case::Case;
use super::case_output::CaseOutput;
use super::endpoints::Endpoints;
use super::error::RunError;
use super::input::CaseStart;
use super::input::InputEvent;
use super::output::{Output, ProgressCounters};

/// Test cases whose streams run at once. Many small test cases are bound by round trips, not
/// by work: a few streams in flight hide them. Their output is still written in input order
/// (the connection's window is sized for them all: see the client's windows).
const CASES_IN_FLIGHT: usize = crate::client::STREAMS_PER_CONNECTION;

/// What the writer prints next, in input order.
pub(super) enum Slot {
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
pub(super) struct Dispatcher {
    pub(super) endpoints: Arc<Endpoints>,
    pub(super) format: JudgeFormat,
    /// What is printed for each query.
    pub(super) report: Report,
    pub(super) progress: Arc<ProgressCounters>,
    pub(super) slots: mpsc::UnboundedSender<Slot>,
    /// `--retries`.
    pub(super) retries: u32,
    /// Bytes up to which waiting query batches are merged, and of each `PutGraph` chunk.
    pub(super) batch_bytes: usize,
    /// `--timings`.
    pub(super) timings: bool,
}

/// How the events of one test case ended.
enum CaseEvents {
    /// Its `End` was handed on: the next event starts a new test case.
    Complete,
    /// The case failed (it reports why) or the input did: nothing more to dispatch.
    Stopped,
    /// The parser stopped inside the case.
    InputClosed,
}

impl Dispatcher {
    /// Runs until the input ends, fails, or the writer stops.
    pub(super) async fn run(
        self,
        mut events: mpsc::Receiver<InputEvent>,
        parser: std::thread::JoinHandle<()>,
    ) {
        let permits = Arc::new(Semaphore::new(CASES_IN_FLIGHT));
        loop {
            let Some(event) = events.recv().await else {
                // The parser dropped its sender: it returned or panicked.
                if let Err(error) = join_parser(parser, false) {
                    let _ = self.slots.send(Slot::Error(error));
                }
                return;
            };
            let (number, label, graph) = match event {
                InputEvent::Start {
                    number,
                    label,
                    graph,
                } => (number, label, graph),
                InputEvent::Error(error) => {
                    let _ = self.slots.send(Slot::Error(error));
                    return;
                }
                InputEvent::Queries { .. } | InputEvent::End => {
                    let error =
                        RunError::Failure("internal error: queries outside a test case".into());
                    let _ = self.slots.send(Slot::Error(error));
                    return;
                }
            };
            let Ok(permit) = permits.clone().acquire_owned().await else {
                return; // never closed
            };
            let Some(case_events) = self.start_case(number, label, graph, permit) else {
                return; // the writer stopped
            };
            match forward_case_events(&mut events, &case_events).await {
                CaseEvents::Complete => {}
                CaseEvents::Stopped => return,
                CaseEvents::InputClosed => {
                    // A failure, never a clean end.
                    let error = join_parser(parser, true)
                        .expect_err("an end inside a test case is an error");
                    let _ = case_events.send(InputEvent::Error(error)).await;
                    return;
                }
            }
        }
    }

    /// Queues the case's slot for the writer and spawns its stream, which holds `permit`
    /// until it ends. Returns the sender of the case's events; None when the writer stopped.
    fn start_case(
        &self,
        number: u64,
        label: String,
        graph: CaseStart,
        permit: OwnedSemaphorePermit,
    ) -> Option<mpsc::Sender<InputEvent>> {
        let (case_events, case_receiver) = mpsc::channel(16);
        let (chunks, chunk_receiver) = mpsc::channel(64);
        let slot = Slot::Case {
            label: label.clone(),
            chunks: chunk_receiver,
        };
        self.slots.send(slot).ok()?;
        let case = Case {
            endpoints: self.endpoints.clone(),
            number,
            label,
            format: self.format,
            report: self.report.clone(),
            progress: self.progress.clone(),
            retries: self.retries,
            batch_bytes: self.batch_bytes,
            timings: self.timings,
        };
        tokio::spawn(async move {
            let _permit = permit;
            case.run(graph, case_receiver, chunks).await;
        });
        Some(case_events)
    }
}

/// Hands a test case's events to its stream, up to its `End`.
async fn forward_case_events(
    events: &mut mpsc::Receiver<InputEvent>,
    case_events: &mpsc::Sender<InputEvent>,
) -> CaseEvents {
    loop {
        let Some(event) = events.recv().await else {
            return CaseEvents::InputClosed;
        };
        let last = matches!(event, InputEvent::End);
        let stop = matches!(event, InputEvent::Error(_) | InputEvent::Start { .. });
        if case_events.send(event).await.is_err() || stop {
            return CaseEvents::Stopped;
        }
        if last {
            return CaseEvents::Complete;
        }
    }
}

/// Writes the test cases' outputs in input order and stops at the first error.
pub(super) async fn write_in_order(
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
                Some(CaseOutput::Text(text)) => output.send(text).await?,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::error::EXIT_FAILURE;

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
