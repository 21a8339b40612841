//! Read and write throughput of each graph store backend on one big graph, as
//! docs/deploying.md reports them.
//!
//! `scripts/with-redis.sh cargo run --release --example store_measure -- [VERTICES] [EDGES]`
//! (default 10^6 vertices, 10^7 edges, a random DAG): encodes the graph once whole (to time
//! the encoding alone), then for the memory, dir (a temporary directory) and, when
//! GRUNDY_TEST_REDIS_URL is set, Redis backends times a write (`put`: the graph encoded and
//! written a piece at a time), a read (`get`: a file is only opened there, the Redis chunks
//! are fetched) and the decoding of what was read (`decode_sync`: the rest of the reading,
//! the header and length checks, the graph's validation and its content id). The memory
//! backend keeps the game itself: nothing to encode or verify.

use std::sync::Arc;
use std::time::{Duration, Instant};

use grundy::engine::Game;
use grundy::generate::{Shape, graph};
use grundy::service::MemoryStore;
use grundy::service::graph_id_sync;
use grundy::service::{EncodedGraph, GraphId, GraphStore, StoreConfig, StoredGraph, decode_sync};

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let vertices: u32 = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("VERTICES"));
    let edges: u64 = args
        .next()
        .map_or(10_000_000, |a| a.parse().expect("EDGES"));
    let game = Arc::new(Game::token_sliding(graph(Shape::Dag, vertices, edges, 7)));
    let started = Instant::now();
    let id = GraphId::parse(&graph_id_sync(&game)).expect("a registry id");
    report("graph_id_sync", started.elapsed(), None);
    let started = Instant::now();
    let bytes = EncodedGraph::new(game.clone()).to_vec().len();
    report("encode (whole, in memory)", started.elapsed(), Some(bytes));
    println!("{vertices} vertices, {edges} edges: {bytes} encoded bytes\n");

    let dir = std::env::temp_dir().join(format!("grundy-store-measure-{}", std::process::id()));
    let mut stores = vec![
        GraphStore::memory(MemoryStore::new(2 * bytes)),
        GraphStore::open(&StoreConfig::Dir { path: dir.clone() }, usize::MAX)
            .expect("a temporary dir"),
    ];
    match std::env::var("GRUNDY_TEST_REDIS_URL") {
        Ok(url) => stores.push(
            GraphStore::open(
                &StoreConfig::Redis {
                    url,
                    ttl: Some(Duration::from_secs(600)),
                },
                usize::MAX,
            )
            .expect("a valid URL"),
        ),
        Err(_) => println!("(redis skipped: GRUNDY_TEST_REDIS_URL is unset)\n"),
    }
    for store in &stores {
        let kind = store.kind();
        let started = Instant::now();
        store.put(&id, &game).await.expect("written");
        report(&format!("{kind}: put"), started.elapsed(), Some(bytes));
        let started = Instant::now();
        let read = store.get(&id).await.expect("readable").expect("present");
        report(&format!("{kind}: get"), started.elapsed(), Some(bytes));
        match read {
            StoredGraph::Game(_) => println!("{kind}: the game itself, nothing to verify"),
            StoredGraph::Encoded(read) => {
                let started = Instant::now();
                decode_sync(&id, read).expect("verified");
                report(
                    &format!("{kind}: decode_sync (read, verify)"),
                    started.elapsed(),
                    Some(bytes),
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn report(what: &str, elapsed: Duration, bytes: Option<usize>) {
    let ms = elapsed.as_secs_f64() * 1e3;
    match bytes {
        Some(bytes) => println!(
            "{what:<32} {ms:>8.1} ms  {:>7.0} MB/s",
            bytes as f64 / 1e6 / elapsed.as_secs_f64()
        ),
        None => println!("{what:<32} {ms:>8.1} ms"),
    }
}
