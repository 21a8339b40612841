//! The tonic implementation of `grundy.v1.GrundyService`: stream plumbing, limits, deadlines,
//! cancellation and one tracing span per RPC. Graph validation and verdicts live in
//! [`crate::convert`], status codes in [`crate::error`], the cache in [`crate::registry`], the
//! game theory in [`crate::engine`].
//!
//! Every RPC holds an [`Rpc`] guard from its first line to the end of its response stream: it
//! holds a slot of `max_concurrent_streams`, counts as an active stream, carries the span and,
//! when dropped, records the outcome in the metrics and the log. Every wait of a stream (for
//! the client's next message, for a computation, for room in the response buffer) also ends
//! when the client leaves, its deadline passes or the server cancels streams at shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::metadata::MetadataMap;
use tonic::{Code, Request, Response, Status, Streaming};
use tracing::{Instrument, Span, field};

use crate::convert::{self, QueryEvaluator};
use crate::engine::{Analysis, Limits};
use crate::error::{ServiceError, request_stream_status};
use crate::metrics::{Metrics, QueryCounts, code_name};
use crate::proto::{
    self, EvaluateBatchRequest, EvaluateRequest, EvaluateResponse, GetValuesRequest,
    GetValuesResponse, PutGraphRequest, PutGraphResponse, evaluate_request::Payload,
    evaluate_start::GraphSource, grundy_service_server::GrundyService,
};
use crate::registry::{self, Lookup, Registry};

/// Tunables of the service.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Engine limits (work per vertex, ...).
    pub limits: Limits,
    /// Response messages buffered per stream before the server waits for the client.
    pub response_buffer: usize,
    /// Graph analyses running at once; more wait for a permit.
    pub compute_concurrency: usize,
    /// Verdicts per response message of `EvaluateBatch`.
    pub batch_response_size: usize,
    /// Largest vertex count of a graph.
    pub max_vertices: u32,
    /// Largest edge count of a graph.
    pub max_edges: u64,
    /// Most queries one stream (`Evaluate` or `EvaluateBatch`) may carry.
    pub max_queries_per_stream: u64,
    /// Most RPCs of this service in progress at once; more are refused.
    pub max_concurrent_streams: usize,
    /// Bound of the table cache, in bytes.
    pub cache_bytes: usize,
}

/// Default of [`ServiceConfig::max_vertices`].
pub const DEFAULT_MAX_VERTICES: u32 = 50_000_000;
/// Default of [`ServiceConfig::max_edges`].
pub const DEFAULT_MAX_EDGES: u64 = 500_000_000;
/// Default of [`ServiceConfig::max_queries_per_stream`].
pub const DEFAULT_MAX_QUERIES_PER_STREAM: u64 = 10_000_000_000;
/// Default of [`ServiceConfig::max_concurrent_streams`].
pub const DEFAULT_MAX_CONCURRENT_STREAMS: usize = 1024;
/// Default of `--max-cyclic-work`, [`Limits::cyclic_work_budget`].
pub use crate::engine::DEFAULT_CYCLIC_WORK_BUDGET;
/// Default of [`ServiceConfig::cache_bytes`]: 1 GiB.
pub const DEFAULT_CACHE_BYTES: usize = 1 << 30;

/// Vertices per `GetValues` page when the request leaves it to the server.
const DEFAULT_PAGE_VERTICES: u32 = 16_384;
/// Most vertices per `GetValues` page.
const MAX_PAGE_VERTICES: u32 = 65_536;
/// Approximate most bytes of values per `GetValues` page (K sets can be long).
const MAX_PAGE_BYTES: usize = 1 << 20;
/// How long a stream that ends with an error waits for room to deliver that error.
const FINAL_STATUS_GRACE: Duration = Duration::from_secs(2);

impl Default for ServiceConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            response_buffer: 16,
            compute_concurrency: std::thread::available_parallelism().map_or(2, |n| n.get()),
            batch_response_size: 4096,
            max_vertices: DEFAULT_MAX_VERTICES,
            max_edges: DEFAULT_MAX_EDGES,
            max_queries_per_stream: DEFAULT_MAX_QUERIES_PER_STREAM,
            max_concurrent_streams: DEFAULT_MAX_CONCURRENT_STREAMS,
            cache_bytes: DEFAULT_CACHE_BYTES,
        }
    }
}

