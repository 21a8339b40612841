//! `Evaluate` (a bidirectional stream of query batches) and `EvaluateBatch` (all queries in
//! one request): both open the stream's graph, then answer batch after batch on the work
//! pool, in order. The evaluator produces `EvaluateResponse`s, or on a stream with moves or
//! analyses verdicts encoded as it finds them; `EvaluateBatch` sends either as its own
//! `EvaluateBatchResponse` (see [`Verdicts`]).

use std::sync::Arc;

use prometheus_client::metrics::histogram::Histogram;
use prost::Message;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tonic::{Request, Response, Status, Streaming};
use tracing::Instrument;

use crate::engine::Interrupt;
use crate::proto::{
    self, EvaluateBatchRequest, EvaluateBatchResponse, EvaluateRequest, EvaluateResponse,
    EvaluateStart, Sent, evaluate_request::Payload,
};
use crate::service::answer::early::{EarlyReceiver, early_verdicts};
use crate::service::answer::{QueryEvaluator, StreamOptions, fit_response};
use crate::service::blocking::SEARCH_SLICE;
use crate::service::convert::convention::check_game;
use crate::service::convert::{batch_heap_bytes, batch_query_count, graph_summary};
use crate::service::error::{ServiceError, request_stream_status};
use crate::service::graphs::Resolved;
use crate::service::rpc::{Responder, ResponseStream, Rpc, Stop, Verdicts, within_idle_timeout};
use crate::service::state::GameService;
use crate::wire::WireMessage;

/// `Evaluate`: the first message carries `start`, every later one a batch of queries.
pub(super) async fn evaluate(
    service: &GameService,
    request: Request<Streaming<EvaluateRequest>>,
) -> Result<Response<ResponseStream<Sent<EvaluateResponse>>>, Status> {
    let mut rpc = service.begin("Evaluate", &request)?;
    let mut inbound = request.into_inner();
    let span = rpc.span.clone();
    let opened = async {
        let start_timeout = service.config.start_timeout;
        let first = rpc.first_message(inbound.message(), start_timeout).await?;
        open_start(service, &mut rpc, expect_start(first)?).await
    }
    .instrument(span)
    .await;
    let (resolved, options) = opened.map_err(|status| rpc.fail(status))?;
    let service = service.clone();
    let buffer = service.config.response_buffer;
    Ok(rpc.stream_responses(buffer, move |out| {
        Box::pin(async move {
            let evaluator = open_stream(out, &service, resolved, options).await?;
            answer_stream(out, inbound, evaluator, &service).await
        })
    }))
}

/// `EvaluateBatch`: the queries of one request, answered in batches of
/// `batch_response_size`.
pub(super) async fn evaluate_batch(
    service: &GameService,
    request: Request<EvaluateBatchRequest>,
) -> Result<Response<ResponseStream<Sent<EvaluateBatchResponse>>>, Status> {
    let mut rpc = service.begin("EvaluateBatch", &request)?;
    rpc.sizes
        .request
        .observe(request.get_ref().encoded_len() as f64);
    let EvaluateBatchRequest { start, queries } = request.into_inner();
    let span = rpc.span.clone();
    let opened = async {
        let start = start.ok_or_else(|| ServiceError::protocol("start", "`start` is required"))?;
        service.check_query_count(queries.len() as u64)?;
        open_start(service, &mut rpc, start).await
    }
    .instrument(span)
    .await;
    let (resolved, options) = opened.map_err(|status| rpc.fail(status))?;
    let service = service.clone();
    let chunk = service.config.batch_response_size.max(1);
    let buffer = service.config.response_buffer;
    Ok(rpc.stream_responses(buffer, move |out| {
        Box::pin(async move {
            let mut evaluator = open_stream(out, &service, resolved, options).await?;
            let mut queries = queries.into_iter();
            loop {
                let batch: Vec<proto::Query> = queries.by_ref().take(chunk).collect();
                if batch.is_empty() {
                    return Ok(());
                }
                let batch = proto::QueryBatch {
                    queries: batch,
                    packed_tokens: None,
                };
                evaluator = answer_batches(out, &service, evaluator, vec![batch]).await?;
            }
        })
    }))
}

