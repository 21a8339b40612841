//! The default backend: encoded graphs in this process's memory, at most a byte bound of
//! them, least recently used dropped first. Nothing survives a restart and nothing is shared
//! with other replicas; one command on a fresh machine needs nothing else.

use std::sync::{Arc, Mutex, MutexGuard};

use lru::LruCache;

use super::{Backend, GraphId, StoreFuture};

/// Encoded graphs in memory, bounded by bytes. Cheap to clone (a handle).
#[derive(Debug, Clone)]
pub struct MemoryStore {
    capacity_bytes: usize,
    state: Arc<Mutex<State>>,
}

#[derive(Debug)]
struct State {
    entries: LruCache<GraphId, Arc<[u8]>>,
    bytes: usize,
}

impl MemoryStore {
    /// A store holding at most `capacity_bytes` of encoded graphs; a larger graph is not kept.
    pub fn new(capacity_bytes: usize) -> Self {
        Self {
            capacity_bytes,
            state: Arc::new(Mutex::new(State {
                entries: LruCache::unbounded(),
                bytes: 0,
            })),
        }
    }

    /// Bytes of the encoded graphs held.
    pub fn bytes(&self) -> usize {
        self.state().bytes
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Held for a few map operations only, never across an await; a panic in them leaves
        // the map consistent enough to go on.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn insert(&self, id: &GraphId, encoded: Vec<u8>) {
        if encoded.len() > self.capacity_bytes {
            tracing::debug!(graph_id = %id, bytes = encoded.len(), "graph larger than the memory store");
            return;
        }
        let mut state = self.state();
        state.bytes += encoded.len();
        if let Some(old) = state.entries.put(id.clone(), encoded.into()) {
            state.bytes -= old.len();
        }
        while state.bytes > self.capacity_bytes {
            let Some((_, evicted)) = state.entries.pop_lru() else {
                break;
            };
            state.bytes -= evicted.len();
        }
    }
}

impl Backend for MemoryStore {
    fn kind(&self) -> &'static str {
        "memory"
    }

    fn put<'a>(&'a self, id: &'a GraphId, encoded: Vec<u8>) -> StoreFuture<'a, ()> {
        self.insert(id, encoded);
        Box::pin(async { Ok(()) })
    }

    fn get<'a>(&'a self, id: &'a GraphId) -> StoreFuture<'a, Option<Vec<u8>>> {
        let found = self.state().entries.get(id).map(|bytes| bytes.to_vec());
        Box::pin(async move { Ok(found) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::store::GraphStore;
    use crate::service::store::codec::tests::{same_game, sample_games};
    use crate::service::store::{decode_sync, encode_sync};

    #[tokio::test]
    async fn round_trips_and_handles_share_entries() {
        let store = MemoryStore::new(1 << 20);
        let handle = GraphStore::from_backend(Arc::new(store.clone()));
        for (id, game) in sample_games() {
            assert_eq!(handle.get(&id).await, Ok(None));
            handle.put(&id, encode_sync(&game)).await.expect("stored");
        }
        // Another handle on the same store (what "reopening" means in one process).
        let again = GraphStore::from_backend(Arc::new(store));
        for (id, game) in sample_games() {
            let bytes = again.get(&id).await.expect("readable").expect("present");
            assert!(same_game(&decode_sync(&id, &bytes).expect("valid"), &game));
        }
    }

    #[tokio::test]
    async fn stays_within_its_bound() {
        let games = sample_games();
        let sizes: Vec<usize> = games.iter().map(|(_, g)| encode_sync(g).len()).collect();
        let store = MemoryStore::new(sizes[0].max(sizes[1]));
        for (id, game) in &games {
            store.put(id, encode_sync(game)).await.expect("stored");
        }
        assert!(store.bytes() <= sizes[0].max(sizes[1]));
        assert_eq!(store.get(&games[0].0).await, Ok(None), "evicted");
        assert!(store.get(&games[1].0).await.expect("readable").is_some());
        let tiny = MemoryStore::new(8);
        tiny.put(&games[0].0, encode_sync(&games[0].1))
            .await
            .unwrap();
        assert_eq!(tiny.get(&games[0].0).await, Ok(None), "too large to keep");
    }
}
