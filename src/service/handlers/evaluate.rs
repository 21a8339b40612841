//! `Evaluate` (a bidirectional stream of query batches) and `EvaluateBatch` (all queries in
//! one request): both open the stream's graph, then answer batch after batch on the work
//! pool, in order.

use tonic::{Request, Response, Status, Streaming};
use tracing::Instrument;

use crate::proto::{
    self, EvaluateBatchRequest, EvaluateRequest, EvaluateResponse, EvaluateStart,
    evaluate_request::Payload,
};
use crate::service::convert::{QueryEvaluator, batch_query_count, graph_summary};
use crate::service::error::{ServiceError, request_stream_status};
use crate::service::graphs::Resolved;
use crate::service::rpc::{Responder, ResponseStream, Stop};
use crate::service::state::GameService;

/// `Evaluate`: the first message carries `start`, every later one a batch of queries.
pub(super) async fn evaluate(
    service: &GameService,
    request: Request<Streaming<EvaluateRequest>>,
) -> Result<Response<ResponseStream<EvaluateResponse>>, Status> {
    let mut rpc = service.begin("Evaluate", &request)?;
    let mut inbound = request.into_inner();
    let span = rpc.span.clone();
    let opened = async {
        let first = rpc
            .guard(inbound.message())
            .await?
            .map_err(request_stream_status)?;
        let start = expect_start(first)?;
        let resolved = service.resolve(&mut rpc, start.graph_source).await?;
        Ok::<_, Status>((resolved, start.explain))
    }
    .instrument(span)
    .await;
    let (resolved, explain) = opened.map_err(|status| rpc.fail(status))?;
    let service = service.clone();
    let buffer = service.config.response_buffer;
    Ok(rpc.stream_responses(buffer, move |out| {
        Box::pin(async move {
            let evaluator = open_stream(out, resolved, explain).await?;
            answer_stream(out, inbound, evaluator, &service).await
        })
    }))
}

/// `EvaluateBatch`: the queries of one request, answered in batches of
/// `batch_response_size`.
pub(super) async fn evaluate_batch(
    service: &GameService,
    request: Request<EvaluateBatchRequest>,
) -> Result<Response<ResponseStream<EvaluateResponse>>, Status> {
    let mut rpc = service.begin("EvaluateBatch", &request)?;
    let EvaluateBatchRequest { start, queries } = request.into_inner();
    let span = rpc.span.clone();
    let opened = async {
        let start = start.ok_or_else(|| ServiceError::Protocol("`start` is required".into()))?;
        service.check_query_count(queries.len() as u64)?;
        let resolved = service.resolve(&mut rpc, start.graph_source).await?;
        Ok::<_, Status>((resolved, start.explain))
    }
    .instrument(span)
    .await;
    let (resolved, explain) = opened.map_err(|status| rpc.fail(status))?;
    let service = service.clone();
    let chunk = service.config.batch_response_size.max(1);
    let buffer = service.config.response_buffer;
    Ok(rpc.stream_responses(buffer, move |out| {
        Box::pin(async move {
            let mut evaluator = open_stream(out, resolved, explain).await?;
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
                evaluator = answer_batch(out, &service, evaluator, batch).await?;
            }
        })
    }))
}

/// Sends the stream's first response (the graph's summary) and makes its evaluator.
async fn open_stream(
    out: &mut Responder<EvaluateResponse>,
    resolved: Resolved,
    explain: bool,
) -> Result<QueryEvaluator, Stop> {
    let first = EvaluateResponse {
        graph: Some(graph_summary(&resolved.analysis, &resolved.graph_id)),
        ..Default::default()
    };
    out.send(first).await?;
    Ok(QueryEvaluator::new(resolved.analysis, explain))
}

/// Answers the query batches of an `Evaluate` stream until the client half-closes.
async fn answer_stream(
    out: &mut Responder<EvaluateResponse>,
    mut inbound: Streaming<EvaluateRequest>,
    mut evaluator: QueryEvaluator,
    service: &GameService,
) -> Result<(), Stop> {
    let mut queries_seen = 0u64;
    loop {
        let message = match out.guard(inbound.message()).await? {
            Ok(Some(message)) => message,
            Ok(None) => return Ok(()), // the client half-closed: every batch is answered
            Err(status) => return Err(Stop::Failed(request_stream_status(status))),
        };
        let batch = expect_queries(message)?;
        queries_seen += batch_query_count(&batch);
        service.check_query_count(queries_seen)?;
        evaluator = answer_batch(out, service, evaluator, batch).await?;
    }
}

/// Evaluates one batch on the work pool and sends its verdicts. The evaluator goes to the
/// pool and comes back, keeping its buffers and the moves it found for the next batch.
async fn answer_batch(
    out: &mut Responder<EvaluateResponse>,
    service: &GameService,
    mut evaluator: QueryEvaluator,
    batch: proto::QueryBatch,
) -> Result<QueryEvaluator, Stop> {
    let work = service.pool.evaluate(move || {
        let response = evaluator.answer(&batch)?;
        Ok((evaluator, response))
    });
    let (evaluator, response) = out.guard(work).await??;
    out.send_verdicts(response).await?;
    Ok(evaluator)
}

/// The `start` of a stream's first message.
fn expect_start(first: Option<EvaluateRequest>) -> Result<EvaluateStart, ServiceError> {
    match first.and_then(|message| message.payload) {
        Some(Payload::Start(start)) => Ok(start),
        Some(Payload::Queries(_)) => Err(ServiceError::Protocol(
            "the first message of the stream must carry `start`, not `queries`".into(),
        )),
        None => Err(ServiceError::Protocol(
            "the first message of the stream must carry `start`".into(),
        )),
    }
}

/// The query batch of a later message.
fn expect_queries(message: EvaluateRequest) -> Result<proto::QueryBatch, ServiceError> {
    match message.payload {
        Some(Payload::Queries(batch)) => Ok(batch),
        Some(Payload::Start(_)) => Err(ServiceError::Protocol(
            "`start` may only be sent once, in the first message".into(),
        )),
        None => Err(ServiceError::Protocol(
            "a request message carries neither `start` nor `queries`".into(),
        )),
    }
}
