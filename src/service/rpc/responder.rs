//! The producing end of a response stream: [`Rpc::stream_responses`] runs a producer on a
//! task of its own, and the [`Responder`] it is given sends under the RPC's guards, counts
//! what reaches the client, and delivers a failure as the stream's final status.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tonic::{Code, Response, Status};
use tracing::Instrument;

use super::{BoxFuture, Rpc, Stop};
use crate::proto::{self, EncodedVerdicts};
use crate::service::metrics::QueryCounts;
use crate::wire::WireMessage;

/// Bytes of encoded responses a stream holds for a client that does not read them yet,
/// beside the bound on their count (`ServiceConfig::response_buffer`, 64): a client that
/// stops reading a stream of large responses (moves, position analyses) makes the server wait
/// at this many, instead of holding 64 messages of up to the message limit each (some 500 MiB
/// a stream of 50,000-query batches with moves; about 60 MiB with this bound, the decoded
/// messages and the batch being answered included). A response larger than this waits for
/// the buffer to be empty, then goes alone. The judge's responses (some 8 KiB for 4,096
/// verdicts) never reach it.
const RESPONSE_BUFFER_BYTES: usize = 4 << 20;

/// A response in the buffer, holding its share of [`RESPONSE_BUFFER_BYTES`] until the
/// transport takes it.
struct Queued<M> {
    item: Result<M, Status>,
    _room: Option<OwnedSemaphorePermit>,
}

/// A server-streaming response body of `grundy.v1.GrundyService`: the consuming end of a
/// stream's response buffer.
pub struct ResponseStream<M> {
    rx: mpsc::Receiver<Queued<M>>,
}

impl<M> tokio_stream::Stream for ResponseStream<M> {
    type Item = Result<M, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        // The response's share of the buffer goes back as the transport takes it.
        self.rx
            .poll_recv(cx)
            .map(|queued| queued.map(|queued| queued.item))
    }
}

impl<M> std::fmt::Debug for ResponseStream<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseStream")
            .field("buffered", &self.rx.len())
            .finish()
    }
}

type ResponseSender<M> = mpsc::Sender<Queued<M>>;

/// How long a stream that ends with an error waits for room to deliver that error.
const FINAL_STATUS_GRACE: Duration = Duration::from_secs(2);

impl Rpc {
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
                let mut responder = Responder::new(self, tx);
                let result = produce(&mut responder).await;
                responder.end(result).await;
            }
            .instrument(span),
        );
        Response::new(ResponseStream { rx })
    }
}

/// The producing end of a response stream, with its RPC's guards.
pub(crate) struct Responder<M> {
    /// The RPC being answered.
    pub(crate) rpc: Rpc,
    tx: ResponseSender<M>,
    /// The buffer's room in bytes ([`RESPONSE_BUFFER_BYTES`]), and what is left of it.
    room_bytes: usize,
    room: Arc<Semaphore>,
}

impl<M> Responder<M> {
    fn new(rpc: Rpc, tx: ResponseSender<M>) -> Self {
        Self::with_room(rpc, tx, RESPONSE_BUFFER_BYTES)
    }

    fn with_room(rpc: Rpc, tx: ResponseSender<M>, bytes: usize) -> Self {
        Self {
            rpc,
            tx,
            room_bytes: bytes,
            room: Arc::new(Semaphore::new(bytes)),
        }
    }

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

