//! Random games for the engine's property tests, and the proptest configuration they share:
//! a fixed seed, so a failure shows up on every run, and no regression files.

use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// Seed of the property tests unless `PROPTEST_RNG_SEED` is set.
const SEED: u64 = 0x6772_756e_6479;

/// A proptest configuration with `cases` cases (unless `PROPTEST_CASES` is set), the fixed
/// [`SEED`] (unless `PROPTEST_RNG_SEED` is set), and no regression files.
pub fn config(cases: u32) -> ProptestConfig {
    let base = ProptestConfig::default();
    ProptestConfig {
        cases: if std::env::var_os("PROPTEST_CASES").is_some() {
            base.cases
        } else {
            cases
        },
        rng_seed: match base.rng_seed {
            RngSeed::Random => RngSeed::Fixed(SEED),
            chosen => chosen,
        },
        failure_persistence: None,
        max_shrink_iters: 1024,
        ..base
    }
}

/// Edges of a random DAG on `vertex_count` vertices: the vertices are shuffled into a hidden
/// topological order and each gets up to `max_out_degree` edges to later vertices, repeats
/// allowed. The shuffle keeps vertex numbers from giving the order away.
pub fn dag_edges(
    vertex_count: u32,
    max_out_degree: usize,
) -> impl Strategy<Value = Vec<(u32, u32)>> {
    let order = Just((0..vertex_count).collect::<Vec<u32>>()).prop_shuffle();
    let choices = prop::collection::vec(
        prop::collection::vec(0..vertex_count, 0..=max_out_degree),
        vertex_count as usize,
    );
    (order, choices).prop_map(move |(order, choices)| {
        let mut edges = Vec::new();
        for (rank, picks) in choices.iter().enumerate() {
            let later = order.len() - rank - 1;
            if later == 0 {
                continue;
            }
            for &pick in picks {
                edges.push((order[rank], order[rank + 1 + pick as usize % later]));
            }
        }
        edges
    })
}

/// A random DAG with 1 to `max_vertices` vertices: `(vertex_count, edges)`.
pub fn dag(
    max_vertices: u32,
    max_out_degree: usize,
) -> impl Strategy<Value = (u32, Vec<(u32, u32)>)> {
    (1..=max_vertices).prop_flat_map(move |n| (Just(n), dag_edges(n, max_out_degree)))
}

/// A random digraph with 1 to `max_vertices` vertices and up to three edges per vertex on
/// average, anywhere: cycles, self-loops and repeated edges all occur.
pub fn digraph(max_vertices: u32) -> impl Strategy<Value = (u32, Vec<(u32, u32)>)> {
    (1..=max_vertices).prop_flat_map(|n| {
        let edge = (0..n, 0..n);
        (Just(n), prop::collection::vec(edge, 0..=3 * n as usize))
    })
}
