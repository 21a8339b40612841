//! The four RPCs of `grundy.v1.GrundyService`, each in its own file over the shared
//! [`super::rpc`] guard and response-stream helper.

mod evaluate;
mod get_values;
mod put_graph;

use tonic::{Request, Response, Status, Streaming};

use super::rpc::ResponseStream;
use super::state::GameService;
use crate::proto::{
    EvaluateBatchRequest, EvaluateBatchResponse, EvaluateRequest, EvaluateResponse,
    GetValuesRequest, GetValuesResponse, PutGraphRequest, PutGraphResponse, Sent,
    grundy_service_server::GrundyService,
};

#[tonic::async_trait]
impl GrundyService for GameService {
    type EvaluateStream = ResponseStream<Sent<EvaluateResponse>>;
    type EvaluateBatchStream = ResponseStream<Sent<EvaluateBatchResponse>>;
    type GetValuesStream = ResponseStream<GetValuesResponse>;

    async fn evaluate(
        &self,
        request: Request<Streaming<EvaluateRequest>>,
    ) -> Result<Response<Self::EvaluateStream>, Status> {
        evaluate::evaluate(self, request).await
    }

    async fn evaluate_batch(
        &self,
        request: Request<EvaluateBatchRequest>,
    ) -> Result<Response<Self::EvaluateBatchStream>, Status> {
        evaluate::evaluate_batch(self, request).await
    }

    async fn put_graph(
        &self,
        request: Request<Streaming<PutGraphRequest>>,
    ) -> Result<Response<PutGraphResponse>, Status> {
        put_graph::put_graph(self, request).await
    }

    async fn get_values(
        &self,
        request: Request<GetValuesRequest>,
    ) -> Result<Response<Self::GetValuesStream>, Status> {
        get_values::get_values(self, request).await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::time::Instant;
    use tonic::Code;

    use super::*;
    use crate::proto::{self, EvaluateStart, evaluate_start::GraphSource};
    use crate::service::ServiceConfig;
    use crate::service::rpc::deadline::RequestArrival;

    /// The deadline counts from the stamped arrival, not from when the handler started: a
    /// request that arrived a second ago with a 500 ms timeout is already late.
    #[tokio::test]
    async fn deadlines_count_from_the_stamped_arrival() {
        let service = GameService::new(ServiceConfig::default());
        let graph = proto::Graph {
            vertex_count: 2,
            out_degrees: vec![1, 0],
            targets: vec![1],
            split_counts: vec![],
            fixed_targets: vec![],
        };
        let request = |arrival: Option<Instant>| {
            let mut request = Request::new(EvaluateBatchRequest {
                start: Some(EvaluateStart {
                    graph_source: Some(GraphSource::Graph(graph.clone())),
                    explain: false,
                    analysis: None,
                    play_convention: 0,
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
}
