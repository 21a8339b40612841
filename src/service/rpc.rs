//! The bookkeeping of one RPC, and the one helper that produces a response stream.
//!
//! Every RPC holds an [`Rpc`] guard from its first line to the end of its response stream: it
//! holds a slot of `max_concurrent_streams`, counts as an active stream, carries the span and,
//! when dropped, records the outcome in the metrics and the log. Every wait of a stream (for
//! the client's next message, for a computation, for room in the response buffer) also ends
//! when the client leaves, its deadline passes or the server cancels streams at shutdown.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, mpsc, watch};
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Response, Status};
use tracing::{Instrument, Span};

use super::deadline::{Deadline, deadline_passed};
use super::departure::ClientLeft;
use super::error::{ServiceError, request_stream_status};
use super::lifecycle::{ActiveGuard, Phase, cancelled};
use super::metrics::{MessageSizes, Metrics, QueryCounts, code_name};
use crate::engine::Analysis;
use crate::proto;
use crate::wire::WireMessage;

/// A server-streaming response body.
pub(crate) type ResponseStream<M> = ReceiverStream<Result<M, Status>>;
type ResponseSender<M> = mpsc::Sender<Result<M, Status>>;
/// A boxed future borrowing its producer's state.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How long a stream that ends with an error waits for room to deliver that error.
const FINAL_STATUS_GRACE: Duration = Duration::from_secs(2);

/// The bookkeeping of one RPC; see the module documentation.
pub(crate) struct Rpc {
    name: &'static str,
    pub(crate) span: Span,
    /// The size histograms of this method's messages.
    pub(crate) sizes: MessageSizes,
    started: Instant,
    deadline: Option<Deadline>,
    phase: watch::Receiver<Phase>,
    counts: QueryCounts,
    /// The final status code; None when the RPC was dropped before it finished (the client
    /// went away while the handler was still working).
    code: Option<Code>,
    metrics: Arc<Metrics>,
    /// Set when the client left mid-stream (absent when the service is called directly).
    client_left: Option<ClientLeft>,
    _active: ActiveGuard,
    _slot: OwnedSemaphorePermit,
}

/// What [`Rpc::new`] needs besides the RPC's name.
pub(crate) struct RpcParts {
    pub(crate) started: Instant,
    pub(crate) deadline: Option<Deadline>,
    pub(crate) phase: watch::Receiver<Phase>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) active: ActiveGuard,
    pub(crate) slot: OwnedSemaphorePermit,
    pub(crate) client_left: Option<ClientLeft>,
}

/// Why a response stream stopped early.
pub(crate) enum Stop {
    /// The client is gone: nobody to tell.
    ClientGone,
    /// Reported to the client as the stream's final status.
    Failed(Status),
}

impl From<ServiceError> for Stop {
    fn from(error: ServiceError) -> Self {
        Self::Failed(error.into())
    }
}

impl From<Status> for Stop {
    fn from(status: Status) -> Self {
        Self::Failed(status)
    }
}

impl Rpc {
    /// Starts the bookkeeping of the RPC `name` (its slot and active count already taken).
    pub(crate) fn new(name: &'static str, parts: RpcParts) -> Self {
        let span = tracing::info_span!(
            "rpc",
            rpc = name,
            graph_id = tracing::field::Empty,
            vertices = tracing::field::Empty,
            edges = tracing::field::Empty,
        );
        parts.metrics.inflight_streams.inc();
        Self {
            name,
            span,
            sizes: parts.metrics.message_sizes(name),
            started: parts.started,
            deadline: parts.deadline,
            phase: parts.phase,
            counts: QueryCounts::default(),
            code: None,
            metrics: parts.metrics,
            client_left: parts.client_left,
            _active: parts.active,
            _slot: parts.slot,
        }
    }

    /// Records the graph the RPC works on in its span.
    pub(crate) fn record_graph(&self, graph_id: &str, analysis: &Analysis) {
        let graph = analysis.game().graph();
        self.span.record("graph_id", graph_id);
        self.span.record("vertices", graph.vertex_count());
        self.span.record("edges", graph.edge_count());
    }

    /// Marks the RPC as failed with `status`, and returns it.
    pub(crate) fn fail(&mut self, status: Status) -> Status {
        self.code = Some(status.code());
        status
    }

    /// Marks a unary RPC as answered.
    pub(crate) fn succeed(&mut self) {
        self.code = Some(Code::Ok);
    }