/// Where the server is in its life: streams watch it to stop at shutdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Serving,
    /// New streams are refused; streams in progress go on.
    Draining,
    /// Streams still in progress end now with UNAVAILABLE.
    Cancelling,
}

#[derive(Debug)]
struct Lifecycle {
    phase: watch::Sender<Phase>,
    active: watch::Sender<usize>,
    slots: Arc<Semaphore>,
}

/// The service state shared by all streams.
#[derive(Debug, Clone)]
pub struct Grundy {
    config: Arc<ServiceConfig>,
    registry: Registry,
    metrics: Arc<Metrics>,
    lifecycle: Arc<Lifecycle>,
}

type ResponseStream<M> = ReceiverStream<Result<M, Status>>;
type ResponseSender<M> = mpsc::Sender<Result<M, Status>>;

impl Grundy {
    pub fn new(config: ServiceConfig) -> Self {
        let metrics = Arc::new(Metrics::new());
        let registry = Registry::new(
            config.cache_bytes,
            config.compute_concurrency,
            metrics.clone(),
        );
        let slots = config
            .max_concurrent_streams
            .clamp(1, Semaphore::MAX_PERMITS);
        Self {
            config: Arc::new(config),
            registry,
            metrics,
            lifecycle: Arc::new(Lifecycle {
                phase: watch::Sender::new(Phase::Serving),
                active: watch::Sender::new(0),
                slots: Arc::new(Semaphore::new(slots)),
            }),
        }
    }

    /// RPCs in progress: from their first line to the end of their response stream (a
    /// stream stops once its client is gone).
    pub fn active_streams(&self) -> usize {
        *self.lifecycle.active.borrow()
    }

