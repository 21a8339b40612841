//! Engine benchmarks (criterion): each measured beside a memory-access floor on the same CSR
//! arrays, so the ratio says how far a pass is from the cost of merely reading the graph.
//!
//! `cargo bench --bench engine`; `GRUNDY_BENCH_SCALE=small` shrinks the graphs for a quick run.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use grundy::engine::{
    AnalysisOptions, Digraph, Game, Interrupt, Limits, PlayConvention, analyse, loopy, order,
    remoteness, sliding,
};
use grundy::generate::{Rng, Shape, graph};

mod common;

use common::interleaved_medians;

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

/// The number of Kahn rounds of an acyclic graph: the longest path, counted in vertices.
fn kahn_rounds(graph: &Digraph) -> u32 {
    let order = order::acyclic_order(graph).expect("an acyclic graph");
    let mut depth = vec![0u32; graph.vertex_count() as usize];
    for &v in &order {
        let below = graph.successors(v).iter().map(|&w| depth[w as usize]).max();
        depth[v as usize] = 1 + below.unwrap_or(0);
    }
    depth.into_iter().max().unwrap_or(0)
}

/// `graph` with its vertices renumbered in the order Kahn's algorithm places them, so that
/// every adjacency list the order and the values read lies where the one before ended, and the
/// in-degrees and values of a vertex's near successors lie near it: the same table's passes
/// with most cache misses of the graph's own layout taken away (the in-degree count and the
/// far successors still land at random).
fn renumbered_in_kahn_order(graph: &Digraph) -> Digraph {
    let order = order::acyclic_order(graph).expect("an acyclic graph");
    let n = order.len();
    // `order` puts successors first; Kahn's queue is that order reversed.
    let mut label = vec![0u32; n];
    for (position, &v) in order.iter().rev().enumerate() {
        label[v as usize] = position as u32;
    }
    let mut out_degrees = Vec::with_capacity(n);
    let mut targets = Vec::with_capacity(graph.edge_count() as usize);
    for &v in order.iter().rev() {
        let successors = graph.successors(v);
        out_degrees.push(successors.len() as u32);
        targets.extend(successors.iter().map(|&w| label[w as usize]));
    }
    Digraph::from_out_degrees(graph.vertex_count(), &out_degrees, targets)
        .expect("a renumbered valid graph is valid")
}

/// A random cyclic permutation of `0..n` (Sattolo's algorithm): following `next` from any
/// entry visits all `n` entries before returning, each step at a random address.
fn random_cycle(n: u32, seed: u64) -> Vec<u32> {
    let mut next: Vec<u32> = (0..n).collect();
    let mut rng = Rng::new(seed);
    for i in (1..n as usize).rev() {
        next.swap(i, rng.below(i as u64) as usize);
    }
    next
}

/// The critical-path floor: `steps` dependent reads, each address the value the previous read
/// returned. No pass that goes round by round can beat it: a round's vertices are known only
/// once the previous round's reads have returned.
fn floor_chain(next: &[u32], steps: u32) -> u32 {
    let mut at = 0u32;
    for _ in 0..steps {
        at = next[at as usize];
    }
    at
}

/// Whether the command line selects benchmarks of `group` (no filter, or a filter naming it):
/// the ratios printed after a group are measured only then.
fn selected(group: &str) -> bool {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    filters.is_empty() || filters.iter().any(|filter| filter.contains(group))
}

