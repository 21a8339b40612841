//! The graph registry: content-addressed graph ids, and a cache of analysed graphs bounded by
//! bytes (least recently used evicted first), where concurrent requests for the same new
//! graph share one computation (single flight). Behind the cache is the graph store
//! ([`super::store`]): `PutGraph` writes the graph there, and a lookup by id that misses the
//! cache loads the graph from it (verified), analyses it and caches it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use lru::LruCache;
use sha2::{Digest, Sha256};
use tokio::sync::watch;
use tracing::Instrument;

use super::blocking::WorkPool;
use super::error::ServiceError;
use super::metrics::Metrics;
use super::store::{self, GraphId, GraphStore, StoreError};
use crate::engine::{self, Analysis, Game, Limits};

/// Domain separator and version of the canonical encoding: a new encoding gets a new tag.
const CANONICAL_TAG: &[u8] = b"grundy.v1.Graph/1\0";

/// The content-addressed id of a game: lowercase hex SHA-256 of its canonical encoding.
///
/// The encoding (all integers little-endian): the tag, `vertex_count` (u32), each vertex's
/// out-degree (u32), then each vertex's out-neighbours sorted increasingly (u32 each,
/// multi-edges repeated), then `0u8` for token sliding or `1u8` and each split count (u32).
/// Out-neighbour lists are sorted because their order changes no value or verdict, so the
/// same graph gets the same id however its lists were ordered. O(V + E log Δ), blocking the
/// thread: call it off the async runtime for big graphs.
pub fn graph_id_blocking(game: &Game) -> String {
    let graph = game.graph();
    let mut writer = HashWriter::default();
    writer.bytes(CANONICAL_TAG);
    writer.u32(graph.vertex_count());
    for vertex in 0..graph.vertex_count() {
        writer.u32(graph.out_degree(vertex));
    }
    let mut neighbours: Vec<u32> = Vec::new();
    for vertex in 0..graph.vertex_count() {
        neighbours.clear();
        neighbours.extend_from_slice(graph.successors(vertex));
        neighbours.sort_unstable();
        for &target in &neighbours {
            writer.u32(target);
        }
    }
    match game.split_counts() {
        None => writer.bytes(&[0]),
        Some(split_counts) => {
            writer.bytes(&[1]);
            for &k in split_counts {
                writer.u32(k);
            }
        }
    }
    let digest = writer.finish();
    let mut id = String::with_capacity(64);
    for byte in digest {
        id.push(char::from(HEX[usize::from(byte >> 4)]));
        id.push(char::from(HEX[usize::from(byte & 15)]));
    }
    id
}

/// Feeds SHA-256 through a buffer: one `update` per 64 KiB instead of one per integer.
#[derive(Default)]
struct HashWriter {
    hasher: Sha256,
    buffer: Vec<u8>,
}

impl HashWriter {
    const CHUNK: usize = 1 << 16;

    fn bytes(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= Self::CHUNK {
            self.hasher.update(&self.buffer);
            self.buffer.clear();
        }
    }

    fn u32(&mut self, value: u32) {
        self.bytes(&value.to_le_bytes());
    }

    fn finish(mut self) -> [u8; 32] {
        self.hasher.update(&self.buffer);
        self.hasher.finalize().into()
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// How [`Registry::get_or_analyse`] obtained an analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// It was in the cache.
    Hit,
    /// This request started the computation.
    Computed,
    /// Another request was already computing it; this one waited for that result.
    Joined,
}

type Flight = Option<Result<Arc<Analysis>, ServiceError>>;

/// Where a computation gets its graph.
enum Source {
    /// Given by the request (inline or `PutGraph`), already validated.
    Game(Game),
    /// Registered earlier: loaded from the store.
    Stored(GraphId),
}

/// The cache of analysed graphs. Cheap to clone (a handle). Outside the crate it is a
/// read-only view, for tests and operators (sizes and counts).
#[derive(Debug, Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    capacity_bytes: usize,
    pool: WorkPool,
    metrics: Arc<Metrics>,
    store: GraphStore,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    cache: LruCache<String, Arc<Analysis>>,
    bytes: usize,
    /// Computations under way, by graph id: each request for the id waits on the receiver.
    in_flight: HashMap<String, watch::Receiver<Flight>>,
}

