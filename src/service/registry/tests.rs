//! The registry over the memory store: what it keeps is the analysed game itself, shared,
//! so that a registered graph is in memory once, and an id still works after the cache
//! evicted its analysis.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::engine::Digraph;
use crate::service::store::MemoryStore;

/// A path of `n` vertices, with its content id.
fn chain(n: u32) -> (String, Game) {
    let edges: Vec<(u32, u32)> = (1..n).map(|v| (v - 1, v)).collect();
    let game = Game::token_sliding(Digraph::from_edges(n, &edges).expect("valid"));
    (super::super::graph_id::graph_id_sync(&game), game)
}

fn registry(cache_bytes: usize, store: &MemoryStore) -> Registry {
    let metrics = Arc::new(Metrics::new());
    let pool = WorkPool::new(1, 1, Duration::from_secs(60), metrics.clone());
    Registry::new(
        cache_bytes,
        4,
        pool,
        metrics,
        GraphStore::memory(store.clone()),
    )
}

fn stored(store: &MemoryStore, graph_id: &str) -> Option<Arc<Game>> {
    store.get(&GraphId::parse(graph_id).expect("a content id"))
}

#[tokio::test]
async fn the_memory_store_shares_the_analysed_game_before_and_after_an_eviction() {
    let (a_id, a) = chain(3000);
    let (b_id, b) = chain(3001);
    let a_bytes = engine::analyse(a.clone(), &Limits::default())
        .unwrap()
        .heap_bytes();
    // Room in the cache for one of the two tables; in the store for both graphs.
    let store = MemoryStore::new(4 * a_bytes);
    let registry = registry(a_bytes * 3 / 2, &store);
    let limits = Limits::default();

    let (first, lookup) = registry
        .get_or_analyse(a_id.clone(), a, limits)
        .await
        .unwrap();
    assert_eq!(lookup, Lookup::Computed);
    registry.store(&a_id, &first).await.unwrap();
    let kept = stored(&store, &a_id).expect("stored");
    assert!(Arc::ptr_eq(&kept, first.shared_game()), "not a copy");
    assert_eq!(store.bytes(), kept.heap_bytes());

    let (second, _) = registry
        .get_or_analyse(b_id.clone(), b, limits)
        .await
        .unwrap();
    registry.store(&b_id, &second).await.unwrap();
    drop((first, second));
    assert_eq!(registry.len(), 1, "a's analysis was evicted");

    // By id, a is analysed again from the store's game: the same allocation, not decoded.
    let (again, lookup) = registry.get_or_load(&a_id, limits).await.unwrap();
    assert_eq!(lookup, Lookup::Computed);
    assert!(Arc::ptr_eq(&kept, again.shared_game()));
    assert_eq!(again.values()[0], 1, "a path of 3000 vertices: 0 is a win");
    assert!(store.bytes() <= 4 * a_bytes);
}

#[tokio::test]
async fn an_id_the_memory_store_dropped_is_unknown_once_evicted() {
    let (a_id, a) = chain(3000);
    let (b_id, b) = chain(3001);
    let game_bytes = a.heap_bytes();
    // The store keeps one of the two graphs, the cache one of the two tables.
    let store = MemoryStore::new(game_bytes * 3 / 2);
    let table_bytes = engine::analyse(a.clone(), &Limits::default())
        .unwrap()
        .heap_bytes();
    let registry = registry(table_bytes * 3 / 2, &store);
    let limits = Limits::default();
    for (id, game) in [(&a_id, a), (&b_id, b)] {
        let (analysis, _) = registry
            .get_or_analyse(id.clone(), game, limits)
            .await
            .unwrap();
        registry.store(id, &analysis).await.unwrap();
    }
    assert!(
        stored(&store, &a_id).is_none(),
        "dropped by the store's bound"
    );
    assert!(store.bytes() <= game_bytes * 3 / 2);
    let error = registry.get_or_load(&a_id, limits).await.unwrap_err();
    assert!(matches!(error, ServiceError::UnknownGraph(_)), "{error:?}");
    let (_, lookup) = registry.get_or_load(&b_id, limits).await.unwrap();
    assert_eq!(lookup, Lookup::Hit);
}