    /// The server's metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The table cache.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn config(&self) -> &ServiceConfig {
        &self.config
    }

    /// Refuses new streams from now on (UNAVAILABLE "server shutting down"); streams in
    /// progress go on.
    pub fn begin_drain(&self) {
        self.lifecycle.phase.send_if_modified(|phase| {
            let serving = *phase == Phase::Serving;
            if serving {
                *phase = Phase::Draining;
            }
            serving
        });
    }

    /// True once [`Grundy::begin_drain`] was called.
    pub fn is_draining(&self) -> bool {
        *self.lifecycle.phase.borrow() != Phase::Serving
    }

    /// Ends every stream in progress with UNAVAILABLE "server shutting down" (and refuses
    /// new ones).
    pub fn cancel_streams(&self) {
        self.lifecycle.phase.send_replace(Phase::Cancelling);
    }

    /// Resolves when no RPC is in progress.
    pub async fn wait_idle(&self) {
        let mut active = self.lifecycle.active.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = active.wait_for(|&count| count == 0).await;
    }

    /// Starts the bookkeeping of one RPC, or refuses it (draining, too many streams).
    fn begin<T>(&self, name: &'static str, request: &Request<T>) -> Result<Rpc, Status> {
        let reject = |error: ServiceError| {
            let status = Status::from(error);
            self.metrics.request_finished(name, status.code());
            tracing::info!(
                rpc = name,
                code = code_name(status.code()),
                "rpc refused: {}",
                status.message()
            );
            status
        };
        if self.is_draining() {
            return Err(reject(ServiceError::ShuttingDown));
        }
        let slot = self
            .lifecycle
            .slots
            .clone()
            .try_acquire_owned()
            .map_err(|_| {
                reject(ServiceError::LimitExceeded {
                    limit: "max_concurrent_streams",
                    value: self.config.max_concurrent_streams as u64,
                    what: "the number of concurrent streams".into(),
                })
            })?;
        let timeout = grpc_timeout(request.metadata());
        let span = tracing::info_span!(
            "rpc",
            rpc = name,
            graph_id = field::Empty,
            vertices = field::Empty,
            edges = field::Empty,
        );
        self.lifecycle.active.send_modify(|count| *count += 1);
        self.metrics.inflight_streams.inc();
        // tonic's server fails a call still without response headers at its `grpc-timeout`
        // with CANCELLED "Timeout expired", timed from just after the stamp. Timed from the
        // stamp, this RPC's deadline comes no later, so a client waiting for the server's
        // answer gets DEADLINE_EXCEEDED. (tonic clients time out first, on their own side:
        // see docs/operating.md.)
        let started = request
            .extensions()
            .get::<RequestArrival>()
            .map_or_else(Instant::now, |arrival| arrival.0);
        Ok(Rpc {
            name,
            span,
            started,
            deadline: timeout.map(|timeout| (started + timeout, timeout)),
            phase: self.lifecycle.phase.subscribe(),
            counts: QueryCounts::default(),
            code: None,
            metrics: self.metrics.clone(),
            lifecycle: self.lifecycle.clone(),
            _slot: slot,
        })
    }

    /// Checks a graph's size against the configured limits before any work is spent on it.
    fn check_graph_size(&self, vertex_count: u32, edge_count: u64) -> Result<(), ServiceError> {
        if vertex_count > self.config.max_vertices {
            return Err(ServiceError::LimitExceeded {
                limit: "max_vertices",
                value: u64::from(self.config.max_vertices),
                what: format!("the graph's vertex_count {vertex_count}"),
            });
        }
        if edge_count > self.config.max_edges {
            return Err(ServiceError::LimitExceeded {
                limit: "max_edges",
                value: self.config.max_edges,
                what: format!("the graph's {edge_count} edges"),
            });
        }
        Ok(())
    }

    fn check_query_count(&self, count: u64) -> Result<(), ServiceError> {
        if count > self.config.max_queries_per_stream {
            return Err(ServiceError::LimitExceeded {
                limit: "max_queries_per_stream",
                value: self.config.max_queries_per_stream,
                what: format!("the stream's {count} queries"),
            });
        }
        Ok(())
    }

    /// The analysis of a stream's graph: registered by id, or given inline (validated,
    /// hashed and looked up in the cache by the same id).
    async fn resolve(
        &self,
        rpc: &mut Rpc,
        source: Option<GraphSource>,
    ) -> Result<(Arc<Analysis>, String), Status> {
        match source {
            Some(GraphSource::GraphId(graph_id)) => {
                let analysis = self
                    .registry
                    .get(&graph_id)
                    .ok_or_else(|| ServiceError::UnknownGraph(graph_id.clone()))?;
                rpc.record_graph(&graph_id, &analysis);
                Ok((analysis, graph_id))
            }
            Some(GraphSource::Graph(graph)) => {
                let (analysis, graph_id, _) = self.register(rpc, graph).await?;
                Ok((analysis, graph_id))
            }
            None => Err(ServiceError::Protocol(
                "start.graph_source: set either graph or graph_id".into(),
            )
            .into()),
        }
    }

    /// Validates and hashes a wire graph off the async runtime, then gets its analysis from
    /// the cache or computes it once however many streams ask at the same time.
    async fn register(
        &self,
        rpc: &mut Rpc,
        graph: proto::Graph,
    ) -> Result<(Arc<Analysis>, String, Lookup), Status> {
        self.check_graph_size(graph.vertex_count, graph.targets.len() as u64)?;
        let (game, graph_id) = rpc
            .guard(run_blocking(move || {
                let game = convert::game_from_proto(graph)?;
                let graph_id = registry::graph_id_sync(&game);
                Ok((game, graph_id))
            }))
            .await??;
        let lookup = self
            .registry
            .get_or_analyse(graph_id.clone(), game, self.config.limits);
        let (analysis, lookup) = rpc.guard(lookup).await??;
        rpc.record_graph(&graph_id, &analysis);
        Ok((analysis, graph_id, lookup))
    }

    /// Reads the chunks of `PutGraph` into one wire graph, checking the limits as it grows.
    async fn receive_chunks(
        &self,
        rpc: &mut Rpc,
        mut inbound: Streaming<PutGraphRequest>,
    ) -> Result<proto::Graph, Status> {
        let mut graph = proto::Graph::default();
        let mut chunks = 0usize;
        while let Some(request) = rpc
            .guard(inbound.message())
            .await?
            .map_err(request_stream_status)?
        {
            let chunk = request.chunk.unwrap_or_default();
            if chunks == 0 {
                if chunk.vertex_count == 0 {
                    return Err(ServiceError::Protocol(
                        "chunk.vertex_count: the first chunk must set the vertex count".into(),
                    )
                    .into());
                }
                graph.vertex_count = chunk.vertex_count;
            } else if chunk.vertex_count != 0 && chunk.vertex_count != graph.vertex_count {
                return Err(ServiceError::Protocol(format!(
                    "chunk {chunks}: vertex_count {} differs from the first chunk's {}",
                    chunk.vertex_count, graph.vertex_count
                ))
                .into());
            }
            let edge_count = (graph.targets.len() + chunk.targets.len()) as u64;
            self.check_graph_size(graph.vertex_count, edge_count)?;
            let vertex_count = graph.vertex_count as usize;
            for (field, total) in [
                (
                    "out_degrees",
                    graph.out_degrees.len() + chunk.out_degrees.len(),
                ),
                (
                    "split_counts",
                    graph.split_counts.len() + chunk.split_counts.len(),
                ),
            ] {
                if total > vertex_count {
                    return Err(ServiceError::Protocol(format!(
                        "chunk {chunks}: {field} now has {total} entries, more than vertex_count {vertex_count}"
                    ))
                    .into());
                }
            }
            graph.out_degrees.extend_from_slice(&chunk.out_degrees);
            graph.targets.extend_from_slice(&chunk.targets);
            graph.split_counts.extend_from_slice(&chunk.split_counts);
            chunks += 1;
        }
        if chunks == 0 {
            return Err(ServiceError::Protocol("PutGraph needs at least one chunk".into()).into());
        }
        // Growing by chunks left spare capacity; the cache accounts for capacity.
        graph.out_degrees.shrink_to_fit();
        graph.targets.shrink_to_fit();
        graph.split_counts.shrink_to_fit();
        Ok(graph)
    }
}