/// The graph and the options a stream's `start` asks for, checked against each other (a
/// play convention the game has).
async fn open_start(
    service: &GameService,
    rpc: &mut Rpc,
    start: EvaluateStart,
) -> Result<(Resolved, StreamOptions), Status> {
    let options = service.stream_options(&start)?;
    let resolved = service.resolve(rpc, start.graph_source).await?;
    check_game(
        &resolved.analysis,
        options.convention,
        "start.play_convention",
    )?;
    Ok((resolved, options))
}

/// Sends the stream's first response (the graph's summary) and makes its evaluator; for a
/// stream that asked for moves or position analyses, after the graph's remoteness table is
/// ready (their answers read it).
async fn open_stream<M: Verdicts>(
    out: &mut Responder<M>,
    service: &GameService,
    resolved: Resolved,
    options: StreamOptions,
) -> Result<QueryEvaluator, Stop> {
    let first = EvaluateResponse {
        graph: Some(graph_summary(&resolved.analysis, &resolved.graph_id)),
        ..Default::default()
    };
    out.send(first.into()).await?;
    if options.asks_for_more() {
        let prepared =
            service.prepare_remoteness(&resolved.graph_id, &resolved.analysis, options.convention);
        out.guard(prepared).await??;
    }
    Ok(QueryEvaluator::new(resolved.analysis, options))
}

/// Bytes of request messages read ahead of the evaluation, per stream (each counted at the
/// larger of its encoded and its decoded size). The request stream is
/// drained as fast as messages arrive: HTTP/2 allows a connection only a bounded count of
/// small DATA frames buffered unread (h2 answers more with GOAWAY ENHANCE_YOUR_CALM), and a
/// client that sends one query per message produces exactly those. The bound is in bytes so
/// that many small messages fit while a few large ones wait.
const READ_AHEAD_BYTES: usize = 16 << 20;
/// What a message read ahead counts in memory beyond its encoded size (its buffers and
/// bookkeeping: a memory estimate, not a protobuf size).
const READ_AHEAD_OVERHEAD: usize = 64;

/// A query batch read ahead, with its share of the read-ahead bound (released when dropped).
type ReadAhead = (proto::QueryBatch, OwnedSemaphorePermit);
/// Queries of the batches already read that one job of the work pool answers at most.
const GROUP_QUERIES: u64 = 4096;

/// Answers the query batches of an `Evaluate` stream until the client half-closes. A task
/// reads the requests ahead; batches already waiting are answered by one job of the work
/// pool (one response per batch, in order, as the contract says; more as verdicts are found
/// on a stream with moves or analyses), so that a client sending one query per message costs
/// one job per group, not per message.
async fn answer_stream(
    out: &mut Responder<Sent<EvaluateResponse>>,
    inbound: Streaming<EvaluateRequest>,
    mut evaluator: QueryEvaluator,
    service: &GameService,
) -> Result<(), Stop> {
    let (read_tx, mut batches) = mpsc::unbounded_channel();
    let room = Arc::new(Semaphore::new(READ_AHEAD_BYTES));
    let request_bytes = out.rpc.sizes.request.clone();
    let reader = read_batches(inbound, read_tx, room, request_bytes);
    let _reader = AbortOnDrop(tokio::spawn(reader));
    let mut queries_seen = 0u64;
    let mut pending = None;
    let idle_timeout = service.config.stream_idle_timeout;
    let activity = out.rpc.activity();
    loop {
        let next = match pending.take() {
            Some(next) => next,
            // Every batch read is answered: once the client has read the answers, it has the
            // idle timeout to send another.
            None => {
                let quiet = out.all_read();
                let next =
                    within_idle_timeout(batches.recv(), quiet, idle_timeout, activity.as_ref());
                match out.guard(next).await? {
                    Ok(Some(next)) => next,
                    Ok(None) => return Ok(()), // the client half-closed: all answered
                    Err(idle) => return Err(Stop::Failed(ServiceError::IdleTimeout(idle).into())),
                }
            }
        };
        let (first, _room) = next.map_err(Stop::Failed)?;
        queries_seen += batch_query_count(&first);
        service.check_query_count(queries_seen)?;
        let mut group_queries = batch_query_count(&first);
        let mut group = vec![first];
        let mut rooms = Vec::new();
        while group_queries < GROUP_QUERIES {
            let Ok(next) = batches.try_recv() else { break };
            // A failure, or a batch over the stream's query limit, waits for the group's
            // answers and is reported after them.
            let Ok((batch, room)) = next else {
                pending = Some(next);
                break;
            };
            let count = batch_query_count(&batch);
            if service.check_query_count(queries_seen + count).is_err() {
                pending = Some(Ok((batch, room)));
                break;
            }
            queries_seen += count;
            group_queries += count;
            group.push(batch);
            rooms.push(room);
        }
        evaluator = answer_batches(out, service, evaluator, group).await?;
        drop(rooms);
    }
}