    /// Reads the first message of a request stream under the same guards, ending the RPC
    /// with DEADLINE_EXCEEDED when none arrives within `start_timeout`: a stream that never
    /// starts must not hold its concurrency slot forever.
    /// Its size is recorded in the request-size metric.
    pub(crate) async fn first_message<T: WireMessage>(
        &mut self,
        next: impl Future<Output = Result<Option<T>, Status>>,
        start_timeout: Duration,
    ) -> Result<Option<T>, Status> {
        let first = match self
            .guard(tokio::time::timeout(start_timeout, next))
            .await?
        {
            Ok(message) => message.map_err(request_stream_status)?,
            Err(_) => return Err(ServiceError::StartTimeout(start_timeout).into()),
        };
        if let Some(first) = &first {
            self.sizes.request.observe(first.wire_len() as f64);
        }
        Ok(first)
    }

    /// Awaits `work`, unless the server cancels streams or the client's deadline passes
    /// first.
    ///
    /// Both are checked before `work` is polled; `work` is then polled first, so that work
    /// ready at once (an evaluation done inline, a batch already read, room in the response
    /// buffer: most waits of a busy stream) costs no registration with the server's phase or
    /// the timer. Only a wait that has to sleep registers for all three.
    pub(crate) async fn guard<T>(&mut self, work: impl Future<Output = T>) -> Result<T, Status> {
        self.stopped()?;
        let deadline = self.deadline;
        tokio::select! {
            biased;
            value = work => Ok(value),
            () = cancelled(&mut self.phase) => Err(ServiceError::ShuttingDown.into()),
            () = deadline_passed(deadline) => Err(deadline_exceeded(deadline)),
        }
    }

    /// An error if the server has cancelled streams or the client's deadline has passed.
    fn stopped(&self) -> Result<(), Status> {
        if *self.phase.borrow() == Phase::Cancelling {
            return Err(ServiceError::ShuttingDown.into());
        }
        match self.deadline {
            Some(deadline) if deadline.at <= Instant::now() => {
                Err(deadline_exceeded(Some(deadline)))
            }
            _ => Ok(()),
        }
    }

    /// Counts verdicts handed to the client.
    fn count_answered(&mut self, counts: &QueryCounts) {
        self.metrics.queries_answered(counts);
        self.counts.add(counts);
    }

    /// Produces the RPC's response stream on a task of its own: `produce` sends the messages
    /// through the [`Responder`]; a failure it returns becomes the stream's final status.
    pub(crate) fn stream_responses<M, F>(
        self,
        buffer: usize,
        produce: F,
    ) -> Response<ResponseStream<M>>
    where
        M: Send + 'static,
        F: for<'a> FnOnce(&'a mut Responder<M>) -> BoxFuture<'a, Result<(), Stop>> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel(buffer.max(1));
        let span = self.span.clone();
        tokio::spawn(
            async move {
                let mut responder = Responder { rpc: self, tx };
                let result = produce(&mut responder).await;
                responder.end(result).await;
            }
            .instrument(span),
        );
        Response::new(ReceiverStream::new(rx))
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        // Dropped without a code: the handler's future was dropped, i.e. the client left. A
        // client that left mid-stream also made whatever failure the handler saw in its
        // truncated request (an incomplete graph, a broken stream).
        let left = self.client_left.as_ref().is_some_and(ClientLeft::left);
        let code = match self.code {
            Some(code) if code == Code::Ok || !left => code,
            _ => Code::Cancelled,
        };
        let counts = self.counts;
        tracing::info!(
            parent: &self.span,
            code = code_name(code),
            duration_ms = self.started.elapsed().as_secs_f64() * 1e3,
            queries = counts.total(),
            win = counts.win,
            lose = counts.lose,
            draw = counts.draw,
            errors = counts.error,
            "rpc finished"
        );
        self.metrics
            .request_finished(self.name, code, self.started.elapsed());
        self.metrics.inflight_streams.dec();
    }
}

/// The producing end of a response stream, with its RPC's guards.
pub(crate) struct Responder<M> {
    /// The RPC being answered.
    pub(crate) rpc: Rpc,
    tx: ResponseSender<M>,
}