/// When the server received a request: stamped by [`stamp_arrival`], in a layer that tonic
/// calls before it starts its own `grpc-timeout` timer. Absent when the service is called
/// directly, without the server around it.
#[derive(Debug, Clone, Copy)]
pub struct RequestArrival(pub Instant);

/// Stamps a request with its [`RequestArrival`] (a layer of [`crate::server`]).
pub fn stamp_arrival<B>(mut request: http::Request<B>) -> http::Request<B> {
    request
        .extensions_mut()
        .insert(RequestArrival(Instant::now()));
    request
}

/// The bookkeeping of one RPC; see the module documentation.
struct Rpc {
    name: &'static str,
    span: Span,
    started: Instant,
    /// The client's deadline, and the timeout it came from.
    deadline: Option<(Instant, Duration)>,
    phase: watch::Receiver<Phase>,
    counts: QueryCounts,
    /// The final status code; None when the RPC was dropped before it finished (the client
    /// went away while the handler was still working).
    code: Option<Code>,
    metrics: Arc<Metrics>,
    lifecycle: Arc<Lifecycle>,
    _slot: OwnedSemaphorePermit,
}

/// Why a response stream stopped early.
enum Stop {
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
    fn record_graph(&self, graph_id: &str, analysis: &Analysis) {
        let graph = analysis.game().graph();
        self.span.record("graph_id", graph_id);
        self.span.record("vertices", graph.vertex_count());
        self.span.record("edges", graph.edge_count());
    }

    /// Marks the RPC as failed with `status`, and returns it.
    fn fail(&mut self, status: Status) -> Status {
        self.code = Some(status.code());
        status
    }

    /// Awaits `work`, unless the server cancels streams or the client's deadline passes
    /// first.
    async fn guard<T>(&mut self, work: impl Future<Output = T>) -> Result<T, Status> {
        let deadline = self.deadline;
        tokio::select! {
            biased;
            () = cancelled(&mut self.phase) => Err(ServiceError::ShuttingDown.into()),
            () = deadline_passed(deadline) => {
                Err(ServiceError::DeadlineExceeded(deadline.map_or(Duration::ZERO, |d| d.1)).into())
            }
            value = work => Ok(value),
        }
    }

