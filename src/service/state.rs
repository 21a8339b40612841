//! [`GameService`]: the state every stream shares (configuration, graph registry, work pool,
//! metrics, lifecycle), and admission: the checks an RPC passes before any work is spent.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;
use tonic::{Request, Status};

use super::answer::StreamOptions;
use super::blocking::WorkPool;
use super::config::{DEFAULT_MAX_MESSAGE_BYTES, ServiceConfig};
use super::convert::convention::play_convention;
use super::convert::stream_analysis;
use super::error::{Limit, ServiceError, reason_name, status_reason};
use super::lifecycle::Lifecycle;
use super::metrics::{Metrics, code_name};
use super::registry::Registry;
use super::remoteness::RemotenessTurns;
use super::rpc::activity::BodyActivity;
use super::rpc::deadline::start_and_deadline;
use super::rpc::departure::ClientLeft;
use super::rpc::protocol::Protocol;
use super::rpc::{Rpc, RpcParts};
use super::store::GraphStore;
use super::store::MemoryStore;
use super::telemetry::continue_remote_trace;
use crate::proto;

/// The state of the `grundy.v1.GrundyService` implementation, shared by all streams. Cheap to
/// clone (a handle). [`super::run`] builds one; [`super::run_service`] takes one the caller
/// keeps, to inspect streams, metrics and the cache.
#[derive(Debug, Clone)]
pub struct GameService {
    pub(crate) config: Arc<ServiceConfig>,
    pub(crate) registry: Registry,
    pub(crate) pool: WorkPool,
    /// The remoteness tables being made on first need.
    pub(crate) remoteness: Arc<RemotenessTurns>,
    /// Largest response message: verdicts beyond it are split over several messages.
    pub(crate) max_response_bytes: usize,
    metrics: Arc<Metrics>,
    lifecycle: Arc<Lifecycle>,
}

impl GameService {
    /// A service with `config`, serving, with an empty cache.
    pub fn new(config: ServiceConfig) -> Self {
        let metrics = Arc::new(Metrics::new());
        let pool = WorkPool::new(
            config.compute_concurrency,
            config.evaluation_concurrency,
            config.analysis_queue_timeout,
            metrics.clone(),
        );
        let store = config
            .store
            .clone()
            .unwrap_or_else(|| GraphStore::memory(MemoryStore::new(config.cache_bytes)));
        let registry = Registry::new(
            config.cache_bytes,
            config.failed_graphs,
            pool.clone(),
            metrics.clone(),
            store,
        );
        Self {
            lifecycle: Arc::new(Lifecycle::new(config.max_concurrent_streams)),
            config: Arc::new(config),
            registry,
            pool,
            remoteness: Arc::default(),
            max_response_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            metrics,
        }
    }

    /// The same service, answering in messages of at most `bytes` (the transport's limit).
    pub(crate) fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// RPCs in progress: from their first line to the end of their response stream (a
    /// stream stops once its client is gone).
    pub fn active_streams(&self) -> usize {
        self.lifecycle.active()
    }

    /// The server's metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The cache of analysed graphs.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Refuses new streams from now on (UNAVAILABLE "server shutting down"); streams in
    /// progress go on.
    pub(crate) fn begin_drain(&self) {
        self.lifecycle.begin_drain();
    }

    /// Ends every stream in progress with UNAVAILABLE "server shutting down" (and refuses
    /// new ones).
    pub(crate) fn cancel_streams(&self) {
        self.lifecycle.cancel_streams();
    }

    /// Resolves when no RPC is in progress.
    pub async fn wait_idle(&self) {
        self.lifecycle.wait_idle().await;
    }

    /// Starts the bookkeeping of one RPC, or refuses it (draining, too many streams). A
    /// unary RPC comes with the slot its [`Admission`] took as its request arrived.
    pub(crate) fn begin<T>(&self, name: &'static str, request: &Request<T>) -> Result<Rpc, Status> {
        let arrived = Instant::now();
        let protocol = Protocol::of(request.extensions());
        let admitted = request
            .extensions()
            .get::<Admission>()
            .and_then(Admission::take);
        if self.lifecycle.is_draining() {
            return Err(self.refuse(name, protocol, ServiceError::ShuttingDown, arrived));
        }
        let (slot, _admitted_inflight) = match admitted {
            Some(admitted) => (admitted.slot, Some(admitted.inflight)),
            None => (self.try_slot(name, protocol, arrived)?, None),
        };
        let (started, deadline) = start_and_deadline(request.metadata(), request.extensions());
        let rpc = Rpc::new(
            name,
            RpcParts {
                protocol,
                started,
                deadline,
                phase: self.lifecycle.subscribe(),
                metrics: self.metrics.clone(),
                active: self.lifecycle.enter(),
                slot,
                client_left: request.extensions().get::<ClientLeft>().cloned(),
                activity: request.extensions().get::<BodyActivity>().cloned(),
            },
        );
        continue_remote_trace(&rpc.span, request.metadata());
        Ok(rpc)
    }

    /// A slot of `max_concurrent_streams` for the RPC `name`, or its refusal.
    fn try_slot(
        &self,
        name: &'static str,
        protocol: Protocol,
        arrived: Instant,
    ) -> Result<OwnedSemaphorePermit, Status> {
        self.lifecycle.try_slot().ok_or_else(|| {
            let error = ServiceError::LimitExceeded {
                limit: Limit::MaxConcurrentStreams,
                value: self.config.max_concurrent_streams as u64,
                what: "the number of concurrent streams".into(),
            };
            self.refuse(name, protocol, error, arrived)
        })
    }