impl Registry {
    /// A registry holding at most `capacity_bytes` of tables, analysing on `pool`, keeping
    /// registered graphs in `store`.
    pub(crate) fn new(
        capacity_bytes: usize,
        pool: WorkPool,
        metrics: Arc<Metrics>,
        store: GraphStore,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                capacity_bytes,
                pool,
                metrics,
                store,
                state: Mutex::new(State {
                    cache: LruCache::unbounded(),
                    bytes: 0,
                    in_flight: HashMap::new(),
                }),
            }),
        }
    }

    /// The cache's bound, in bytes.
    pub fn capacity_bytes(&self) -> usize {
        self.inner.capacity_bytes
    }

    /// Bytes held by cached tables.
    pub fn cached_bytes(&self) -> usize {
        self.state().bytes
    }

    /// Graphs in the cache.
    pub fn len(&self) -> usize {
        self.state().cache.len()
    }

    /// True when no graph is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The analysis of the registered graph `graph_id`: from the cache, or loaded from the
    /// store, verified, analysed and cached (once, however many requests ask). An id the
    /// store does not hold is [`ServiceError::UnknownGraph`].
    pub(crate) async fn get_or_load(
        &self,
        graph_id: &str,
        limits: Limits,
    ) -> Result<(Arc<Analysis>, Lookup), ServiceError> {
        // A malformed id names no graph: it never reaches the store.
        let Some(id) = GraphId::parse(graph_id) else {
            self.inner.metrics.cache_misses.inc();
            return Err(ServiceError::UnknownGraph(graph_id.to_string()));
        };
        self.flight(graph_id.to_string(), Source::Stored(id), limits)
            .await
    }

    /// Writes the graph of `analysis` (registered as `graph_id`) to the store, so that it
    /// outlives the cache (and, with a shared store, is known to every replica).
    pub(crate) async fn store(
        &self,
        graph_id: &str,
        analysis: &Arc<Analysis>,
    ) -> Result<(), ServiceError> {
        let id = GraphId::parse(graph_id)
            .ok_or_else(|| ServiceError::Internal(format!("malformed graph id {graph_id:?}")))?;
        let analysis = analysis.clone();
        let encoded = self
            .inner
            .pool
            .analyse(move || Ok(store::encode_sync(analysis.game())))
            .await?;
        self.inner.store.put(&id, encoded).await?;
        Ok(())
    }

    /// The analysis of `game` (whose id is `graph_id`): from the cache, from a computation
    /// already under way, or computed now on the work pool (behind one of its analysis
    /// permits) and cached. The computation runs on its own task: a requester that leaves
    /// does not waste it, the table is cached for the next one.
    pub(crate) async fn get_or_analyse(
        &self,
        graph_id: String,
        game: Game,
        limits: Limits,
    ) -> Result<(Arc<Analysis>, Lookup), ServiceError> {
        self.flight(graph_id, Source::Game(game), limits).await
    }

    /// The single flight behind both lookups: a cache hit, a computation under way, or a
    /// new computation from `source` on its own task.
    async fn flight(
        &self,
        graph_id: String,
        source: Source,
        limits: Limits,
    ) -> Result<(Arc<Analysis>, Lookup), ServiceError> {
        let (mut flight, lookup) = {
            let mut state = self.state();
            if let Some(analysis) = state.cache.get(&graph_id) {
                self.inner.metrics.cache_hits.inc();
                return Ok((analysis.clone(), Lookup::Hit));
            }
            self.inner.metrics.cache_misses.inc();
            match state.in_flight.get(&graph_id) {
                Some(flight) => (flight.clone(), Lookup::Joined),
                None => {
                    let (done, flight) = watch::channel(None);
                    state.in_flight.insert(graph_id.clone(), flight.clone());
                    // In the span of the RPC that started it, for its trace.
                    let compute = self.clone().compute(graph_id, source, limits, done);
                    tokio::spawn(compute.in_current_span());
                    (flight, Lookup::Computed)
                }
            }
        };
        let result = flight
            .wait_for(Option::is_some)
            .await
            .map_err(|_| ServiceError::Internal("the table computation was abandoned".into()))?
            .clone()
            .expect("waited for Some");
        result.map(|analysis| (analysis, lookup))
    }

    async fn compute(
        self,
        graph_id: String,
        source: Source,
        limits: Limits,
        done: watch::Sender<Flight>,
    ) {
        let result = self.analyse_source(source, limits).await;
        if let Err(ServiceError::Store(error @ StoreError::Corrupt { .. })) = &result {
            tracing::error!(%error, "stored graph failed its checks; not served");
        }
        {
            let mut state = self.state();
            state.in_flight.remove(&graph_id);
            if let Ok(analysis) = &result {
                self.insert_locked(&mut state, graph_id, analysis.clone());
            }
        }
        // Nobody waiting any more is fine: the table is cached all the same.
        let _ = done.send(Some(result));
    }

    /// Loads the graph if it is stored (the I/O outside the pool), then verifies and
    /// analyses it on the pool.
    async fn analyse_source(
        &self,
        source: Source,
        limits: Limits,
    ) -> Result<Arc<Analysis>, ServiceError> {
        let encoded = match source {
            Source::Game(game) => Ok(game),
            Source::Stored(id) => match self.inner.store.get(&id).await? {
                Some(bytes) => Err((id, bytes)),
                None => return Err(ServiceError::UnknownGraph(id.to_string())),
            },
        };
        let metrics = self.inner.metrics.clone();
        self.inner
            .pool
            .analyse(move || {
                let game = match encoded {
                    Ok(game) => game,
                    Err((id, bytes)) => store::decode_sync(&id, &bytes)?,
                };
                let started = Instant::now();
                let analysis = engine::analyse(game, &limits)?;
                metrics
                    .table_compute_seconds
                    .observe(started.elapsed().as_secs_f64());
                Ok(Arc::new(analysis))
            })
            .await
    }

    /// Caches `analysis`, evicting least recently used tables to stay within the bound. A
    /// table larger than the whole cache is not cached.
    fn insert_locked(&self, state: &mut State, graph_id: String, analysis: Arc<Analysis>) {
        let bytes = analysis.heap_bytes();
        if bytes > self.inner.capacity_bytes {
            tracing::debug!(
                graph_id,
                bytes,
                capacity = self.inner.capacity_bytes,
                "table larger than the cache; not cached"
            );
            return;
        }
        if let Some(old) = state.cache.put(graph_id, analysis) {
            state.bytes -= old.heap_bytes();
        }
        state.bytes += bytes;
        while state.bytes > self.inner.capacity_bytes {
            let Some((evicted_id, evicted)) = state.cache.pop_lru() else {
                break;
            };
            state.bytes -= evicted.heap_bytes();
            self.inner.metrics.cache_evictions.inc();
            tracing::debug!(graph_id = evicted_id, "table evicted from the cache");
        }
        let metrics = &self.inner.metrics;
        metrics.cache_bytes.set(state.bytes as i64);
        metrics.cache_entries.set(state.cache.len() as i64);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The lock is never held across an await or a computation; a poisoned lock means a
        // panic in the few lines above, and the state is still consistent enough to go on.
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