    /// Like [`Rpc::guard`], and also stops when the client is gone (its end of the response
    /// stream dropped).
    async fn guard_stream<T, M>(
        &mut self,
        tx: &ResponseSender<M>,
        work: impl Future<Output = T>,
    ) -> Result<T, Stop> {
        tokio::select! {
            biased;
            () = tx.closed() => Err(Stop::ClientGone),
            result = self.guard(work) => result.map_err(Stop::Failed),
        }
    }

    /// Sends one response, waiting for room in the buffer under the same guards.
    async fn send<M>(&mut self, tx: &ResponseSender<M>, message: M) -> Result<(), Stop> {
        self.guard_stream(tx, tx.send(Ok(message)))
            .await?
            .map_err(|_| Stop::ClientGone)
    }

    /// Counts the verdicts of a response.
    fn count_verdicts(&mut self, response: &EvaluateResponse) {
        let mut counts = QueryCounts::default();
        let mut count = |outcome: Option<proto::Outcome>| match outcome {
            Some(proto::Outcome::Win) => counts.win += 1,
            Some(proto::Outcome::Lose) => counts.lose += 1,
            Some(proto::Outcome::Draw) => counts.draw += 1,
            _ => counts.error += 1,
        };
        for verdict in &response.verdicts {
            count(if verdict.error.is_some() {
                None
            } else {
                proto::Outcome::try_from(verdict.outcome).ok()
            });
        }
        if let Some(packed) = &response.packed_verdicts {
            for &outcome in &packed.outcomes {
                count(proto::Outcome::try_from(outcome).ok());
            }
        }
        self.metrics.queries_answered(&counts);
        self.counts.add(&counts);
    }

    /// Ends a response stream: delivers a failure as the final status when the client is
    /// still there (waiting a little for room in the buffer).
    async fn end<M>(mut self, tx: ResponseSender<M>, result: Result<(), Stop>) {
        match result {
            Ok(()) => self.code = Some(Code::Ok),
            Err(Stop::ClientGone) => self.code = Some(Code::Cancelled),
            Err(Stop::Failed(status)) => {
                self.code = Some(if tx.is_closed() {
                    Code::Cancelled
                } else {
                    status.code()
                });
                let _ = tokio::time::timeout(FINAL_STATUS_GRACE, tx.send(Err(status))).await;
            }
        }
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        // Dropped without a code: the handler's future was dropped, i.e. the client left.
        let code = self.code.unwrap_or(Code::Cancelled);
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
        self.metrics.request_finished(self.name, code);
        self.metrics.inflight_streams.dec();
        self.lifecycle.active.send_modify(|count| *count -= 1);
    }
}

/// Resolves when the server starts cancelling streams.
async fn cancelled(phase: &mut watch::Receiver<Phase>) {
    if phase
        .wait_for(|&phase| phase == Phase::Cancelling)
        .await
        .is_err()
    {
        // The service state is gone; nothing will cancel this stream.
        std::future::pending::<()>().await;
    }
}

/// Resolves when the deadline passes; never without one.
async fn deadline_passed(deadline: Option<(Instant, Duration)>) {
    match deadline {
        Some((at, _)) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The client's timeout from the `grpc-timeout` header: an integer of at most 8 digits and a
/// unit (H, M, S, m, u, n). A malformed header is ignored, as tonic does. tonic parses the
/// header too, but privately, and its timer only covers the handler up to the response
/// headers; this one bounds the whole stream (every wait goes through [`Rpc::guard`]).
fn grpc_timeout(metadata: &MetadataMap) -> Option<Duration> {
    let value = metadata.get("grpc-timeout")?.to_str().ok()?;
    if value.len() < 2 || value.len() > 9 {
        return None;
    }
    let (digits, unit) = value.split_at(value.len() - 1);
    let amount: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(amount * 3600),
        "M" => Duration::from_secs(amount * 60),
        "S" => Duration::from_secs(amount),
        "m" => Duration::from_millis(amount),
        "u" => Duration::from_micros(amount),
        "n" => Duration::from_nanos(amount),
        _ => return None,
    })
}