    /// Done once the client has read every response sent so far (the buffer's whole room is
    /// free again: each response holds at least a byte of it until the transport takes it).
    /// Owns what it waits on, so that it can be awaited under [`Responder::guard`].
    pub(crate) fn all_read(&self) -> impl Future<Output = ()> + Send + 'static {
        let room = self.room.clone();
        let bytes = self.room_bytes as u32;
        async move {
            // Closed only with the semaphore's owner gone: nothing more to wait for.
            let _ = room.acquire_many_owned(bytes).await;
        }
    }

    /// Sends one response, waiting for room in the buffer under the same guards. Its size
    /// is recorded in the response-size metric once it is in the buffer: a response that
    /// never reaches it (the client gone, the deadline passed, the server stopping) is not.
    pub(crate) async fn send(&mut self, message: M) -> Result<(), Stop>
    where
        M: WireMessage,
    {
        let size = message.wire_len();
        let share = self.room_for(size).await?;
        self.enqueue(message, share).await?;
        self.rpc.sizes.response.observe(size as f64);
        Ok(())
    }

    /// Takes `size` bytes of the buffer's room (all of it for a larger response), waiting
    /// under the guards of [`Responder::guard`] while the client has not read enough.
    async fn room_for(&mut self, size: usize) -> Result<OwnedSemaphorePermit, Stop> {
        let bytes = size.clamp(1, self.room_bytes) as u32;
        if let Ok(share) = self.room.clone().try_acquire_many_owned(bytes) {
            return Ok(share);
        }
        let room = self.room.clone();
        self.guard(room.acquire_many_owned(bytes))
            .await?
            .map_err(|_| Stop::ClientGone)
    }

    /// Puts one response in the buffer with its `share` of the room, waiting for a place
    /// under the same guards.
    ///
    /// With a place in the buffer (a client that keeps up) the response goes in at once,
    /// after the same checks, without the wait's future: a response message is a few hundred
    /// bytes, and each layer of that future moved it again (2% of the server's CPU on
    /// batches of 64 queries).
    async fn enqueue(&mut self, message: M, share: OwnedSemaphorePermit) -> Result<(), Stop> {
        self.rpc.stopped().map_err(Stop::Failed)?;
        let queued = Queued {
            item: Ok(message),
            _room: Some(share),
        };
        let queued = match self.tx.try_send(queued) {
            Ok(()) => {
                // A wait would have spent the task's share of the runtime's budget; so does
                // this, so that a producer that never waits still yields to other tasks.
                tokio::task::consume_budget().await;
                return Ok(());
            }
            Err(mpsc::error::TrySendError::Closed(_)) => return Err(Stop::ClientGone),
            Err(mpsc::error::TrySendError::Full(queued)) => queued,
        };
        // No place: wait under the RPC's guards. The send itself fails if the client leaves
        // meanwhile; once it succeeds the response is in the buffer, and counts as sent.
        self.rpc
            .guard(self.tx.send(queued))
            .await
            .map_err(Stop::Failed)?
            .map_err(|_| Stop::ClientGone)
    }

    /// Ends the stream: delivers a failure as the final status when the client is still there
    /// (waiting a little for room in the buffer).
    async fn end(self, result: Result<(), Stop>) {
        let Self { mut rpc, tx, .. } = self;
        match result {
            Ok(()) => rpc.code = Some(Code::Ok),
            // Left without a code: the client is gone (see `Rpc`'s drop).
            Err(Stop::ClientGone) => {}
            Err(Stop::Failed(status)) => {
                if !tx.is_closed() {
                    rpc.failed_with(&status);
                }
                let last = Queued {
                    item: Err(status),
                    _room: None,
                };
                let _ = tokio::time::timeout(FINAL_STATUS_GRACE, tx.send(last)).await;
            }
        }
    }
}

/// A response message of verdicts as the server sends it: `EvaluateResponse` itself, or
/// `EvaluateBatch`'s own `EvaluateBatchResponse` made from one, or verdicts encoded already.
pub(crate) trait Verdicts:
    From<proto::EvaluateResponse> + From<EncodedVerdicts> + WireMessage
{
}

impl<M: From<proto::EvaluateResponse> + From<EncodedVerdicts> + WireMessage> Verdicts for M {}

impl<M: Verdicts> Responder<M> {
    /// Sends a response of verdicts, counting them once it is in the buffer (as
    /// [`Responder::send`] records its size): verdicts that never reach the client are not
    /// counted as answered.
    pub(crate) async fn send_verdicts(
        &mut self,
        response: proto::EvaluateResponse,
    ) -> Result<(), Stop> {
        let counts = verdict_counts(&response);
        self.send_counted(response.into(), &counts).await
    }

