//! The graph an RPC works on: registered by id, given inline, or uploaded in `PutGraph`
//! chunks; validated and hashed off the runtime, then analysed once through the registry.

use std::sync::Arc;

use tokio::task::JoinHandle;
use tonic::{Status, Streaming};
use tracing::Instrument;

use super::blocking::WorkPool;
use super::convert::{self, GraphAssembler, WireGraph};
use super::error::{ServiceError, request_stream_status};
use super::graph_id::{self, IdHasher};
use super::registry::Lookup;
use super::rpc::{Rpc, within_idle_timeout};
use super::state::GameService;
use crate::engine::Analysis;
use crate::engine::PlayConvention;
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
            Some(GraphSource::Graph(graph)) => {
                self.register(rpc, WireGraph::Whole(graph), None).await
            }
            None => Err(ServiceError::protocol(
                "start.graph_source",
                "start.graph_source: set either graph or graph_id",
            )
            .into()),
        }
    }

    /// Validates and hashes a wire graph (finishing `hashed`, what was hashed of it as it
    /// arrived, when there is one), then gets its analysis from the cache or computes it once
    /// however many streams ask at the same time. A small graph (at most
    /// [`INLINE_HASH_WORDS`] words) is validated and hashed on the runtime thread, a larger
    /// one on the work pool behind an analysis permit: a small graph already cached (a judge
    /// file's test case sent inline again) waits for no analysis slot that other clients'
    /// big graphs hold.
    pub(crate) async fn register(
        &self,
        rpc: &mut Rpc,
        graph: WireGraph,
        hashed: Option<IdHasher>,
    ) -> Result<Resolved, Status> {
        self.check_graph_size(graph.vertex_count(), graph.target_count() as u64)?;
        let words = graph.words(hashed.as_ref().is_some_and(IdHasher::is_whole));
        let identify = move || {
            let game = graph.into_game()?;
            let graph_id = hashed
                .and_then(|hasher| hasher.finish(game.split_counts()))
                .unwrap_or_else(|| graph_id::graph_id_sync(&game));
            Ok::<_, ServiceError>((game, graph_id))
        };
        let (game, graph_id) = if words <= INLINE_HASH_WORDS {
            identify()?
        } else {
            rpc.guard(self.pool.analyse(identify)).await??
        };
        let lookup = self
            .registry
            .get_or_analyse(graph_id.clone(), game, self.config.limits);
        let (analysis, lookup) = rpc.guard(lookup).await??;
        Ok(Resolved::recorded(rpc, analysis, graph_id, lookup))
    }

    /// Makes `analysis` (of `graph_id`) ready to answer remotenesses: an acyclic graph's table
    /// is computed on first need, on the work pool as an analysis, once however many requests
    /// ask (see [`super::remoteness`]).
    pub(crate) async fn prepare_remoteness(
        &self,
        graph_id: &str,
        analysis: &Arc<Analysis>,
        convention: PlayConvention,
    ) -> Result<(), ServiceError> {
        self.remoteness
            .prepare(&self.pool, graph_id, analysis, convention)
            .await
    }

    /// Reads the chunks of `PutGraph` into one wire graph, checking the limits as it grows,
    /// and hashes each chunk for the graph's id on the work pool while the next one arrives.
    pub(crate) async fn receive_chunks(
        &self,
        rpc: &mut Rpc,
        mut inbound: Streaming<PutGraphRequest>,
    ) -> Result<(WireGraph, Option<IdHasher>), Status> {
        let mut assembler = GraphAssembler::default();
        let mut hashing: Option<ChunkHashing> = None;
        let start_timeout = self.config.start_timeout;
        let mut next = rpc.first_message(inbound.message(), start_timeout).await?;
        let idle_timeout = self.config.stream_idle_timeout;
        let activity = rpc.activity();
        while let Some(request) = next {
            let chunk = request.chunk.unwrap_or_default();
            let (vertex_count, edge_count) = assembler.counts_with(&chunk)?;
            self.check_graph_size(vertex_count, edge_count)?;
            assembler.append(&chunk)?;
            hashing
                .get_or_insert_with(|| ChunkHashing::new(self.pool.clone(), vertex_count))
                .hash(rpc, chunk)
                .await?;
            let next_chunk =
                within_idle_timeout(inbound.message(), async {}, idle_timeout, activity.as_ref());
            next = rpc
                .guard(next_chunk)
                .await?
                .map_err(ServiceError::UploadIdleTimeout)?
                .map_err(request_stream_status)?;
            if let Some(request) = &next {
                rpc.sizes.request.observe(request.wire_len() as f64);
            }
        }
        let hashed = match hashing {
            Some(mut hashing) => hashing.wait(rpc).await?,
            None => None,
        };
        Ok((assembler.finish()?, hashed))
    }
}