/// Runs CPU-bound work on the blocking pool; a panic there becomes `INTERNAL`, a runtime
/// shutting down (the CLI's embedded server at exit) `UNAVAILABLE`.
async fn run_blocking<T, F>(work: F) -> Result<T, ServiceError>
where
    F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(worker_error)?
}

/// The error for a blocking task that did not complete.
pub(crate) fn worker_error(error: tokio::task::JoinError) -> ServiceError {
    if error.is_cancelled() {
        ServiceError::ShuttingDown
    } else {
        ServiceError::Internal(format!("worker failed: {error}"))
    }
}

/// Evaluates a batch of queries on the blocking pool. The evaluator goes there and comes back
/// with the response, keeping its buffers and the moves it found for the stream's next batch.
async fn evaluate_batch_blocking(
    mut evaluator: QueryEvaluator,
    batch: proto::QueryBatch,
) -> Result<(QueryEvaluator, EvaluateResponse), ServiceError> {
    run_blocking(move || {
        let response = evaluator.answer(&batch)?;
        Ok((evaluator, response))
    })
    .await
}

/// Queries in a request batch, in both forms.
fn batch_query_count(batch: &proto::QueryBatch) -> u64 {
    let packed = batch
        .packed_tokens
        .as_ref()
        .map_or(0, |packed| packed.token_counts.len());
    (batch.queries.len() + packed) as u64
}

/// The summary of a graph, with its id and the bytes it holds.
fn summary(analysis: &Analysis, graph_id: &str) -> proto::GraphSummary {
    proto::GraphSummary {
        graph_id: graph_id.to_string(),
        table_bytes: analysis.heap_bytes() as u64,
        ..convert::graph_summary(analysis)
    }
}

fn first_response(analysis: &Analysis, graph_id: &str) -> EvaluateResponse {
    EvaluateResponse {
        graph: Some(summary(analysis, graph_id)),
        ..Default::default()
    }
}

/// Answers the query batches of an `Evaluate` stream until the client half-closes.
async fn answer_stream(
    rpc: &mut Rpc,
    tx: &ResponseSender<EvaluateResponse>,
    mut inbound: Streaming<EvaluateRequest>,
    mut evaluator: QueryEvaluator,
    service: &Grundy,
) -> Result<(), Stop> {
    let mut queries_seen = 0u64;
    loop {
        let message = match rpc.guard_stream(tx, inbound.message()).await? {
            Ok(Some(message)) => message,
            Ok(None) => return Ok(()), // the client half-closed: every batch is answered
            Err(status) => return Err(Stop::Failed(request_stream_status(status))),
        };
        let batch = match message.payload {
            Some(Payload::Queries(batch)) => batch,
            Some(Payload::Start(_)) => {
                return Err(ServiceError::Protocol(
                    "`start` may only be sent once, in the first message".into(),
                )
                .into());
            }
            None => {
                return Err(ServiceError::Protocol(
                    "a request message carries neither `start` nor `queries`".into(),
                )
                .into());
            }
        };
        queries_seen += batch_query_count(&batch);
        service.check_query_count(queries_seen)?;
        let (returned, response) = rpc
            .guard_stream(tx, evaluate_batch_blocking(evaluator, batch))
            .await??;
        evaluator = returned;
        rpc.count_verdicts(&response);
        rpc.send(tx, response).await?;
    }
}

#[tonic::async_trait]
impl GrundyService for Grundy {
    type EvaluateStream = ResponseStream<EvaluateResponse>;
    type EvaluateBatchStream = ResponseStream<EvaluateResponse>;
    type GetValuesStream = ResponseStream<GetValuesResponse>;

