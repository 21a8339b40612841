//! The content-addressed id of a graph (criterion), beside its floor measured in the same
//! run: SHA-256 of the id's canonical encoding, already laid out in memory. What the id costs
//! beyond that is the sorting of every out-neighbour list and the walk over the degrees.
//!
//! `cargo bench --bench graph_id`; `GRUNDY_BENCH_SCALE=small` shrinks the graphs.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use grundy::engine::{Digraph, Game};
use grundy::generate::{Shape, graph};
use grundy::service::graph_id_sync;
use sha2::{Digest, Sha256};

mod common;

use common::interleaved_medians;

fn scale() -> u32 {
    match std::env::var("GRUNDY_BENCH_SCALE").as_deref() {
        Ok("small") => 10,
        _ => 1,
    }
}

/// The bytes the id hashes (its documented encoding), for a token-sliding game.
fn encoding(graph: &Digraph) -> Vec<u8> {
    let mut bytes = b"grundy.v1.Graph/1\0".to_vec();
    bytes.extend(graph.vertex_count().to_le_bytes());
    for vertex in 0..graph.vertex_count() {
        bytes.extend(graph.out_degree(vertex).to_le_bytes());
    }
    for vertex in 0..graph.vertex_count() {
        let mut successors = graph.successors(vertex).to_vec();
        successors.sort_unstable();
        bytes.extend(successors.iter().flat_map(|target| target.to_le_bytes()));
    }
    bytes.push(0);
    bytes
}

/// `graph` with every out-neighbour list sorted, as many exporters write them.
fn with_sorted_lists(graph: &Digraph) -> Digraph {
    let degrees: Vec<u32> = (0..graph.vertex_count())
        .map(|vertex| graph.out_degree(vertex))
        .collect();
    let mut targets = graph.targets().to_vec();
    for window in graph.offsets().windows(2) {
        targets[window[0] as usize..window[1] as usize].sort_unstable();
    }
    Digraph::from_out_degrees(graph.vertex_count(), &degrees, targets).expect("the same graph")
}

fn graph_id(c: &mut Criterion) {
    let vertices = 1_000_000 / scale();
    let random = graph(Shape::Dag, vertices, 10 * u64::from(vertices), 7);
    let sorted = with_sorted_lists(&random);
    let mut group = c.benchmark_group("graph_id");
    group.sample_size(10);
    group.throughput(Throughput::Elements(random.edge_count()));
    let mut ratios = Vec::new();
    for (name, digraph) in [("random_lists", random), ("sorted_lists", sorted)] {
        let bytes = encoding(&digraph);
        let game = Game::token_sliding(digraph);
        group.bench_function(
            BenchmarkId::new("floor_sha256_of_the_encoding", name),
            |b| b.iter(|| Sha256::digest(black_box(&bytes))),
        );
        group.bench_function(BenchmarkId::new("id", name), |b| {
            b.iter(|| graph_id_sync(black_box(&game)))
        });
        let [floor, id] = interleaved_medians(
            11,
            [
                &mut || {
                    black_box(Sha256::digest(black_box(&bytes)));
                },
                &mut || {
                    black_box(graph_id_sync(black_box(&game)));
                },
            ],
        );
        ratios.push(format!(
            "{name}: the id {:.1} ms, SHA-256 of its encoding {:.1} ms: {:.2}x the floor",
            id * 1e3,
            floor * 1e3,
            id / floor
        ));
    }
    group.finish();
    for line in ratios {
        println!("{line}");
    }
}

criterion_group!(benches, graph_id);
criterion_main!(benches);