    /// Sends verdicts encoded already, `counts` of them by outcome, as
    /// [`Responder::send_verdicts`] does.
    pub(crate) async fn send_encoded(
        &mut self,
        verdicts: EncodedVerdicts,
        counts: &QueryCounts,
    ) -> Result<(), Stop> {
        self.send_counted(verdicts.into(), counts).await
    }

    async fn send_counted(&mut self, message: M, counts: &QueryCounts) -> Result<(), Stop> {
        self.send(message).await?;
        self.rpc.count_answered(counts);
        Ok(())
    }
}

/// The verdicts of a response by outcome: an error, or an outcome outside the enum, counts
/// as an error.
fn verdict_counts(response: &proto::EvaluateResponse) -> QueryCounts {
    let mut counts = QueryCounts::default();
    for verdict in &response.verdicts {
        counts.count(QueryCounts::outcome_of(verdict));
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
    use std::sync::Arc;

    use tokio::time::Instant;

    use super::*;
    use crate::service::lifecycle::Lifecycle;
    use crate::service::metrics::Metrics;
    use crate::service::rpc::RpcParts;
    use crate::service::rpc::deadline::Deadline;

    /// An RPC of `Evaluate` recording into `metrics`, with `deadline`.
    fn evaluate_rpc(metrics: &Arc<Metrics>, deadline: Option<Deadline>) -> Rpc {
        let lifecycle = Arc::new(Lifecycle::new(4));
        Rpc::new(
            "Evaluate",
            RpcParts {
                protocol: crate::service::rpc::protocol::Protocol::Grpc,
                started: Instant::now(),
                deadline,
                phase: lifecycle.subscribe(),
                metrics: metrics.clone(),
                active: lifecycle.enter(),
                slot: lifecycle.try_slot().expect("a free slot"),
                client_left: None,
                activity: None,
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
        let mut responder: Responder<proto::Sent<proto::EvaluateResponse>> =
            Responder::new(evaluate_rpc(&metrics, None), tx);
        assert!(responder.send_verdicts(response()).await.is_ok());
        assert!(rx.recv().await.is_some_and(|message| message.item.is_ok()));
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
        let mut late: Responder<proto::Sent<proto::EvaluateResponse>> =
            Responder::new(evaluate_rpc(&metrics, Some(passed)), tx);
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

    /// A client that does not read holds its stream at the buffer's room in bytes, whatever
    /// room the count of messages leaves: a response waits until the transport has taken
    /// enough of those before it; one larger than the whole room waits for all of it.
    #[tokio::test]
    async fn the_response_buffer_holds_at_most_its_room_in_bytes() {
        use tokio_stream::StreamExt;

        let metrics = Arc::new(Metrics::new());
        let response = |count: u64| proto::EvaluateResponse {
            packed_verdicts: Some(proto::PackedVerdicts {
                nim_sums: (0..count).collect(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let size = response(100).wire_len();
        let (tx, rx) = mpsc::channel(64);
        let mut stream = ResponseStream { rx };
        let mut responder = Responder::with_room(evaluate_rpc(&metrics, None), tx, 2 * size);
        // Whether a send is done at its first poll (else it waits for room).
        async fn at_once(send: impl Future<Output = Result<(), Stop>>) -> bool {
            tokio::select! {
                biased;
                sent = send => sent.is_ok(),
                () = std::future::ready(()) => false,
            }
        }
        assert!(at_once(responder.send(response(100))).await);
        assert!(at_once(responder.send(response(100))).await);
        assert!(
            !at_once(responder.send(response(100))).await,
            "over the room"
        );
        assert!(stream.next().await.is_some_and(|taken| taken.is_ok()));
        assert!(at_once(responder.send(response(100))).await);
        // One larger than the room goes once the buffer is empty, alone.
        assert!(!at_once(responder.send(response(1000))).await);
        stream.next().await;
        assert!(!at_once(responder.send(response(1000))).await);
        stream.next().await;
        assert!(at_once(responder.send(response(1000))).await);
        assert!(!at_once(responder.send(response(1))).await);
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