    async fn evaluate(
        &self,
        request: Request<Streaming<EvaluateRequest>>,
    ) -> Result<Response<Self::EvaluateStream>, Status> {
        let mut rpc = self.begin("Evaluate", &request)?;
        let mut inbound = request.into_inner();
        let span = rpc.span.clone();
        let opened = async {
            let first = rpc
                .guard(inbound.message())
                .await?
                .map_err(request_stream_status)?;
            let start = match first.and_then(|m| m.payload) {
                Some(Payload::Start(start)) => start,
                Some(Payload::Queries(_)) => {
                    return Err(ServiceError::Protocol(
                        "the first message of the stream must carry `start`, not `queries`".into(),
                    )
                    .into());
                }
                None => {
                    return Err(ServiceError::Protocol(
                        "the first message of the stream must carry `start`".into(),
                    )
                    .into());
                }
            };
            let (analysis, graph_id) = self.resolve(&mut rpc, start.graph_source).await?;
            Ok::<_, Status>((analysis, graph_id, start.explain))
        }
        .instrument(span.clone())
        .await;
        let (analysis, graph_id, explain) = opened.map_err(|status| rpc.fail(status))?;
        let (tx, rx) = mpsc::channel(self.config.response_buffer);
        let service = self.clone();
        tokio::spawn(
            async move {
                let result = async {
                    rpc.send(&tx, first_response(&analysis, &graph_id)).await?;
                    let evaluator = QueryEvaluator::new(analysis, explain);
                    answer_stream(&mut rpc, &tx, inbound, evaluator, &service).await
                }
                .await;
                rpc.end(tx, result).await;
            }
            .instrument(span),
        );
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn evaluate_batch(
        &self,
        request: Request<EvaluateBatchRequest>,
    ) -> Result<Response<Self::EvaluateBatchStream>, Status> {
        let mut rpc = self.begin("EvaluateBatch", &request)?;
        let EvaluateBatchRequest { start, queries } = request.into_inner();
        let span = rpc.span.clone();
        let opened = async {
            let start =
                start.ok_or_else(|| ServiceError::Protocol("`start` is required".into()))?;
            self.check_query_count(queries.len() as u64)?;
            let (analysis, graph_id) = self.resolve(&mut rpc, start.graph_source).await?;
            Ok::<_, Status>((analysis, graph_id, start.explain))
        }
        .instrument(span.clone())
        .await;
        let (analysis, graph_id, explain) = opened.map_err(|status| rpc.fail(status))?;
        let chunk = self.config.batch_response_size.max(1);
        let (tx, rx) = mpsc::channel(self.config.response_buffer);
        tokio::spawn(
            async move {
                let result = async {
                    rpc.send(&tx, first_response(&analysis, &graph_id)).await?;
                    let mut evaluator = QueryEvaluator::new(analysis, explain);
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
                        let (returned, response) = rpc
                            .guard_stream(&tx, evaluate_batch_blocking(evaluator, batch))
                            .await??;
                        evaluator = returned;
                        rpc.count_verdicts(&response);
                        rpc.send(&tx, response).await?;
                    }
                }
                .await;
                rpc.end(tx, result).await;
            }
            .instrument(span),
        );
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn put_graph(
        &self,
        request: Request<Streaming<PutGraphRequest>>,
    ) -> Result<Response<PutGraphResponse>, Status> {
        let mut rpc = self.begin("PutGraph", &request)?;
        let inbound = request.into_inner();
        let span = rpc.span.clone();
        let result = async {
            let graph = self.receive_chunks(&mut rpc, inbound).await?;
            let (analysis, graph_id, lookup) = self.register(&mut rpc, graph).await?;
            let table_bytes = analysis.heap_bytes();
            if table_bytes > self.registry.capacity_bytes() {
                return Err(ServiceError::LimitExceeded {
                    limit: "cache_bytes",
                    value: self.registry.capacity_bytes() as u64,
                    what: format!("the graph's table of {table_bytes} bytes"),
                }
                .into());
            }
            Ok::<_, Status>(PutGraphResponse {
                graph: Some(summary(&analysis, &graph_id)),
                graph_id,
                already_registered: lookup == Lookup::Hit,
            })
        }
        .instrument(span)
        .await;
        match result {
            Ok(response) => {
                rpc.code = Some(Code::Ok);
                Ok(Response::new(response))
            }
            Err(status) => Err(rpc.fail(status)),
        }
    }

    async fn get_values(
        &self,
        request: Request<GetValuesRequest>,
    ) -> Result<Response<Self::GetValuesStream>, Status> {
        let mut rpc = self.begin("GetValues", &request)?;
        let request = request.into_inner();
        let Some(analysis) = self.registry.get(&request.graph_id) else {
            let error = ServiceError::UnknownGraph(request.graph_id);
            return Err(rpc.fail(error.into()));
        };
        rpc.record_graph(&request.graph_id, &analysis);
        let span = rpc.span.clone();
        let (tx, rx) = mpsc::channel(self.config.response_buffer);
        tokio::spawn(
            async move {
                let result = async {
                    let first = GetValuesResponse {
                        graph: Some(summary(&analysis, &request.graph_id)),
                        ..Default::default()
                    };
                    rpc.send(&tx, first).await?;
                    if request.summary_only {
                        return Ok(());
                    }
                    let vertex_count = analysis.game().graph().vertex_count();
                    let mut vertex = request.first_vertex.min(vertex_count);
                    let end = match request.vertex_limit {
                        0 => vertex_count,
                        limit => vertex.saturating_add(limit).min(vertex_count),
                    };
                    let page_vertices = match request.page_size {
                        0 => DEFAULT_PAGE_VERTICES,
                        size => size.min(MAX_PAGE_VERTICES),
                    } as usize;
                    while vertex < end {
                        let page_first = vertex;
                        let mut values = Vec::new();
                        let mut bytes = 0usize;
                        while vertex < end && values.len() < page_vertices && bytes < MAX_PAGE_BYTES
                        {
                            let value = convert::vertex_value(&analysis, vertex);
                            bytes += 16
                                + match &value.value {
                                    Some(proto::vertex_value::Value::Infinite(infinite)) => {
                                        10 * infinite.finite_followers.len()
                                    }
                                    _ => 0,
                                };
                            values.push(value);
                            vertex += 1;
                        }
                        let page = GetValuesResponse {
                            graph: None,
                            first_vertex: page_first,
                            values,
                        };
                        rpc.send(&tx, page).await?;
                    }
                    Ok(())
                }
                .await;
                rpc.end(tx, result).await;
            }
            .instrument(span),
        );
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::EvaluateStart;

    /// The deadline counts from the stamped arrival, not from when the handler started: a
    /// request that arrived a second ago with a 500 ms timeout is already late.
    #[tokio::test]
    async fn deadlines_count_from_the_stamped_arrival() {
        let service = Grundy::new(ServiceConfig::default());
        let graph = proto::Graph {
            vertex_count: 2,
            out_degrees: vec![1, 0],
            targets: vec![1],
            split_counts: vec![],
        };
        let request = |arrival: Option<Instant>| {
            let mut request = Request::new(EvaluateBatchRequest {
                start: Some(EvaluateStart {
                    graph_source: Some(GraphSource::Graph(graph.clone())),
                    explain: false,
                }),
                queries: vec![],
            });
            request
                .metadata_mut()
                .insert("grpc-timeout", "500m".parse().unwrap());
            if let Some(arrival) = arrival {
                request.extensions_mut().insert(RequestArrival(arrival));
            }
            request
        };
        let late = Instant::now() - Duration::from_secs(1);
        let status = service
            .evaluate_batch(request(Some(late)))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
        assert_eq!(status.message(), "deadline of 500ms exceeded");
        assert!(service.evaluate_batch(request(None)).await.is_ok());
    }

    #[test]
    fn grpc_timeouts_parse() {
        let with = |value: &str| {
            let mut metadata = MetadataMap::new();
            metadata.insert("grpc-timeout", value.parse().unwrap());
            grpc_timeout(&metadata)
        };
        assert_eq!(with("250m"), Some(Duration::from_millis(250)));
        assert_eq!(with("3S"), Some(Duration::from_secs(3)));
        assert_eq!(with("2M"), Some(Duration::from_secs(120)));
        assert_eq!(with("1H"), Some(Duration::from_secs(3600)));
        assert_eq!(with("7u"), Some(Duration::from_micros(7)));
        assert_eq!(with("9n"), Some(Duration::from_nanos(9)));
        assert_eq!(with("12"), None);
        assert_eq!(with("m"), None);
        assert_eq!(with("123456789S"), None);
        assert_eq!(grpc_timeout(&MetadataMap::new()), None);
    }
}
