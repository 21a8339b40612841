//! The graph registry: a cache of analysed graphs bounded by bytes (least recently used
//! evicted first), where concurrent requests for the same new graph share one computation
//! (single flight). Behind the cache is the graph store ([`super::store`]): `PutGraph` writes
//! the graph there, and a lookup by id that misses the cache loads the graph from it
//! (verified when it comes as bytes), analyses it and caches it.
//!
//! A computation lives as long as some request waits for it: when the last one leaves (its
//! client cancelled, its deadline passed), the computation stops waiting for a slot, and an
//! analysis already running is interrupted (the engine polls an [`Interrupt`] flag), so that
//! abandoned graphs do not hold the slots other clients wait for. A graph whose analysis
//! failed a limit (the cyclic work budget, values beyond 64 bits) is remembered by id, a
//! bounded number of them: sent again, it is refused at once instead of analysed again to
//! the same failure.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use lru::LruCache;
use tokio::sync::watch;
use tracing::Instrument;

use super::blocking::WorkPool;
use super::error::ServiceError;
use super::metrics::Metrics;
use super::store::{self, GraphId, GraphStore, StoreError, StoredGraph};
use crate::engine::{self, Analysis, AnalysisError, Game, Interrupt, Limits};

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

/// What a computation publishes: `None` until it is done.
type Outcome = Option<Result<Arc<Analysis>, ServiceError>>;

/// A computation under way, shared by the requests waiting for it.
#[derive(Debug)]
struct Flight {
    done: watch::Receiver<Outcome>,
    /// Requests waiting for it; at 0 it is abandoned.
    waiters: usize,
    /// Raised when the flight is abandoned: stops the engine.
    interrupt: Interrupt,
    /// Tells this flight from a later one for the same graph id.
    generation: u64,
}

/// One computation: the graph, where it comes from, and how to stop it.
struct Job {
    graph_id: String,
    generation: u64,
    source: Source,
    limits: Limits,
    interrupt: Interrupt,
}

/// One request waiting for a flight. Dropped (the request answered, failed or abandoned),
/// it counts itself out; the last one out abandons the flight: the flight leaves the map
/// (the next request starts afresh) and its interrupt is raised.
struct Waiter<'a> {
    registry: &'a Registry,
    graph_id: &'a str,
    generation: u64,
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        let mut state = self.registry.state();
        let Some(flight) = state.in_flight.get_mut(self.graph_id) else {
            return; // done: the computation removed it
        };
        if flight.generation != self.generation {
            return; // a later flight for the same graph
        }
        flight.waiters -= 1;
        if flight.waiters == 0 {
            flight.interrupt.interrupt();
            state.in_flight.remove(self.graph_id);
        }
    }
}

/// Whether a failed analysis would fail the same way again (the limits are the server's,
/// the same for every request): worth remembering. A cancellation, a store outage or a
/// worker failure is not.
fn is_lasting_failure(error: &ServiceError) -> bool {
    matches!(
        error,
        ServiceError::Analysis(
            AnalysisError::CyclicWork(_) | AnalysisError::Split(_) | AnalysisError::Cycle { .. }
        )
    )
}

/// Where a computation gets its graph.
enum Source {
    /// Given by the request (inline or `PutGraph`), already validated.
    Game(Arc<Game>),
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
    /// Computations under way, by graph id: each request for the id waits on its receiver.
    in_flight: HashMap<String, Flight>,
    /// The generation of the next flight.
    next_generation: u64,
    /// Graphs whose analysis failed a limit, with the failure, most recent first.
    failed: LruCache<String, ServiceError>,
}

