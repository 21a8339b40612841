//! The default backend: validated games in this process's memory, at most a byte bound of
//! them, least recently used dropped first. Nothing survives a restart and nothing is shared
//! with other replicas; one command on a fresh machine needs nothing else.
//!
//! An entry is the game itself, shared with the analysis the registry caches (an
//! `Arc<Game>`), not an encoding of it: while both hold a graph it is in memory once, and
//! after the cache evicted the analysis the entry is all that is left of it. The bound counts
//! each entry's [`Game::heap_bytes`] whether or not the cache shares it.

use std::sync::{Arc, Mutex, MutexGuard};

use lru::LruCache;

use super::backend::GraphId;
use crate::engine::Game;

/// The backend's kind, as `--store-*` flags and logs name it.
pub(super) const KIND: &str = "memory";

/// Games in memory, bounded by bytes. Cheap to clone (a handle).
#[derive(Debug, Clone)]
pub struct MemoryStore {
    capacity_bytes: usize,
    state: Arc<Mutex<State>>,
}

#[derive(Debug)]
struct State {
    entries: LruCache<GraphId, Arc<Game>>,
    bytes: usize,
}

impl MemoryStore {
    /// A store holding at most `capacity_bytes` of games; a larger game is not kept.
    pub fn new(capacity_bytes: usize) -> Self {
        Self {
            capacity_bytes,
            state: Arc::new(Mutex::new(State {
                entries: LruCache::unbounded(),
                bytes: 0,
            })),
        }
    }

    /// Bytes of the games held ([`Game::heap_bytes`] of each entry).
    pub fn bytes(&self) -> usize {
        self.state().bytes
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Held for a few map operations only, never across an await; a panic in them leaves
        // the map consistent enough to go on.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `game` under `id` (replacing an entry there), then drops least recently used
    /// entries until the bound holds. O(1) per entry: no copy of the game is made.
    pub fn insert(&self, id: &GraphId, game: Arc<Game>) {
        let bytes = game.heap_bytes();
        if bytes > self.capacity_bytes {
            tracing::debug!(graph_id = %id, bytes, "graph larger than the memory store");
            return;
        }
        let mut state = self.state();
        state.bytes += bytes;
        if let Some(old) = state.entries.put(id.clone(), game) {
            state.bytes -= old.heap_bytes();
        }
        while state.bytes > self.capacity_bytes {
            let Some((_, evicted)) = state.entries.pop_lru() else {
                break;
            };
            state.bytes -= evicted.heap_bytes();
        }
    }

    /// The game stored under `id` (marked as used), or `None`.
    pub fn get(&self, id: &GraphId) -> Option<Arc<Game>> {
        self.state().entries.get(id).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::store::decode::tests::sample_games;
    use crate::service::store::{GraphStore, StoredGraph};

    #[tokio::test]
    async fn keeps_the_game_itself_and_handles_share_entries() {
        let store = MemoryStore::new(1 << 20);
        let handle = GraphStore::memory(store.clone());
        let games: Vec<(GraphId, Arc<Game>)> = sample_games()
            .into_iter()
            .map(|(id, game)| (id, Arc::new(game)))
            .collect();
        for (id, game) in &games {
            assert!(handle.get(id).await.expect("readable").is_none());
            handle.put(id, game).await.expect("stored");
        }
        // Another handle on the same store (what "reopening" means in one process) gives
        // back the very games that were put, not copies.
        let again = GraphStore::memory(store.clone());
        for (id, game) in &games {
            match again.get(id).await.expect("readable") {
                Some(StoredGraph::Game(found)) => assert!(Arc::ptr_eq(&found, game)),
                other => panic!("expected the shared game, got {other:?}"),
            }
        }
        let total: usize = games.iter().map(|(_, g)| g.heap_bytes()).sum();
        assert_eq!(store.bytes(), total);
    }

    #[test]
    fn stays_within_its_bound() {
        let games = sample_games();
        let sizes: Vec<usize> = games.iter().map(|(_, g)| g.heap_bytes()).collect();
        let bound = sizes[0].max(sizes[1]);
        let store = MemoryStore::new(bound);
        for (id, game) in &games {
            store.insert(id, Arc::new(game.clone()));
        }
        assert!(store.bytes() <= bound);
        assert!(store.get(&games[0].0).is_none(), "evicted");
        assert!(store.get(&games[1].0).is_some());
        // Putting an id again replaces its entry without counting it twice.
        store.insert(&games[1].0, Arc::new(games[1].1.clone()));
        assert_eq!(store.bytes(), sizes[1]);
        let tiny = MemoryStore::new(8);
        tiny.insert(&games[0].0, Arc::new(games[0].1.clone()));
        assert!(tiny.get(&games[0].0).is_none(), "too large to keep");
        assert_eq!(tiny.bytes(), 0);
    }
}