impl<M> Responder<M> {
    /// Like [`Rpc::guard`], and also stops when the client is gone (its end of the response
    /// stream dropped), before `work` or once it is done: a client whose connection went away
    /// ends its request stream and its response stream at once, and the stream counts as
    /// cancelled, not as a clean end of its requests.
    pub(crate) async fn guard<T>(&mut self, work: impl Future<Output = T>) -> Result<T, Stop> {
        if self.tx.is_closed() {
            return Err(Stop::ClientGone);
        }
        let value = tokio::select! {
            biased;
            result = self.rpc.guard(work) => result.map_err(Stop::Failed)?,
            () = self.tx.closed() => return Err(Stop::ClientGone),
        };
        if self.tx.is_closed() {
            return Err(Stop::ClientGone);
        }
        Ok(value)
    }

    /// Sends one response, waiting for room in the buffer under the same guards. Its size
    /// is recorded in the response-size metric once it is in the buffer: a response that
    /// never reaches it (the client gone, the deadline passed, the server stopping) is not.
    pub(crate) async fn send(&mut self, message: M) -> Result<(), Stop>
    where
        M: WireMessage,
    {
        let size = message.wire_len();
        self.enqueue(message).await?;
        self.rpc.sizes.response.observe(size as f64);
        Ok(())
    }

    /// Puts one response in the buffer, waiting for room under the same guards.
    ///
    /// With room in the buffer (a client that keeps up) the response goes in at once, after
    /// the same checks, without the wait's future: a response message is a few hundred bytes,
    /// and each layer of that future moved it again (2% of the server's CPU on batches of 64
    /// queries).
    async fn enqueue(&mut self, message: M) -> Result<(), Stop> {
        self.rpc.stopped().map_err(Stop::Failed)?;
        let message = match self.tx.try_send(Ok(message)) {
            Ok(()) => {
                // A wait would have spent the task's share of the runtime's budget; so does
                // this, so that a producer that never waits still yields to other tasks.
                tokio::task::consume_budget().await;
                return Ok(());
            }
            Err(mpsc::error::TrySendError::Closed(_)) => return Err(Stop::ClientGone),
            Err(mpsc::error::TrySendError::Full(message)) => message,
        };
        let tx = self.tx.clone();
        self.guard(tx.send(message))
            .await?
            .map_err(|_| Stop::ClientGone)
    }

    /// Ends the stream: delivers a failure as the final status when the client is still there
    /// (waiting a little for room in the buffer).
    async fn end(self, result: Result<(), Stop>) {
        let Self { mut rpc, tx } = self;
        match result {
            Ok(()) => rpc.code = Some(Code::Ok),
            Err(Stop::ClientGone) => rpc.code = Some(Code::Cancelled),
            Err(Stop::Failed(status)) => {
                rpc.code = Some(if tx.is_closed() {
                    Code::Cancelled
                } else {
                    status.code()
                });
                let _ = tokio::time::timeout(FINAL_STATUS_GRACE, tx.send(Err(status))).await;
            }
        }
    }
}

/// A response message of verdicts: `EvaluateResponse` itself, or `EvaluateBatch`'s own
/// `EvaluateBatchResponse` made from one.
pub(crate) trait Verdicts: From<proto::EvaluateResponse> + WireMessage {}

impl<M: From<proto::EvaluateResponse> + WireMessage> Verdicts for M {}

impl<M: Verdicts> Responder<M> {
    /// Sends a response of verdicts, counting them once it is in the buffer (as
    /// [`Responder::send`] records its size): verdicts that never reach the client are not
    /// counted as answered.
    pub(crate) async fn send_verdicts(
        &mut self,
        response: proto::EvaluateResponse,
    ) -> Result<(), Stop> {
        let counts = verdict_counts(&response);
        self.send(response.into()).await?;
        self.rpc.count_answered(&counts);
        Ok(())
    }
}

/// The error of a stream whose deadline passed.
fn deadline_exceeded(deadline: Option<Deadline>) -> Status {
    let timeout = deadline.map_or(Duration::ZERO, |d| d.timeout);
    ServiceError::DeadlineExceeded(timeout).into()
}