impl Registry {
    /// A registry holding at most `capacity_bytes` of tables and remembering the failures of
    /// at most `failed_graphs` graphs, analysing on `pool`, keeping registered graphs in
    /// `store`.
    pub(crate) fn new(
        capacity_bytes: usize,
        failed_graphs: usize,
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
                    next_generation: 0,
                    failed: LruCache::new(
                        NonZeroUsize::new(failed_graphs).unwrap_or(NonZeroUsize::MIN),
                    ),
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

    /// Analyses waiting for a slot or running (each shared by every request that waits for
    /// it; dropped or interrupted when the last one leaves).
    pub fn analyses_in_flight(&self) -> usize {
        self.state().in_flight.len()
    }

    /// Graphs remembered as having failed a limit (refused at once when sent again).
    pub fn failed_len(&self) -> usize {
        self.state().failed.len()
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
    /// outlives the cache (and, with a shared store, is known to every replica). The memory
    /// store shares the analysed game; the others write its stored form a piece at a time.
    pub(crate) async fn store(
        &self,
        graph_id: &str,
        analysis: &Arc<Analysis>,
    ) -> Result<(), ServiceError> {
        let id = GraphId::parse(graph_id)
            .ok_or_else(|| ServiceError::Internal(format!("malformed graph id {graph_id:?}")))?;
        Ok(self.inner.store.put(&id, analysis.shared_game()).await?)
    }

    /// The analysis of `game` (whose id is `graph_id`): from the cache, from a computation
    /// already under way, or computed now on the work pool (behind one of its analysis
    /// permits) and cached. The computation runs on its own task while any request waits for
    /// it; it stops when the last one leaves.
    pub(crate) async fn get_or_analyse(
        &self,
        graph_id: String,
        game: Game,
        limits: Limits,
    ) -> Result<(Arc<Analysis>, Lookup), ServiceError> {
        self.flight(graph_id, Source::Game(Arc::new(game)), limits)
            .await
    }

    /// The single flight behind both lookups: a cache hit, a failure remembered, a
    /// computation under way, or a new computation from `source` on its own task.
    async fn flight(
        &self,
        graph_id: String,
        source: Source,
        limits: Limits,
    ) -> Result<(Arc<Analysis>, Lookup), ServiceError> {
        let (mut done, lookup, generation) = {
            let mut state = self.state();
            if let Some(analysis) = state.cache.get(&graph_id) {
                self.inner.metrics.cache_hits.inc();
                return Ok((analysis.clone(), Lookup::Hit));
            }
            self.inner.metrics.cache_misses.inc();
            if let Some(failure) = state.failed.get(&graph_id) {
                tracing::debug!(
                    graph_id,
                    "graph failed its analysis before; refused at once"
                );
                return Err(failure.clone());
            }
            match state.in_flight.get_mut(&graph_id) {
                Some(flight) => {
                    flight.waiters += 1;
                    (flight.done.clone(), Lookup::Joined, flight.generation)
                }
                None => {
                    let generation = state.next_generation;
                    state.next_generation += 1;
                    let (publish, done) = watch::channel(None);
                    let interrupt = Interrupt::new();
                    let flight = Flight {
                        done: done.clone(),
                        waiters: 1,
                        interrupt: interrupt.clone(),
                        generation,
                    };
                    state.in_flight.insert(graph_id.clone(), flight);
                    let job = Job {
                        graph_id: graph_id.clone(),
                        generation,
                        source,
                        limits,
                        interrupt,
                    };
                    // In the span of the RPC that started it, for its trace.
                    tokio::spawn(self.clone().compute(job, publish).in_current_span());
                    (done, Lookup::Computed, generation)
                }
            }
        };
        // Counts this request out of the flight however it ends (the future dropped too).
        let _waiter = Waiter {
            registry: self,
            graph_id: &graph_id,
            generation,
        };
        let result = done
            .wait_for(Option::is_some)
            .await
            .map_err(|_| ServiceError::Internal("the table computation was abandoned".into()))?
            .clone()
            .expect("waited for Some");
        result.map(|analysis| (analysis, lookup))
    }

    /// Runs one flight until it is done or nobody waits for it any more (every receiver of
    /// `publish` dropped), then publishes the result, caches a table and remembers a
    /// failure of a limit.
    async fn compute(self, job: Job, publish: watch::Sender<Outcome>) {
        let Job {
            graph_id,
            generation,
            source,
            limits,
            interrupt,
        } = job;
        let work = self.analyse_source(source, limits, interrupt.clone());
        let result = tokio::select! {
            result = work => result,
            () = publish.closed() => {
                // Stops an analysis already running; one still waiting for a slot is dropped.
                interrupt.interrupt();
                tracing::info!(graph_id, "analysis abandoned: no request waits for it any more");
                return;
            }
        };
        if let Err(ServiceError::Store(error @ StoreError::Corrupt { .. })) = &result {
            tracing::error!(%error, "stored graph failed its checks; not served");
        }
        {
            let mut state = self.state();
            if state
                .in_flight
                .get(&graph_id)
                .is_some_and(|flight| flight.generation == generation)
            {
                state.in_flight.remove(&graph_id);
            }
            match &result {
                Ok(analysis) => self.insert_locked(&mut state, graph_id, analysis.clone()),
                Err(error) if is_lasting_failure(error) => {
                    state.failed.put(graph_id, error.clone());
                }
                Err(_) => {}
            }
        }
        // Nobody waiting any more is fine: the table is cached all the same.
        let _ = publish.send(Some(result));
    }

    /// Finds the graph if it is stored (a Redis entry is fetched here, a file only opened),
    /// then reads and verifies it (when it comes as bytes) and analyses it on the pool.
    async fn analyse_source(
        &self,
        source: Source,
        limits: Limits,
        interrupt: Interrupt,
    ) -> Result<Arc<Analysis>, ServiceError> {
        let encoded = match source {
            Source::Game(game) => Ok(game),
            Source::Stored(id) => match self.inner.store.get(&id).await? {
                Some(StoredGraph::Game(game)) => Ok(game),
                Some(StoredGraph::Encoded(bytes)) => Err((id, bytes)),
                None => return Err(ServiceError::UnknownGraph(id.to_string())),
            },
        };
        let metrics = self.inner.metrics.clone();
        self.inner
            .pool
            .analyse(move || {
                let game = match encoded {
                    Ok(game) => game,
                    Err((id, bytes)) => Arc::new(store::decode_sync(&id, bytes)?),
                };
                let started = Instant::now();
                let analysis = engine::analyse_interruptible(game, &limits, &interrupt)?;
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

    /// Drops the cached table of `graph_id`: a `PutGraph` that analysed a graph but did not
    /// store it (failed or abandoned) registers nothing, not even in this server's cache.
    pub(crate) fn forget(&self, graph_id: &str) {
        let mut state = self.state();
        if let Some(old) = state.cache.pop(graph_id) {
            state.bytes -= old.heap_bytes();
            let metrics = &self.inner.metrics;
            metrics.cache_bytes.set(state.bytes as i64);
            metrics.cache_entries.set(state.cache.len() as i64);
        }
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

#[cfg(test)]
mod tests;