/// Chunks of at most this many degrees and targets, and graphs of at most this many vertices,
/// targets and split counts, are hashed (and graphs validated) on the runtime thread that
/// received them: some 10 ns a word, within tokio's guidance between awaits.
const INLINE_HASH_WORDS: usize = 8192;

/// The id of an upload hashed chunk by chunk: each chunk on the work pool, while the stream
/// receives the next (one chunk at a time, in order). Hashing is an optimisation: a chunk
/// finds an analysis slot free or hashing stops (it never waits for one, nor delays an
/// analysis that does), and the id is then computed from the whole graph.
struct ChunkHashing {
    pool: WorkPool,
    hasher: Option<IdHasher>,
    running: Option<JoinHandle<Result<IdHasher, ServiceError>>>,
}

impl ChunkHashing {
    fn new(pool: WorkPool, vertex_count: u32) -> Self {
        Self {
            pool,
            hasher: Some(IdHasher::new(vertex_count)),
            running: None,
        }
    }

    /// Waits for the previous chunk's hashing, then starts `chunk`'s.
    async fn hash(&mut self, rpc: &mut Rpc, chunk: proto::Graph) -> Result<(), Status> {
        let Some(mut hasher) = self.wait(rpc).await? else {
            return Ok(());
        };
        // The work a chunk can cost: its own words, and a list it completes (sorted whole).
        let words = chunk.out_degrees.len() + convert::target_count(&chunk) + hasher.pending_len();
        if words <= INLINE_HASH_WORDS {
            // Less work than a trip to the pool (and a client sending many tiny chunks gets
            // no pool job for each).
            hash_chunk(&mut hasher, &chunk);
            self.hasher = Some(hasher);
            return Ok(());
        }
        let job = self.pool.try_analyse(move || {
            hash_chunk(&mut hasher, &chunk);
            Ok(hasher)
        });
        match job {
            Some(job) => self.running = Some(tokio::spawn(job.in_current_span())),
            None => tracing::debug!("no analysis slot free: the id is hashed once the upload ends"),
        }
        Ok(())
    }

    /// The hasher once the chunks sent to it are hashed; `None` if hashing stopped.
    async fn wait(&mut self, rpc: &mut Rpc) -> Result<Option<IdHasher>, Status> {
        let Some(job) = self.running.take() else {
            return Ok(self.hasher.take());
        };
        match rpc.guard(job).await? {
            Ok(Ok(hasher)) => Ok(Some(hasher)),
            Ok(Err(error)) => {
                tracing::debug!(%error, "hashing a chunk failed: the id is hashed once the upload ends");
                Ok(None)
            }
            Err(error) => {
                tracing::warn!(%error, "the task hashing a chunk failed: the id is hashed once the upload ends");
                Ok(None)
            }
        }
    }
}

/// Feeds a chunk's degrees and targets to `hasher`, its targets in the order the graph is
/// assembled in (`targets`, then `fixed_targets`).
fn hash_chunk(hasher: &mut IdHasher, chunk: &proto::Graph) {
    hasher.degrees(&chunk.out_degrees);
    hasher.targets(&chunk.targets);
    hasher.targets(&chunk.fixed_targets);
}