/// The verdicts of a response by outcome: an error, or an outcome outside the enum, counts
/// as an error.
fn verdict_counts(response: &proto::EvaluateResponse) -> QueryCounts {
    let mut counts = QueryCounts::default();
    for verdict in &response.verdicts {
        let outcome = match verdict.error {
            Some(_) => None,
            None => proto::Outcome::try_from(verdict.outcome).ok(),
        };
        match outcome {
            Some(proto::Outcome::Win) => counts.win += 1,
            Some(proto::Outcome::Lose) => counts.lose += 1,
            Some(proto::Outcome::Draw) => counts.draw += 1,
            _ => counts.error += 1,
        }
    }
    if let Some(packed) = &response.packed_verdicts {
        // One comparison pass per outcome (each vectorises, where a tally indexed by the
        // value waits on its own last increment).
        let outcomes = &packed.outcomes;
        let count_of = |outcome: proto::Outcome| {
            outcomes
                .iter()
                .filter(|&&value| value == outcome as i32)
                .count() as u64
        };
        let (win, lose, draw) = (
            count_of(proto::Outcome::Win),
            count_of(proto::Outcome::Lose),
            count_of(proto::Outcome::Draw),
        );
        counts.win += win;
        counts.lose += lose;
        counts.draw += draw;
        counts.error += outcomes.len() as u64 - win - lose - draw;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::lifecycle::Lifecycle;

    /// An RPC of `Evaluate` recording into `metrics`, with `deadline`.
    fn evaluate_rpc(metrics: &Arc<Metrics>, deadline: Option<Deadline>) -> Rpc {
        let lifecycle = Arc::new(Lifecycle::new(4));
        Rpc::new(
            "Evaluate",
            RpcParts {
                started: Instant::now(),
                deadline,
                phase: lifecycle.subscribe(),
                metrics: metrics.clone(),
                active: lifecycle.enter(),
                slot: lifecycle.try_slot().expect("a free slot"),
                client_left: None,
            },
        )
    }

    #[tokio::test]
    async fn verdicts_count_as_answered_only_once_in_the_response_buffer() {
        let metrics = Arc::new(Metrics::new());
        let response = || proto::EvaluateResponse {
            packed_verdicts: Some(proto::PackedVerdicts {
                outcomes: vec![
                    proto::Outcome::Win as i32,
                    proto::Outcome::Lose as i32,
                    proto::Outcome::Lose as i32,
                ],
                ..Default::default()
            }),
            ..Default::default()
        };
        // A client that reads: counted, and its size recorded.
        let (tx, mut rx) = mpsc::channel(1);
        let mut responder: Responder<proto::EvaluateResponse> = Responder {
            rpc: evaluate_rpc(&metrics, None),
            tx,
        };
        assert!(responder.send_verdicts(response()).await.is_ok());
        assert!(rx.recv().await.is_some_and(|message| message.is_ok()));
        // The client gone: neither.
        drop(rx);
        let gone = responder.send_verdicts(response()).await;
        assert!(matches!(gone, Err(Stop::ClientGone)));
        // The deadline passed before the send: neither.
        let (tx, _rx) = mpsc::channel(1);
        let passed = Deadline {
            at: Instant::now(),
            timeout: Duration::ZERO,
        };
        let mut late: Responder<proto::EvaluateResponse> = Responder {
            rpc: evaluate_rpc(&metrics, Some(passed)),
            tx,
        };
        let late = late.send_verdicts(response()).await;
        assert!(
            matches!(late, Err(Stop::Failed(status)) if status.code() == Code::DeadlineExceeded)
        );
        let text = metrics.encode();
        for line in [
            "grundy_queries_total{outcome=\"win\"} 1",
            "grundy_queries_total{outcome=\"lose\"} 2",
            "grundy_response_message_bytes_count{rpc=\"Evaluate\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
    }

    #[test]
    fn verdicts_are_counted_by_outcome_singly_and_packed() {
        let single = |outcome: proto::Outcome, error: bool| proto::Verdict {
            outcome: outcome as i32,
            error: error.then(Default::default),
            ..Default::default()
        };
        let (win, lose, draw, none) = (
            proto::Outcome::Win as i32,
            proto::Outcome::Lose as i32,
            proto::Outcome::Draw as i32,
            proto::Outcome::Unspecified as i32,
        );
        let response = proto::EvaluateResponse {
            verdicts: vec![
                single(proto::Outcome::Win, false),
                single(proto::Outcome::Draw, false),
                single(proto::Outcome::Win, true),
            ],
            packed_verdicts: Some(proto::PackedVerdicts {
                outcomes: [win, lose, lose, draw, none, 77, -1, win]
                    .into_iter()
                    .cycle()
                    .take(8 * 1000 + 3)
                    .collect(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let counts = verdict_counts(&response);
        assert_eq!(
            counts,
            QueryCounts {
                win: 1 + 2 * 1000 + 1,
                lose: 2 * 1000 + 2,
                draw: 1 + 1000,
                error: 1 + 3 * 1000,
            }
        );
    }
}