fn acyclic_table(c: &mut Criterion) {
    let vertices = 1_000_000 / scale();
    let edges = 10 * u64::from(vertices);
    let dag = graph(Shape::Dag, vertices, edges, 7);
    let values = vec![1u64; vertices as usize];
    // The critical path of the table: one chain of dependent reads per Kahn round, over a
    // permutation of as many `u32` entries as the table has cells (the packed value and
    // remoteness of every vertex), and again over as many as the CSR has targets.
    let rounds = kahn_rounds(&dag);
    let cells_cycle = random_cycle(vertices, 11);
    let targets_cycle = random_cycle(dag.edge_count() as u32, 13);
    let mut group = c.benchmark_group("acyclic_table");
    group.sample_size(10);
    group.throughput(Throughput::Elements(dag.edge_count()));
    group.bench_function(BenchmarkId::new("floor_read_targets", vertices), |b| {
        b.iter(|| floor_pass(black_box(&dag), black_box(&values)))
    });
    group.bench_function(
        BenchmarkId::new("floor_critical_path_cells", vertices),
        |b| b.iter(|| floor_chain(black_box(&cells_cycle), rounds)),
    );
    group.bench_function(
        BenchmarkId::new("floor_critical_path_targets", vertices),
        |b| b.iter(|| floor_chain(black_box(&targets_cycle), rounds)),
    );
    group.bench_function(BenchmarkId::new("plain_order_and_mex", vertices), |b| {
        b.iter(|| {
            let order = order::acyclic_order_plain(black_box(&dag)).unwrap();
            sliding::grundy_table(&dag, &order)
        })
    });
    group.bench_function(BenchmarkId::new("order_and_mex", vertices), |b| {
        b.iter(|| {
            let order = order::acyclic_order(black_box(&dag)).unwrap();
            sliding::grundy_table_interruptible(&dag, &order, &Interrupt::new()).unwrap()
        })
    });
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
        b.iter(|| sliding::grundy_table_interruptible(black_box(&dag), &order, &Interrupt::new()))
    });
    // The remoteness, computed on first need by a pass of its own after the values.
    group.bench_function(BenchmarkId::new("remoteness_only", vertices), |b| {
        b.iter(|| {
            remoteness::acyclic_remoteness_interruptible(black_box(&dag), &order, &Interrupt::new())
        })
    });
    if selected("acyclic_table") {
        report_against_floors(&dag, &values, rounds, &cells_cycle, &targets_cycle);
    }
    let chain = graph(Shape::Chain, vertices, 0, 1);
    group.throughput(Throughput::Elements(chain.edge_count()));
    group.bench_function(BenchmarkId::new("chain_order_and_mex", vertices), |b| {
        b.iter(|| {
            let order = order::acyclic_order(black_box(&chain)).unwrap();
            sliding::grundy_table_interruptible(&chain, &order, &Interrupt::new()).unwrap()
        })
    });
    group.finish();
}

/// Prints the acyclic table (the Kahn order and the values alone, what `analyse` computes;
/// and the values with the remoteness) against the larger of its floors, the gather floor and
/// the critical-path floor, each the median of 11 runs taken in turns.
fn report_against_floors(
    dag: &Digraph,
    values: &[u64],
    rounds: u32,
    cells_cycle: &[u32],
    targets_cycle: &[u32],
) {
    // The values, then the one-token remoteness as its first need computes it.
    let table = || {
        let order = order::acyclic_order(dag).unwrap();
        let interrupt = Interrupt::new();
        let values = sliding::grundy_table_interruptible(dag, &order, &interrupt).unwrap();
        let remoteness =
            remoteness::acyclic_remoteness_interruptible(dag, &order, &interrupt).unwrap();
        (values, remoteness)
    };
    let values_only = |dag: &Digraph| {
        let order = order::acyclic_order(dag).unwrap();
        sliding::grundy_table_interruptible(dag, &order, &Interrupt::new()).unwrap()
    };
    let renumbered = renumbered_in_kahn_order(dag);
    let [gather, cells, targets, table, values_only, ideal] = interleaved_medians(
        11,
        [
            &mut || {
                black_box(floor_pass(dag, values));
            },
            &mut || {
                black_box(floor_chain(cells_cycle, rounds));
            },
            &mut || {
                black_box(floor_chain(targets_cycle, rounds));
            },
            &mut || {
                black_box(table());
            },
            &mut || {
                black_box(values_only(dag));
            },
            &mut || {
                black_box(values_only(&renumbered));
            },
        ],
    );
    let floor = gather.max(cells);
    let ms = |seconds: f64| seconds * 1e3;
    eprintln!(
        "acyclic_table floors: {rounds} Kahn rounds; gather {:.2} ms, critical path over the \
         cells {:.2} ms ({:.0} ns a read), over the targets {:.2} ms ({:.0} ns a read)",
        ms(gather),
        ms(cells),
        cells * 1e9 / f64::from(rounds.max(1)),
        ms(targets),
        targets * 1e9 / f64::from(rounds.max(1)),
    );
    eprintln!(
        "acyclic_table vs max(gather, critical path over the cells) = {:.2} ms: \
         order, values and remoteness {:.2} ms ({:.2}x), order and values {:.2} ms ({:.2}x); \
         against the chain over the targets {:.2}x and {:.2}x",
        ms(floor),
        ms(table),
        table / floor,
        ms(values_only),
        values_only / floor,
        table / gather.max(targets),
        values_only / gather.max(targets),
    );
    eprintln!(
        "acyclic_table order and values on the DAG renumbered in Kahn's order (each list \
         where the one before ended): {:.2} ms ({:.2}x the floor, {:.2}x the graph's own)",
        ms(ideal),
        ideal / floor,
        ideal / values_only,
    );
}

