//! `GetValues`: the summary and per-vertex values of a registered graph, in pages.

use prost::Message;
use tonic::{Request, Response, Status};

use crate::proto::{GetValuesRequest, GetValuesResponse};
use crate::service::convert::convention::{check_game, play_convention};
use crate::service::convert::{ValuePages, graph_summary};
use crate::service::rpc::ResponseStream;
use crate::service::state::GameService;

/// Most encoded bytes of values per page (K sets can be long).
const MAX_PAGE_BYTES: usize = 1 << 20;

/// Streams the summary, then (unless `summary_only`) the requested values page by page.
pub(super) async fn get_values(
    service: &GameService,
    request: Request<GetValuesRequest>,
) -> Result<Response<ResponseStream<GetValuesResponse>>, Status> {
    let mut rpc = service.begin("GetValues", &request)?;
    rpc.sizes
        .request
        .observe(request.get_ref().encoded_len() as f64);
    let request = request.into_inner();
    let convention = match play_convention(request.play_convention, "play_convention") {
        Ok(convention) => convention,
        Err(error) => return Err(rpc.fail(error.into())),
    };
    let lookup = service
        .registry
        .get_or_load(&request.graph_id, service.config.limits);
    let analysis = match rpc.guard(lookup).await {
        Ok(Ok((analysis, _))) => analysis,
        Ok(Err(error)) => return Err(rpc.fail(error.into())),
        Err(status) => return Err(rpc.fail(status)),
    };
    if let Err(error) = check_game(&analysis, convention, "play_convention") {
        return Err(rpc.fail(error.into()));
    }
    rpc.record_graph(&request.graph_id, &analysis);
    let buffer = service.config.response_buffer;
    let service = service.clone();
    Ok(rpc.stream_responses(buffer, move |out| {
        Box::pin(async move {
            let first = GetValuesResponse {
                graph: Some(graph_summary(&analysis, &request.graph_id)),
                ..Default::default()
            };
            out.send(first).await?;
            if request.summary_only {
                return Ok(());
            }
            // Pages fit the message limit too (a page holds at least one value, and a value
            // is tens of bytes unless its K set is huge).
            let page_bytes = MAX_PAGE_BYTES.min(service.max_response_bytes.saturating_sub(16));
            let pages = ValuePages::new(&analysis, &request, convention, page_bytes.max(1));
            if !pages.is_empty() {
                // Each value carries its vertex's remoteness.
                let prepared = service.prepare_remoteness(&request.graph_id, &analysis, convention);
                out.guard(prepared).await??;
            }
            for page in pages {
                out.send(page).await?;
            }
            Ok(())
        })
    }))
}
