//! Engine tier at scale: deep and large graphs through the public API, checked by a linear
//! pass that re-derives the mex rule (no timing assertions: benchmarks measure speed).

use grundy::engine::{Analysis, Game, Limits, Outcome, VertexValue, analyse};
use grundy::generate::{Shape, graph};

/// Checks `g(v) = mex { g(w) }` at every vertex of an acyclic analysis.
fn assert_mex_rule(analysis: &Analysis) {
    let digraph = analysis.game().graph();
    let values = analysis.values();
    let mut successor_values = Vec::new();
    for v in 0..digraph.vertex_count() {
        successor_values.clear();
        successor_values.extend(digraph.successors(v).iter().map(|&w| values[w as usize]));
        successor_values.sort_unstable();
        successor_values.dedup();
        let mex = successor_values
            .iter()
            .enumerate()
            .find(|&(i, &value)| value != i as u64)
            .map_or(successor_values.len() as u64, |(i, _)| i as u64);
        assert_eq!(values[v as usize], mex, "vertex {v}");
    }
}

#[test]
fn million_vertex_chain_needs_no_recursion() {
    let n = 1_000_000;
    let analysis = analyse(
        Game::token_sliding(graph(Shape::Chain, n, 0, 1)),
        &Limits::default(),
    )
    .unwrap();
    // Vertex v is n - 1 - v moves from the end: odd distance wins.
    assert_eq!(analysis.values()[0], u64::from((n - 1) % 2));
    assert_eq!(
        analysis.evaluate(&[(0, 1), (1, 1)]).unwrap().outcome,
        Outcome::Win
    );
    assert_mex_rule(&analysis);
}

#[test]
fn million_vertex_ten_million_edge_dag() {
    let dag = graph(Shape::Dag, 1_000_000, 10_000_000, 11);
    // The generator drops the few edges drawn from the last vertex of its order.
    assert!(dag.edge_count() > 9_900_000);
    let analysis = analyse(Game::token_sliding(dag), &Limits::default()).unwrap();
    assert!(!analysis.is_cyclic());
    assert_mex_rule(&analysis);
    // Memory stays linear: the table is one u64 per vertex on top of the CSR arrays.
    let csr = analysis.game().graph().heap_bytes();
    assert!(analysis.heap_bytes() <= csr + 8 * 1_000_000 + 64);
}

#[test]
fn large_cyclic_graph_gets_finite_and_infinite_values() {
    let digraph = graph(Shape::Cyclic, 100_000, 1_000_000, 5);
    let analysis = analyse(Game::token_sliding(digraph), &Limits::default()).unwrap();
    assert!(analysis.is_cyclic());
    let (mut finite, mut infinite) = (0, 0);
    for v in 0..100_000 {
        match analysis.vertex_value(v).unwrap() {
            VertexValue::Finite(_) => finite += 1,
            VertexValue::Infinite { .. } => infinite += 1,
        }
    }
    assert!(
        finite > 0 && infinite > 0,
        "finite {finite}, infinite {infinite}"
    );
    for v in 0..100_000 {
        let outcome = analysis.evaluate(&[(v, 2)]).unwrap().outcome;
        match analysis.vertex_value(v).unwrap() {
            // Two tokens on one finite vertex cancel; on an infinite vertex they draw.
            VertexValue::Finite(_) => assert_eq!(outcome, Outcome::Lose, "vertex {v}"),
            VertexValue::Infinite { .. } => assert_eq!(outcome, Outcome::Draw, "vertex {v}"),
        }
    }
}
