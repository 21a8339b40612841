//! `PutGraph`: a graph uploaded in chunks, analysed and registered under its content id.

use prost::Message;
use tonic::{Request, Response, Status, Streaming};
use tracing::Instrument;

use crate::proto::{PutGraphRequest, PutGraphResponse};
use crate::service::convert::graph_summary;
use crate::service::error::{Limit, ServiceError};
use crate::service::registry::Lookup;
use crate::service::state::GameService;

/// Receives the chunks, registers the graph, and answers with its id and summary. A table
/// larger than the whole cache could not stay registered, so it is refused.
pub(super) async fn put_graph(
    service: &GameService,
    request: Request<Streaming<PutGraphRequest>>,
) -> Result<Response<PutGraphResponse>, Status> {
    let mut rpc = service.begin("PutGraph", &request)?;
    let inbound = request.into_inner();
    let span = rpc.span.clone();
    let result = async {
        let (graph, hashed) = service.receive_chunks(&mut rpc, inbound).await?;
        let resolved = service.register(&mut rpc, graph, hashed).await?;
        let table_bytes = resolved.analysis.heap_bytes();
        let capacity = service.registry.capacity_bytes();
        if table_bytes > capacity {
            return Err(ServiceError::LimitExceeded {
                limit: Limit::CacheBytes,
                value: capacity as u64,
                what: format!("the graph's table of {table_bytes} bytes"),
            }
            .into());
        }
        // Only a stored graph is registered: the id must work after an eviction, a restart
        // or on another replica. A store that cannot take it fails the call (UNAVAILABLE),
        // and a failed call registers nothing: a table this call analysed leaves the cache,
        // so the id is not evaluable here either (one cached before the call stays).
        // The same when the call stops while the store works (shutdown, the deadline).
        let stored = service
            .registry
            .store(&resolved.graph_id, &resolved.analysis);
        let stored = rpc.guard(stored).await;
        if let Err(status) = stored.and_then(|stored| stored.map_err(Status::from)) {
            if resolved.lookup != Lookup::Hit {
                service.registry.forget(&resolved.graph_id);
            }
            return Err(status);
        }
        Ok::<_, Status>(PutGraphResponse {
            graph: Some(graph_summary(&resolved.analysis, &resolved.graph_id)),
            already_registered: resolved.lookup == Lookup::Hit,
            graph_id: resolved.graph_id,
        })
    }
    .instrument(span)
    .await;
    match result {
        Ok(response) => {
            rpc.sizes.response.observe(response.encoded_len() as f64);
            rpc.succeed();
            Ok(Response::new(response))
        }
        Err(status) => Err(rpc.fail(status)),
    }
}
