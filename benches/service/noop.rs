//! The transport floor: a `grundy.v1.GrundyService` that answers every `Evaluate` batch with
//! packed verdicts of the same shape and size as grundy's, without evaluating anything, and
//! every `PutGraph` once it has read the chunks, without assembling, checking or hashing them.
//!
//! It is served by the same tonic server settings as `grundy-server` (its HTTP/2 windows and
//! frame size from [`grundy::service::http2_transport`], TCP_NODELAY, message limits), and
//! answers through the same kind of response stream (a task feeding a bounded channel), so
//! that the difference to grundy is grundy's own work: its guards, read-ahead, work pool,
//! evaluation and metrics.

use std::net::SocketAddr;

use grundy::proto::{
    self, EvaluateBatchRequest, EvaluateBatchResponse, EvaluateRequest, EvaluateResponse,
    GetValuesRequest, GetValuesResponse, PutGraphRequest, PutGraphResponse, Sent,
    evaluate_request::Payload,
    grundy_service_server::{GrundyService, GrundyServiceServer},
};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status, Streaming};

/// `grundy-server`'s default message limit.
const MAX_MESSAGE_BYTES: usize = 256 << 20;
/// grundy's default response buffer per stream.
const RESPONSE_BUFFER: usize = 64;

/// The nim-sum every no-op verdict carries: one varint byte, as grundy's nim-sums on the
/// bench's graph (values below 128).
const NIM_SUM: u64 = 1;

type EvaluateStream = ReceiverStream<Result<Sent<EvaluateResponse>, Status>>;

/// The no-op service; see the module documentation.
#[derive(Debug, Clone, Copy)]
pub struct NoOp {
    /// The vertex count its summaries report.
    pub vertex_count: u32,
}

#[tonic::async_trait]
impl GrundyService for NoOp {
    type EvaluateStream = EvaluateStream;
    type EvaluateBatchStream = ReceiverStream<Result<Sent<EvaluateBatchResponse>, Status>>;
    type GetValuesStream = ReceiverStream<Result<GetValuesResponse, Status>>;

    async fn evaluate(
        &self,
        request: Request<Streaming<EvaluateRequest>>,
    ) -> Result<Response<EvaluateStream>, Status> {
        let mut inbound = request.into_inner();
        // As grundy: the response headers wait for the first message.
        match inbound.message().await? {
            Some(EvaluateRequest {
                payload: Some(Payload::Start(_)),
            }) => {}
            _ => return Err(Status::invalid_argument("expected `start` first")),
        }
        let (tx, rx) = mpsc::channel(RESPONSE_BUFFER);
        let summary = EvaluateResponse {
            graph: Some(proto::GraphSummary {
                vertex_count: self.vertex_count,
                ..Default::default()
            }),
            ..Default::default()
        };
        // As grundy: the requests are read ahead on a task of their own, so that decoding a
        // batch overlaps with answering the one before.
        let (read_tx, mut read) = mpsc::channel(RESPONSE_BUFFER);
        tokio::spawn(async move {
            while let Ok(Some(message)) = inbound.message().await {
                let Some(Payload::Queries(batch)) = message.payload else {
                    return;
                };
                if read_tx.send(batch).await.is_err() {
                    return;
                }
            }
        });
        tokio::spawn(async move {
            if tx.send(Ok(Sent::Message(summary))).await.is_err() {
                return;
            }
            while let Some(batch) = read.recv().await {
                if tx.send(Ok(Sent::Message(answer(&batch)))).await.is_err() {
                    return;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn evaluate_batch(
        &self,
        _: Request<EvaluateBatchRequest>,
    ) -> Result<Response<Self::EvaluateBatchStream>, Status> {
        Err(Status::unimplemented(
            "the no-op service answers Evaluate only",
        ))
    }

    /// Reads every chunk (decoded by the same codec as grundy's) and answers with an empty
    /// id: the upload's transport floor.
    async fn put_graph(
        &self,
        request: Request<Streaming<PutGraphRequest>>,
    ) -> Result<Response<PutGraphResponse>, Status> {
        let mut inbound = request.into_inner();
        let mut targets = 0usize;
        while let Some(chunk) = inbound.message().await? {
            targets += chunk
                .chunk
                .map_or(0, |graph| graph.targets.len() + graph.fixed_targets.len());
        }
        Ok(Response::new(PutGraphResponse {
            graph: Some(proto::GraphSummary {
                vertex_count: self.vertex_count,
                edge_count: targets as u64,
                ..Default::default()
            }),
            ..Default::default()
        }))
    }

    async fn get_values(
        &self,
        _: Request<GetValuesRequest>,
    ) -> Result<Response<Self::GetValuesStream>, Status> {
        Err(Status::unimplemented(
            "the no-op service answers Evaluate only",
        ))
    }
}

/// Packed verdicts of the batch's shape: one WIN and one nim-sum per packed query.
fn answer(batch: &proto::QueryBatch) -> EvaluateResponse {
    let packed = batch.packed_tokens.as_ref();
    let count = packed.map_or(0, |p| p.token_counts.len());
    EvaluateResponse {
        packed_verdicts: Some(proto::PackedVerdicts {
            first_query_id: packed.map_or(0, |p| p.first_query_id),
            outcomes: vec![proto::Outcome::Win.into(); count],
            nim_sums: vec![NIM_SUM; count],
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Serves `service` on a loopback port until the returned sender is dropped.
pub async fn serve(service: NoOp) -> (SocketAddr, oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let address = listener.local_addr().expect("bound address");
    let (stop, stopped) = oneshot::channel::<()>();
    let server = GrundyServiceServer::new(service)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    tokio::spawn(
        grundy::service::http2_transport()
            .add_service(server)
            .serve_with_incoming_shutdown(incoming, async {
                let _ = stopped.await;
            }),
    );
    (address, stop)
}
