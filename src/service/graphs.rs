//! The graph an RPC works on: registered by id, given inline, or uploaded in `PutGraph`
//! chunks; validated and hashed off the runtime, then analysed once through the registry.

use std::sync::Arc;

use tonic::{Status, Streaming};

use super::convert::{self, GraphAssembler};
use super::error::{ServiceError, request_stream_status};
use super::graph_id;
use super::registry::Lookup;
use super::rpc::Rpc;
use super::state::GameService;
use crate::engine::Analysis;
use crate::proto::{self, PutGraphRequest, evaluate_start::GraphSource};
use crate::wire::WireMessage;

/// An analysed graph with its content-addressed id.
pub(crate) struct Resolved {
    pub(crate) analysis: Arc<Analysis>,
    pub(crate) graph_id: String,
    pub(crate) lookup: Lookup,
}

impl Resolved {
    /// The resolved graph, recorded in the RPC's span.
    fn recorded(rpc: &Rpc, analysis: Arc<Analysis>, graph_id: String, lookup: Lookup) -> Self {
        rpc.record_graph(&graph_id, &analysis);
        Self {
            analysis,
            graph_id,
            lookup,
        }
    }
}

impl GameService {
    /// The analysis of a stream's graph: registered by id, or given inline (validated,
    /// hashed and looked up in the cache by the same id).
    pub(crate) async fn resolve(
        &self,
        rpc: &mut Rpc,
        source: Option<GraphSource>,
    ) -> Result<Resolved, Status> {
        match source {
            Some(GraphSource::GraphId(graph_id)) => {
                let lookup = self.registry.get_or_load(&graph_id, self.config.limits);
                let (analysis, lookup) = rpc.guard(lookup).await??;
                Ok(Resolved::recorded(rpc, analysis, graph_id, lookup))
            }
            Some(GraphSource::Graph(graph)) => self.register(rpc, graph).await,
            None => Err(ServiceError::protocol(
                "start.graph_source",
                "start.graph_source: set either graph or graph_id",
            )
            .into()),
        }
    }

    /// Validates and hashes a wire graph off the async runtime, then gets its analysis from
    /// the cache or computes it once however many streams ask at the same time.
    pub(crate) async fn register(
        &self,
        rpc: &mut Rpc,
        graph: proto::Graph,
    ) -> Result<Resolved, Status> {
        self.check_graph_size(graph.vertex_count, graph.targets.len() as u64)?;
        let (game, graph_id) = rpc
            .guard(self.pool.analyse(move || {
                let game = convert::game_from_proto(graph)?;
                let graph_id = graph_id::graph_id_sync(&game);
                Ok((game, graph_id))
            }))
            .await??;
        let lookup = self
            .registry
            .get_or_analyse(graph_id.clone(), game, self.config.limits);
        let (analysis, lookup) = rpc.guard(lookup).await??;
        Ok(Resolved::recorded(rpc, analysis, graph_id, lookup))
    }

    /// Reads the chunks of `PutGraph` into one wire graph, checking the limits as it grows.
    pub(crate) async fn receive_chunks(
        &self,
        rpc: &mut Rpc,
        mut inbound: Streaming<PutGraphRequest>,
    ) -> Result<proto::Graph, Status> {
        let mut assembler = GraphAssembler::default();
        let start_timeout = self.config.start_timeout;
        let mut next = rpc.first_message(inbound.message(), start_timeout).await?;
        while let Some(request) = next {
            let chunk = request.chunk.unwrap_or_default();
            let (vertex_count, edge_count) = assembler.counts_with(&chunk)?;
            self.check_graph_size(vertex_count, edge_count)?;
            assembler.append(chunk)?;
            next = rpc
                .guard(inbound.message())
                .await?
                .map_err(request_stream_status)?;
            if let Some(request) = &next {
                rpc.sizes.request.observe(request.wire_len() as f64);
            }
        }
        Ok(assembler.finish()?)
    }
}