    /// The status refusing the RPC `name` that arrived by `protocol` at `arrived`, counted
    /// and logged.
    fn refuse(
        &self,
        name: &'static str,
        protocol: Protocol,
        error: ServiceError,
        arrived: Instant,
    ) -> Status {
        let status = Status::from(error);
        self.count_refusal(name, protocol, &status, arrived);
        status
    }

    /// Counts and logs the refusal with `status` of the RPC `name` that arrived by `protocol`
    /// at `arrived`, before it reached its handler (a JSON request refused while read or
    /// transcoded, say).
    pub(crate) fn count_refusal(
        &self,
        name: &'static str,
        protocol: Protocol,
        status: &Status,
        arrived: Instant,
    ) {
        let reason = status_reason(status).map_or("", reason_name);
        let elapsed = arrived.elapsed();
        self.metrics
            .request_finished(name, protocol, status.code(), reason, elapsed);
        tracing::info!(
            rpc = name,
            code = code_name(status.code()),
            reason,
            protocol = protocol.label(),
            "rpc refused: {}",
            status.message()
        );
    }

    /// Admits the unary RPC `name` as its request arrives, before tonic reads its message:
    /// it takes its slot of `max_concurrent_streams` (counted in flight) from the first byte,
    /// or is refused as [`Self::begin`] refuses. The slot passes to the RPC's guard when its
    /// handler begins, and is given back if the message never comes whole.
    pub(crate) fn admit(
        &self,
        name: &'static str,
        protocol: Protocol,
    ) -> Result<Admission, Status> {
        let arrived = Instant::now();
        if self.lifecycle.is_draining() {
            return Err(self.refuse(name, protocol, ServiceError::ShuttingDown, arrived));
        }
        let slot = self.try_slot(name, protocol, arrived)?;
        let inflight = InflightGuard::enter(&self.metrics.inflight_streams);
        Ok(Admission(Arc::new(Mutex::new(Some(Admitted {
            slot,
            inflight,
        })))))
    }

    /// The status of a unary request whose message stopped arriving for `timeout` (the
    /// start timeout), counted and logged as the handler's statuses are.
    pub(crate) fn stalled(
        &self,
        name: &'static str,
        protocol: Protocol,
        timeout: Duration,
        arrived: Instant,
    ) -> Status {
        let error = ServiceError::RequestStalled(timeout);
        self.refuse(name, protocol, error, arrived)
    }

    /// Checks a graph's size against the configured limits before any work is spent on it.
    pub(crate) fn check_graph_size(
        &self,
        vertex_count: u32,
        edge_count: u64,
    ) -> Result<(), ServiceError> {
        if vertex_count > self.config.max_vertices {
            return Err(ServiceError::LimitExceeded {
                limit: Limit::MaxVertices,
                value: u64::from(self.config.max_vertices),
                what: format!("the graph's vertex_count {vertex_count}"),
            });
        }
        if edge_count > self.config.max_edges {
            return Err(ServiceError::LimitExceeded {
                limit: Limit::MaxEdges,
                value: self.config.max_edges,
                what: format!("the graph's {edge_count} edges"),
            });
        }
        Ok(())
    }

    /// Checks the queries a stream has carried so far against `max_queries_per_stream`.
    pub(crate) fn check_query_count(&self, count: u64) -> Result<(), ServiceError> {
        if count > self.config.max_queries_per_stream {
            return Err(ServiceError::LimitExceeded {
                limit: Limit::MaxQueriesPerStream,
                value: self.config.max_queries_per_stream,
                what: format!("the stream's {count} queries"),
            });
        }
        Ok(())
    }

    /// What a stream's `start` asks for beyond outcomes, within the server's caps.
    pub(crate) fn stream_options(
        &self,
        start: &proto::EvaluateStart,
    ) -> Result<StreamOptions, ServiceError> {
        let caps = &self.config.analysis;
        Ok(StreamOptions {
            explain: start.explain,
            analysis: stream_analysis(start.analysis.as_ref(), caps),
            convention: play_convention(start.play_convention, "start.play_convention")?,
            misere_budgets: crate::engine::AnalysisOptions {
                max_moves: 0,
                position_budget: caps.position_budget,
                work_budget: caps.work_budget,
            },
        })
    }
}

/// The slot a unary RPC took as its request arrived ([`GameService::admit`]), carried in the
/// request's extensions (hence the shared cell) to the RPC's guard, which takes it.
#[derive(Debug, Clone)]
pub(crate) struct Admission(Arc<Mutex<Option<Admitted>>>);

#[derive(Debug)]
struct Admitted {
    slot: OwnedSemaphorePermit,
    inflight: InflightGuard,
}

impl Admission {
    fn take(&self) -> Option<Admitted> {
        self.0
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .take()
    }
}

/// A request counted in `grundy_inflight_streams` until dropped.
#[derive(Debug)]
struct InflightGuard(Gauge);

impl InflightGuard {
    fn enter(gauge: &Gauge) -> Self {
        gauge.inc();
        Self(gauge.clone())
    }
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}
