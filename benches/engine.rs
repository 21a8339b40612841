//! Engine benchmarks (criterion): each measured beside a memory-access floor on the same CSR
//! arrays, so the ratio says how far a pass is from the cost of merely reading the graph.
//!
//! `cargo bench --bench engine`; `GRUNDY_BENCH_SCALE=small` shrinks the graphs for a quick run.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use grundy::engine::{
    Digraph, Game, Interrupt, Limits, analyse, loopy, order, remoteness, sliding,
};
use grundy::generate::{Rng, Shape, graph};

fn scale() -> u32 {
    match std::env::var("GRUNDY_BENCH_SCALE").as_deref() {
        Ok("small") => 10,
        _ => 1,
    }
}

/// The floor: one linear pass over the CSR that reads each target's table entry.
fn floor_pass(graph: &Digraph, values: &[u64]) -> u64 {
    let offsets = graph.offsets();
    let targets = graph.targets();
    let mut acc = 0u64;
    for v in 0..graph.vertex_count() as usize {
        let mut local = 0u64;
        for &w in &targets[offsets[v] as usize..offsets[v + 1] as usize] {
            local ^= values[w as usize];
        }
        acc = acc.wrapping_add(local);
    }
    acc
}

fn acyclic_table(c: &mut Criterion) {
    let vertices = 1_000_000 / scale();
    let edges = 10 * u64::from(vertices);
    let dag = graph(Shape::Dag, vertices, edges, 7);
    let values = vec![1u64; vertices as usize];
    let mut group = c.benchmark_group("acyclic_table");
    group.sample_size(10);
    group.throughput(Throughput::Elements(dag.edge_count()));
    group.bench_function(BenchmarkId::new("floor_read_targets", vertices), |b| {
        b.iter(|| floor_pass(black_box(&dag), black_box(&values)))
    });
    group.bench_function(BenchmarkId::new("plain_order_and_mex", vertices), |b| {
        b.iter(|| {
            let order = order::acyclic_order_plain(black_box(&dag)).unwrap();
            sliding::grundy_table(&dag, &order)
        })
    });
    group.bench_function(BenchmarkId::new("order_and_mex", vertices), |b| {
        b.iter(|| {
            let order = order::acyclic_order(black_box(&dag)).unwrap();
            sliding::fast_grundy_table(&dag, &order)
        })
    });
    // What `analyse` does for token sliding: the table above with the one-token remoteness
    // in the same pass (the goal: at most 1.3 times `order_and_mex`).
    group.bench_function(
        BenchmarkId::new("order_mex_and_remoteness", vertices),
        |b| {
            b.iter(|| {
                let order = order::acyclic_order(black_box(&dag)).unwrap();
                sliding::grundy_and_remoteness_interruptible(&dag, &order, &Interrupt::new())
                    .unwrap()
            })
        },
    );
    group.bench_function(BenchmarkId::new("plain_order_only", vertices), |b| {
        b.iter(|| order::acyclic_order_plain(black_box(&dag)).unwrap())
    });
    group.bench_function(BenchmarkId::new("order_only", vertices), |b| {
        b.iter(|| order::acyclic_order(black_box(&dag)).unwrap())
    });
    let order = order::acyclic_order(&dag).unwrap();
    group.bench_function(BenchmarkId::new("plain_mex_only", vertices), |b| {
        b.iter(|| sliding::grundy_table(black_box(&dag), &order))
    });
    group.bench_function(BenchmarkId::new("mex_only", vertices), |b| {
        b.iter(|| sliding::fast_grundy_table(black_box(&dag), &order))
    });
    group.bench_function(BenchmarkId::new("mex_and_remoteness_only", vertices), |b| {
        b.iter(|| {
            sliding::grundy_and_remoteness_interruptible(black_box(&dag), &order, &Interrupt::new())
        })
    });
    // The remoteness as a second pass of its own, for comparison.
    group.bench_function(BenchmarkId::new("remoteness_only", vertices), |b| {
        b.iter(|| {
            remoteness::acyclic_remoteness_interruptible(black_box(&dag), &order, &Interrupt::new())
        })
    });
    let chain = graph(Shape::Chain, vertices, 0, 1);
    group.throughput(Throughput::Elements(chain.edge_count()));
    group.bench_function(BenchmarkId::new("chain_order_and_mex", vertices), |b| {
        b.iter(|| {
            let order = order::acyclic_order(black_box(&chain)).unwrap();
            sliding::fast_grundy_table(&chain, &order)
        })
    });
    group.finish();
}