/// Reads the query batches of a stream into `batches`, in order, each holding its share of
/// `room`, until the client half-closes, a message breaks the protocol (sent on as the
/// stream's failure), or the stream stops listening.
async fn read_batches(
    mut inbound: Streaming<EvaluateRequest>,
    batches: mpsc::UnboundedSender<Result<ReadAhead, Status>>,
    room: Arc<Semaphore>,
    request_bytes: Histogram,
) {
    loop {
        let item = match inbound.message().await {
            Ok(Some(message)) => {
                // One pass over the packed arrays for the metric; the bound counts what the
                // batch takes decoded, which can be four times its encoded size.
                let encoded = message.wire_len();
                request_bytes.observe(encoded as f64);
                let held = match &message.payload {
                    Some(Payload::Queries(batch)) => batch_heap_bytes(batch),
                    _ => 0,
                };
                let bytes = (encoded.max(held) + READ_AHEAD_OVERHEAD).min(READ_AHEAD_BYTES);
                let Ok(share) = room.clone().acquire_many_owned(bytes as u32).await else {
                    return;
                };
                expect_queries(message)
                    .map(|batch| (batch, share))
                    .map_err(Status::from)
            }
            Ok(None) => return,
            Err(status) => Err(request_stream_status(status)),
        };
        let failed = item.is_err();
        if batches.send(item).is_err() || failed {
            return;
        }
    }
}