/// The acyclic table on a wide DAG (Kahn rounds of `WIDE_LAYER` vertices): the values alone
/// (what `analyse` computes for token sliding), the order included.
fn wide_table(c: &mut Criterion) {
    let vertices = 1_000_000 / scale();
    let wide = graph(Shape::Wide, vertices, 10 * u64::from(vertices), 7);
    let mut group = c.benchmark_group("wide_table");
    group.sample_size(10);
    group.throughput(Throughput::Elements(wide.edge_count()));
    group.bench_function(BenchmarkId::new("values", vertices), |b| {
        b.iter(|| {
            let order = order::acyclic_order(black_box(&wide)).unwrap();
            sliding::grundy_table_interruptible(&wide, &order, &Interrupt::new()).unwrap()
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
    // The same positions in the packed form of a batch (what a stream of token queries
    // sends): one call for all of them, against the call per position above.
    let counts: Vec<u32> = positions.iter().map(|items| items.len() as u32).collect();
    let tokens: Vec<u32> = positions
        .iter()
        .flatten()
        .map(|&(vertex, _)| vertex)
        .collect();
    let mut nim_sums = Vec::with_capacity(positions.len());
    group.bench_function("acyclic_100k_queries_packed", |b| {
        b.iter(|| {
            nim_sums.clear();
            analysis
                .nim_sums_of_token_lists(black_box(&counts), black_box(&tokens), &mut nim_sums)
                .unwrap();
            nim_sums.iter().fold(0, |a, &x| a ^ x)
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

/// Misère play against normal play in the same run: the one-token table from scratch (Kahn's
/// order and the fold on a DAG, predecessor lists and the retrograde on a cyclic graph), then
/// the sum search of two and three tokens (throughput: the positions it indexed).
fn misere(c: &mut Criterion) {
    let conventions = [
        ("normal", PlayConvention::Normal),
        ("misere", PlayConvention::Misere),
    ];
    let vertices = 1_000_000 / scale();
    let dag = graph(Shape::Dag, vertices, 10 * u64::from(vertices), 7);
    let cyclic = graph(Shape::Cyclic, vertices / 10, u64::from(vertices), 3);
    let mut group = c.benchmark_group("misere_table");
    group.sample_size(10);
    for (shape, g) in [("dag", &dag), ("cyclic", &cyclic)] {
        group.throughput(Throughput::Elements(g.edge_count()));
        for (name, convention) in conventions {
            let id = BenchmarkId::new(format!("{shape}_{name}"), g.vertex_count());
            group.bench_function(id, |b| {
                b.iter(|| {
                    remoteness::one_token_table(black_box(g), convention, &Interrupt::new())
                        .unwrap()
                })
            });
        }
    }
    group.finish();

    let mut group = c.benchmark_group("misere_sum_search");
    group.sample_size(10);
    let small = analyse(
        Game::token_sliding(graph(Shape::Dag, 300, 900, 5)),
        &Limits::default(),
    )
    .unwrap();
    let options = AnalysisOptions::default();
    for tokens in [&[0u32, 1][..], &[0, 1, 2]] {
        for (name, convention) in conventions {
            let run = || match convention {
                PlayConvention::Normal => small.analyse_position(tokens, &options).unwrap(),
                PlayConvention::Misere => small.analyse_position_misere(tokens, &options).unwrap(),
            };
            let positions = run().positions_searched.max(1);
            group.throughput(Throughput::Elements(positions));
            let id = BenchmarkId::new(format!("{}_tokens_{name}", tokens.len()), positions);
            group.bench_function(id, |b| b.iter(|| black_box(run())));
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    acyclic_table,
    wide_table,
    cyclic_labelling,
    split_methods,
    position_evaluation,
    misere
);
criterion_main!(benches);
