//! The tonic implementation of `grundy.v1.GrundyService`: stream plumbing only. Graph
//! validation and verdicts live in [`crate::convert`], status codes in [`crate::error`], the
//! game theory in [`crate::engine`].

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Semaphore, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::convert::{self, QueryEvaluator};
use crate::engine::{self, Analysis, Limits};
use crate::error::ServiceError;
use crate::proto::{
    self, EvaluateBatchRequest, EvaluateRequest, EvaluateResponse, EvaluateStart,
    evaluate_request::Payload, evaluate_start::GraphSource,
    grundy_service_server::GrundyService,
};

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
}

impl Default for ServiceConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            response_buffer: 16,
            compute_concurrency: std::thread::available_parallelism().map_or(2, |n| n.get()),
            batch_response_size: 4096,
        }
    }
}

/// The service state shared by all streams.
#[derive(Debug, Clone)]
pub struct Grundy {
    config: Arc<ServiceConfig>,
    compute_permits: Arc<Semaphore>,
    active_streams: Arc<AtomicUsize>,
}

/// Counts a response stream as active while its producer task runs.
struct ActiveStream(Arc<AtomicUsize>);

impl ActiveStream {
    fn new(counter: &Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        Self(counter.clone())
    }
}

impl Drop for ActiveStream {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

type ResponseStream = ReceiverStream<Result<EvaluateResponse, Status>>;

impl Grundy {
    pub fn new(config: ServiceConfig) -> Self {
        let compute_permits = Arc::new(Semaphore::new(config.compute_concurrency.max(1)));
        Self {
            config: Arc::new(config),
            compute_permits,
            active_streams: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Response streams still being produced (a stream stops once its client is gone).
    pub fn active_streams(&self) -> usize {
        self.active_streams.load(Ordering::Relaxed)
    }

    /// Resolves and analyses the graph of a stream, off the async runtime.
    async fn analysis_for(&self, start: &mut EvaluateStart) -> Result<Arc<Analysis>, ServiceError> {
        let graph = match start.graph_source.take() {
            Some(GraphSource::Graph(graph)) => graph,
            Some(GraphSource::GraphId(id)) => return Err(ServiceError::UnknownGraph(id)),
            None => {
                return Err(ServiceError::Protocol(
                    "start.graph_source: set either graph or graph_id".into(),
                ));
            }
        };
        let _permit = self
            .compute_permits
            .acquire()
            .await
            .map_err(|_| ServiceError::Internal("compute pool closed".into()))?;
        let limits = self.config.limits;
        let analysis = run_blocking(move || {
            let game = convert::game_from_proto(graph)?;
            Ok(engine::analyse(game, &limits)?)
        })
        .await?;
        Ok(Arc::new(analysis))
    }
}

/// Runs CPU-bound work on the blocking pool; a panic there becomes `INTERNAL`.
async fn run_blocking<T, F>(work: F) -> Result<T, ServiceError>
where
    F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ServiceError::Internal(format!("worker failed: {e}")))?
}

/// Evaluates a batch of queries on the blocking pool.
async fn evaluate_batch_blocking(
    analysis: Arc<Analysis>,
    batch: proto::QueryBatch,
    explain: bool,
) -> Result<EvaluateResponse, ServiceError> {
    run_blocking(move || QueryEvaluator::new(&analysis, explain).answer(&batch)).await
}

fn first_response(analysis: &Analysis) -> EvaluateResponse {
    EvaluateResponse {
        graph: Some(convert::graph_summary(analysis)),
        ..Default::default()
    }
}

#[tonic::async_trait]
impl GrundyService for Grundy {
    type EvaluateStream = ResponseStream;
    type EvaluateBatchStream = ResponseStream;

    async fn evaluate(
        &self,
        request: Request<Streaming<EvaluateRequest>>,
    ) -> Result<Response<Self::EvaluateStream>, Status> {
        let mut inbound = request.into_inner();
        let mut start = match inbound.message().await?.and_then(|m| m.payload) {
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
        let analysis = self.analysis_for(&mut start).await?;
        let explain = start.explain;
        let (tx, rx) = mpsc::channel(self.config.response_buffer);
        let active = ActiveStream::new(&self.active_streams);
        tokio::spawn(async move {
            let _active = active;
            if tx.send(Ok(first_response(&analysis))).await.is_err() {
                return;
            }
            loop {
                let next = match inbound.message().await {
                    Ok(Some(message)) => message.payload,
                    Ok(None) => return, // the client half-closed: every batch is answered
                    Err(status) => {
                        tracing::debug!(%status, "request stream ended with an error");
                        return;
                    }
                };
                let result = match next {
                    Some(Payload::Queries(batch)) => {
                        evaluate_batch_blocking(analysis.clone(), batch, explain).await
                    }
                    Some(Payload::Start(_)) => Err(ServiceError::Protocol(
                        "`start` may only be sent once, in the first message".into(),
                    )),
                    None => Err(ServiceError::Protocol(
                        "a request message carries neither `start` nor `queries`".into(),
                    )),
                };
                let failed = result.is_err();
                // A failed send means the client is gone: stop working on its stream.
                if tx.send(result.map_err(Status::from)).await.is_err() || failed {
                    return;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn evaluate_batch(
        &self,
        request: Request<EvaluateBatchRequest>,
    ) -> Result<Response<Self::EvaluateBatchStream>, Status> {
        let EvaluateBatchRequest { start, queries } = request.into_inner();
        let mut start = start.ok_or_else(|| {
            Status::from(ServiceError::Protocol("`start` is required".into()))
        })?;
        let analysis = self.analysis_for(&mut start).await?;
        let explain = start.explain;
        let chunk = self.config.batch_response_size.max(1);
        let (tx, rx) = mpsc::channel(self.config.response_buffer);
        let active = ActiveStream::new(&self.active_streams);
        tokio::spawn(async move {
            let _active = active;
            if tx.send(Ok(first_response(&analysis))).await.is_err() {
                return;
            }
            let mut queries = queries.into_iter();
            loop {
                let batch: Vec<proto::Query> = queries.by_ref().take(chunk).collect();
                if batch.is_empty() {
                    return;
                }
                let batch = proto::QueryBatch {
                    queries: batch,
                    packed_tokens: None,
                };
                let result = evaluate_batch_blocking(analysis.clone(), batch, explain).await;
                let failed = result.is_err();
                if tx.send(result.map_err(Status::from)).await.is_err() || failed {
                    return;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}