/// Aborts a task when dropped: the reader of a stream that stopped answering.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Evaluates a group of batches in one job of the work pool (inline when small) and sends one
/// response per batch, in order: more than one for a batch whose verdicts exceed the message
/// limit, or of a stream with moves or analyses, whose verdicts go as they are found (the job
/// hands them over while it runs: see `answer::early`). The evaluator goes to the pool and
/// comes back, keeping its buffers and the moves it found for the next group. A batch that
/// fails ends the stream after the responses of the batches before it (and the verdicts of
/// its own that went already). A stream that ends while its group is evaluated (cancelled,
/// past its deadline, its client gone, the server stopping) drops this future, which
/// interrupts the job: it stops at its next query, or within its search, instead of working
/// on for nobody.
async fn answer_batches<M: Verdicts>(
    out: &mut Responder<M>,
    service: &GameService,
    mut evaluator: QueryEvaluator,
    mut batches: Vec<proto::QueryBatch>,
) -> Result<QueryEvaluator, Stop> {
    let max_bytes = service.max_response_bytes;
    let cost = evaluator.cost(&batches);
    // A search job gives its permit up between queries once it has run its slice and
    // another search waits; it then waits for another turn (see `SearchQueue`).
    let queue = service.pool.search_queue();
    let mut resumed = false;
    loop {
        let interrupt = Interrupt::new();
        let _stop = interrupt.raise_on_drop();
        // Only streams with moves or analyses hand verdicts over as they are found.
        let (early, early_receiver) = evaluator
            .answers_early()
            .then(|| early_verdicts(max_bytes))
            .unzip();
        let queue = queue.clone();
        let work = service.pool.evaluate(cost, resumed, move || {
            let began = std::time::Instant::now();
            let give_turn =
                || cost.is_none() && began.elapsed() >= SEARCH_SLICE && queue.contended();
            let mut responses = Vec::with_capacity(batches.len());
            let mut failure = None;
            let mut unfinished = None;
            evaluator.hand_over(early);
            for (index, batch) in batches.iter().enumerate() {
                match evaluator.answer(batch, &interrupt, &give_turn) {
                    Ok(None) => {
                        unfinished = Some(index);
                        break;
                    }
                    // Handed over already, its batch's end marked.
                    Ok(Some(_)) if evaluator.hands_over() => {}
                    Ok(Some(response)) => fit_response(response, max_bytes, &mut responses),
                    Err(error) => {
                        failure = Some(error);
                        break;
                    }
                }
            }
            evaluator.end_hand_over();
            Ok((evaluator, responses, failure, unfinished, batches))
        });
        let done = match early_receiver {
            None => out.guard(work).await?,
            Some(early) => relay_early(out, work, early).await?,
        };
        let (returned, responses, failure, unfinished, rest) = done?;
        evaluator = returned;
        for response in responses {
            out.send_verdicts(response).await?;
        }
        if let Some(error) = failure {
            return Err(error.into());
        }
        match unfinished {
            // Its turn given up: the batch it stopped in, and those after it, wait for the
            // next.
            Some(index) => {
                batches = rest;
                batches.drain(..index);
                resumed = true;
            }
            None => return Ok(evaluator),
        }
    }
}

/// Awaits `work`, a job that hands verdicts over through `early` as it finds them, and sends
/// them on `out` meanwhile, whatever waits as one message each time the stream is free;
/// every one it handed over goes before its result returns.
async fn relay_early<M: Verdicts, T>(
    out: &mut Responder<M>,
    work: impl Future<Output = T>,
    mut early: EarlyReceiver,
) -> Result<T, Stop> {
    tokio::pin!(work);
    let mut done = None;
    loop {
        // The job's sender goes when it returns: then what it handed over is all taken.
        let step = out.guard(async {
            tokio::select! {
                biased;
                messages = early.next_messages() => Some(messages),
                finished = &mut work, if done.is_none() => {
                    done = Some(finished);
                    None
                }
            }
        });
        match step.await? {
            Some(Some(messages)) => {
                for message in messages {
                    out.send_encoded(message.verdicts, &message.counts).await?;
                }
            }
            Some(None) => break,
            None => {}
        }
    }
    match done {
        Some(done) => Ok(done),
        None => out.guard(work).await,
    }
}

/// The `start` of a stream's first message.
fn expect_start(first: Option<EvaluateRequest>) -> Result<EvaluateStart, ServiceError> {
    match first.and_then(|message| message.payload) {
        Some(Payload::Start(start)) => Ok(start),
        Some(Payload::Queries(_)) => Err(ServiceError::protocol(
            "start",
            "the first message of the stream must carry `start`, not `queries`",
        )),
        None => Err(ServiceError::protocol(
            "start",
            "the first message of the stream must carry `start`",
        )),
    }
}

/// The query batch of a later message.
fn expect_queries(message: EvaluateRequest) -> Result<proto::QueryBatch, ServiceError> {
    match message.payload {
        Some(Payload::Queries(batch)) => Ok(batch),
        Some(Payload::Start(_)) => Err(ServiceError::protocol(
            "start",
            "`start` may only be sent once, in the first message",
        )),
        None => Err(ServiceError::protocol(
            "payload",
            "a request message carries neither `start` nor `queries`",
        )),
    }
}