fn cyclic_labelling(c: &mut Criterion) {
    let vertices = 100_000 / scale();
    let cyclic = graph(Shape::Cyclic, vertices, 10 * u64::from(vertices), 3);
    let values = vec![1u64; vertices as usize];
    let mut group = c.benchmark_group("cyclic_labelling");
    group.sample_size(10);
    group.throughput(Throughput::Elements(cyclic.edge_count()));
    group.bench_function(BenchmarkId::new("floor_read_targets", vertices), |b| {
        b.iter(|| floor_pass(black_box(&cyclic), black_box(&values)))
    });
    group.bench_function(BenchmarkId::new("generalized_grundy", vertices), |b| {
        b.iter(|| loopy::generalized_grundy(black_box(&cyclic)))
    });
    group.finish();
}

/// One vertex over `d` successors whose values are 0..d (a staircase below it), with `k`.
fn split_vertex(d: u32, k: u32) -> Game {
    let n = d + 1;
    let mut out_degrees = Vec::new();
    let mut targets = Vec::new();
    let mut split_counts = Vec::new();
    // Vertex i < d: successors 0..i with K = 1, so g(i) = i.
    for i in 0..d {
        out_degrees.push(i);
        targets.extend(0..i);
        split_counts.push(1);
    }
    out_degrees.push(d);
    targets.extend(0..d);
    split_counts.push(k);
    let digraph = Digraph::from_out_degrees(n, &out_degrees, targets).unwrap();
    Game::with_split_counts(digraph, split_counts).unwrap()
}

fn split_methods(c: &mut Criterion) {
    let mut group = c.benchmark_group("split_methods");
    group.sample_size(10);
    // (label, d, K): Span for K >= d - 1, Enumerate for small K, ParityDp for narrow values.
    for (label, d, k) in [
        ("span", 2000, 1999),
        ("enumerate", 60, 3),
        ("parity_dp", 200, 40),
    ] {
        let game = split_vertex(d, k);
        group.throughput(Throughput::Elements(game.graph().edge_count()));
        group.bench_function(BenchmarkId::new(label, format!("d{d}_k{k}")), |b| {
            b.iter(|| analyse(black_box(game.clone()), &Limits::default()).unwrap())
        });
    }
    group.finish();
}

fn position_evaluation(c: &mut Criterion) {
    let vertices = 1000;
    let game = Game::token_sliding(graph(Shape::Dag, vertices, 20_000, 5));
    let analysis = analyse(game, &Limits::default()).unwrap();
    let mut rng = Rng::new(9);
    let positions: Vec<Vec<(u32, u64)>> = (0..100_000)
        .map(|_| {
            (0..rng.between(1, 10))
                .map(|_| (rng.below(u64::from(vertices)) as u32, 1))
                .collect()
        })
        .collect();
    let mut group = c.benchmark_group("position_evaluation");
    group.throughput(Throughput::Elements(positions.len() as u64));
    group.bench_function("acyclic_100k_queries", |b| {
        b.iter(|| {
            positions
                .iter()
                .map(|items| analysis.evaluate(items).unwrap().nim_sum)
                .fold(0, |a, x| a ^ x)
        })
    });
    group.bench_function("acyclic_100k_queries_with_moves", |b| {
        b.iter(|| {
            positions
                .iter()
                .filter_map(|items| {
                    let evaluation = analysis.evaluate(items).unwrap();
                    analysis.best_move(items, &evaluation)
                })
                .count()
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    acyclic_table,
    cyclic_labelling,
    split_methods,
    position_evaluation
);
criterion_main!(benches);
