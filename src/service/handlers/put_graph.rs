//! `PutGraph`: a graph uploaded in chunks, analysed and registered under its content id.

use prost::Message;
use tonic::{Request, Response, Status, Streaming};
use tracing::Instrument;

use crate::proto::{PutGraphRequest, PutGraphResponse};
use crate::service::convert::graph_summary;
use crate::service::error::{Limit, ServiceError};
use crate::service::graphs::Resolved;
use crate::service::registry::{Lookup, Registry};
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
        // or on another replica. A store that cannot take it fails the call (UNAVAILABLE).
        let unstored = Unstored::new(&service.registry, &resolved);
        let stored = service
            .registry
            .store(&resolved.graph_id, &resolved.analysis);
        rpc.guard(stored)
            .await
            .and_then(|stored| stored.map_err(Status::from))?;
        unstored.stored();
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

/// A table this call analysed, until the store has it: a call that fails before then (the
/// store unavailable, the deadline passed, the server stopping) or is dropped (its client
/// gone) registers nothing, so the table leaves the cache and the id is not evaluable here
/// either. A table cached before the call stays, and so does one whose analysis this call
/// joined: the call that ran it stores it, or forgets it if it cannot.
struct Unstored<'a> {
    registry: &'a Registry,
    /// The id to forget when dropped; `None` when nothing is to be forgotten.
    graph_id: Option<&'a str>,
}

impl<'a> Unstored<'a> {
    fn new(registry: &'a Registry, resolved: &'a Resolved) -> Self {
        Self {
            registry,
            graph_id: (resolved.lookup == Lookup::Computed).then_some(resolved.graph_id.as_str()),
        }
    }

    /// The store has the graph: the table stays registered.
    fn stored(mut self) {
        self.graph_id = None;
    }
}

impl Drop for Unstored<'_> {
    fn drop(&mut self) {
        if let Some(graph_id) = self.graph_id {
            self.registry.forget(graph_id);
        }
    }
}
