//! The engine's fast paths against its plain ones and the brute-force oracle, and cooperative
//! cancellation (no timing assertions: benchmarks measure speed).
//!
//! The fast acyclic path narrows its arrays by the graph's degrees (`u8` in-degrees unless a
//! vertex has 256 predecessors; `u8`, `u16` or `u32` values by the largest out-degree; a
//! bit-mask mex below 64 successors), so the random graphs here are drawn on both sides of
//! each of those thresholds.

use std::sync::{Arc, Barrier};
use std::thread;

use crate::support::oracle::{SlidingOracle, Verdict};
use grundy::engine::loopy::INFINITE;
use grundy::engine::{
    AnalysisError, Cancelled, Digraph, Game, Interrupt, Limits, analyse, analyse_interruptible,
    order, remoteness, sliding,
};
use grundy::generate::{Shape, graph};
use proptest::prelude::*;

/// A random DAG: vertices shuffled into a hidden topological order, each with up to
/// `max_out_degree` edges to later vertices (repeats allowed), and `hubs` extra vertices at
/// the end of the order that every other vertex points to (in-degrees above 255).
fn dag(
    max_vertices: u32,
    max_out_degree: usize,
    hubs: u32,
) -> impl Strategy<Value = (u32, Vec<(u32, u32)>)> {
    (1..=max_vertices).prop_flat_map(move |n| {
        let order = Just((0..n).collect::<Vec<u32>>()).prop_shuffle();
        let choices = prop::collection::vec(
            prop::collection::vec(any::<u32>(), 0..=max_out_degree),
            n as usize,
        );
        (order, choices).prop_map(move |(order, choices)| {
            let total = n + hubs;
            let mut edges = Vec::new();
            for (rank, picks) in choices.iter().enumerate() {
                let later = order.len() - rank - 1;
                for &pick in picks.iter().filter(|_| later > 0) {
                    edges.push((order[rank], order[rank + 1 + pick as usize % later]));
                }
                edges.extend((n..total).map(|hub| (order[rank], hub)));
            }
            (total, edges)
        })
    })
}

fn digraph(vertex_count: u32, edges: &[(u32, u32)]) -> Digraph {
    Digraph::from_edges(vertex_count, edges).expect("generated edges are in range")
}

/// `order` lists every vertex once, each after all of its successors.
fn assert_successors_first(graph: &Digraph, order: &[u32]) {
    let n = graph.vertex_count() as usize;
    assert_eq!(order.len(), n);
    let mut position = vec![usize::MAX; n];
    for (index, &vertex) in order.iter().enumerate() {
        assert_eq!(position[vertex as usize], usize::MAX, "{vertex} twice");
        position[vertex as usize] = index;
    }
    for v in 0..graph.vertex_count() {
        for &w in graph.successors(v) {
            assert!(position[w as usize] < position[v as usize], "{v} -> {w}");
        }
    }
}

/// The fast order and table agree with the plain ones, and the table obeys the mex rule.
fn check_paths(graph: &Digraph) -> Vec<u64> {
    let fast_order = order::acyclic_order(graph).expect("acyclic");
    assert_successors_first(graph, &fast_order);
    let plain_order = order::acyclic_order_plain(graph).expect("acyclic");
    assert_successors_first(graph, &plain_order);
    let plain = sliding::grundy_table(graph, &plain_order);
    let fast = |order: &[u32]| {
        sliding::grundy_table_interruptible(graph, order, &grundy::engine::Interrupt::new())
            .unwrap()
    };
    assert_eq!(fast(&plain_order), plain);
    assert_eq!(fast(&fast_order), plain);
    let analysis = analyse(Game::token_sliding(graph.clone()), &Limits::default()).unwrap();
    assert_eq!(analysis.values(), &plain[..]);
    for v in 0..graph.vertex_count() {
        let mut seen: Vec<u64> = graph
            .successors(v)
            .iter()
            .map(|&w| plain[w as usize])
            .collect();
        seen.sort_unstable();
        seen.dedup();
        let mex = seen.iter().zip(0..).take_while(|&(&x, i)| x == i).count() as u64;
        assert_eq!(plain[v as usize], mex, "mex at {v}");
    }
    plain
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn small_dags_match_the_plain_path_and_the_oracle((n, edges) in dag(9, 4, 0)) {
        let graph = digraph(n, &edges);
        let values = check_paths(&graph);
        let mut adjacency = vec![Vec::new(); n as usize];
        for &(from, to) in &edges {
            adjacency[from as usize].push(to);
        }
        let oracle = SlidingOracle::solve(&adjacency, 1);
        for v in 0..n {
            let expected = if values[v as usize] == 0 { Verdict::Lose } else { Verdict::Win };
            prop_assert_eq!(oracle.verdict(&[v]), expected, "vertex {}", v);
        }
    }

    #[test]
    fn wide_dags_use_the_stamp_mex((n, edges) in dag(200, 90, 0)) {
        check_paths(&digraph(n, &edges));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20))]

    #[test]
    fn hubs_overflow_the_narrow_in_degrees((n, edges) in dag(400, 3, 2)) {
        // Every vertex points to both hubs: in-degrees reach n > 255 when n is large.
        check_paths(&digraph(n, &edges));
    }

    #[test]
    fn values_wider_than_a_byte((extra, seed) in (0u32..40, any::<u64>())) {
        // A staircase: vertex i points to every j < i, so g(i) = i, up to 299 (u16 cells).
        let k = 260 + extra;
        let mut edges: Vec<(u32, u32)> = (0..k).flat_map(|i| (0..i).map(move |j| (i, j))).collect();
        // Shuffle the edge list so the CSR keeps no helpful order.
        let mut rng = grundy::generate::Rng::new(seed);
        for i in (1..edges.len()).rev() {
            edges.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let values = check_paths(&digraph(k, &edges));
        prop_assert_eq!(values[k as usize - 1], u64::from(k - 1));
    }
}

#[test]
fn a_big_dag_matches_the_plain_path() {
    check_paths(&graph(Shape::Dag, 200_000, 2_000_000, 11));
}

#[test]
fn the_order_counts_in_u32_when_an_in_degree_wraps_a_byte_to_zero() {
    // Hub 0 has 512 predecessors and hub 1 has 256: counted in bytes, both read zero.
    let n = 2000u32;
    let mut edges: Vec<(u32, u32)> = (2..n - 1).map(|v| (v, v + 1)).collect();
    edges.extend((2..514).map(|v| (v, 0)));
    edges.extend((2..258).map(|v| (v, 1)));
    check_paths(&digraph(n, &edges));
}

#[test]
fn an_acyclic_remoteness_table_waits_for_its_first_need_and_is_computed_once() {
    let g = graph(Shape::Wide, 100_000, 1_000_000, 5);
    let order = order::acyclic_order(&g).expect("an acyclic graph");
    let expected =
        remoteness::acyclic_remoteness_interruptible(&g, &order, &Interrupt::new()).unwrap();
    let analysis = analyse(Game::token_sliding(g), &Limits::default()).unwrap();
    assert!(!analysis.remoteness_ready(), "values only at first");
    let bytes = analysis.heap_bytes();
    let raised = Interrupt::new();
    raised.interrupt();
    assert_eq!(analysis.prepare_remoteness(&raised), Err(Cancelled));
    assert!(
        !analysis.remoteness_ready(),
        "a cancelled computation leaves nothing"
    );
    thread::scope(|scope| {
        let preparing: Vec<_> = (0..3)
            .map(|_| scope.spawn(|| analysis.prepare_remoteness(&Interrupt::new())))
            .collect();
        for prepared in preparing {
            assert_eq!(prepared.join().expect("no panic"), Ok(()));
        }
    });
    assert!(analysis.remoteness_ready());
    assert_eq!(analysis.remoteness_table(), Some(&expected[..]));
    assert_eq!(
        analysis.heap_bytes(),
        bytes,
        "the table was counted before it was made"
    );
}

#[test]
fn a_remoteness_table_is_ready_with_the_values_on_a_cyclic_graph_and_absent_with_split_counts() {
    let cyclic = analyse(
        Game::token_sliding(graph(Shape::Cyclic, 1000, 5000, 4)),
        &Limits::default(),
    )
    .unwrap();
    assert!(cyclic.remoteness_ready());
    let split = Game::with_split_counts(graph(Shape::Dag, 100, 300, 4), vec![1; 100]).unwrap();
    let split = analyse(split, &Limits::default()).unwrap();
    assert!(split.remoteness_ready());
    assert_eq!(split.prepare_remoteness(&Interrupt::new()), Ok(()));
    assert_eq!(split.remoteness_table(), None);
}

/// `positions` (token lists) in the packed form of a batch: their lengths, their tokens.
fn packed(positions: &[Vec<u32>]) -> (Vec<u32>, Vec<u32>) {
    let counts = positions.iter().map(|tokens| tokens.len() as u32).collect();
    (counts, positions.concat())
}

/// The batch's nim-sums, each as `evaluate_tokens` gives it, or `None` where the batch path
/// refuses; checks that a refusal leaves the output as it was.
fn batch_nim_sums(analysis: &grundy::engine::Analysis, positions: &[Vec<u32>]) -> Option<Vec<u64>> {
    let (counts, vertices) = packed(positions);
    let mut nim_sums = vec![u64::MAX];
    let answered = analysis.nim_sums_of_token_lists(&counts, &vertices, &mut nim_sums);
    assert_eq!(nim_sums[0], u64::MAX, "what was there before is kept");
    match answered {
        Some(()) => Some(nim_sums.split_off(1)),
        None => {
            assert_eq!(nim_sums, [u64::MAX], "a refused batch appends nothing");
            None
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn a_batch_of_positions_has_each_positions_nim_sum(
        (n, edges) in dag(300, 6, 0),
        lengths in prop::collection::vec(0usize..12, 0..700),
        seed in any::<u64>(),
    ) {
        // Positions of every length, empty ones included, over several of the batch path's
        // chunks of tokens (up to 700 positions of up to 11 tokens).
        let game = Game::token_sliding(digraph(n, &edges));
        let analysis = analyse(game, &Limits::default()).unwrap();
        let mut generator = grundy::generate::Rng::new(seed);
        let mut vertex = || (generator.next_u64() % u64::from(n)) as u32;
        let positions: Vec<Vec<u32>> = lengths
            .iter()
            .map(|&length| (0..length).map(|_| vertex()).collect())
            .collect();
        let expected: Vec<u64> = positions
            .iter()
            .map(|tokens| analysis.evaluate_tokens(tokens).unwrap().nim_sum)
            .collect();
        prop_assert_eq!(batch_nim_sums(&analysis, &positions), Some(expected));
        // One vertex out of range anywhere: the batch is refused, to be answered one by one.
        if let Some(index) = positions.iter().position(|tokens| !tokens.is_empty()) {
            let mut bad = positions.clone();
            bad[index][0] = n;
            prop_assert_eq!(batch_nim_sums(&analysis, &bad), None);
        }
    }
}

#[test]
fn a_batch_is_refused_on_a_cyclic_graph_or_when_its_lengths_do_not_add_up() {
    let cyclic = analyse(
        Game::token_sliding(graph(Shape::Cyclic, 1000, 5000, 4)),
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(batch_nim_sums(&cyclic, &[vec![0]]), None);
    let dag = analyse(
        Game::token_sliding(graph(Shape::Dag, 100, 300, 4)),
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(batch_nim_sums(&dag, &[]), Some(vec![]));
    assert_eq!(batch_nim_sums(&dag, &[vec![], vec![]]), Some(vec![0, 0]));
    let mut nim_sums = Vec::new();
    assert_eq!(
        dag.nim_sums_of_token_lists(&[2, 1], &[1, 2], &mut nim_sums),
        None
    );
    assert_eq!(
        dag.nim_sums_of_token_lists(&[1], &[1, 2], &mut nim_sums),
        None
    );
    assert!(nim_sums.is_empty());
    // The Addition-Subtraction game's values answer a batch too.
    let split = Game::with_split_counts(graph(Shape::Dag, 100, 300, 4), vec![1; 100]).unwrap();
    let split = analyse(split, &Limits::default()).unwrap();
    let positions = vec![vec![3, 5, 99], vec![0]];
    let expected: Vec<u64> = positions
        .iter()
        .map(|tokens| split.evaluate_tokens(tokens).unwrap().nim_sum)
        .collect();
    assert_eq!(batch_nim_sums(&split, &positions), Some(expected));
}

#[test]
fn a_cyclic_graph_is_not_ordered() {
    let g = graph(Shape::Cyclic, 1000, 5000, 4);
    assert_eq!(order::acyclic_order(&g), None);
    assert_eq!(order::acyclic_order_plain(&g), None);
}

// ---------------------------------------------------------------------------------------------
// Cancellation
// ---------------------------------------------------------------------------------------------

/// Vertex `i < k` moves to every `j < i`, the top vertex also to itself: a cubic labelling
/// (about `k^3 / 2` edge visits), seconds of work for `k` in the thousands.
fn tournament_with_a_loop(k: u32) -> Game {
    let mut edges: Vec<(u32, u32)> = (0..k).flat_map(|i| (0..i).map(move |j| (i, j))).collect();
    edges.push((k - 1, k - 1));
    Game::token_sliding(digraph(k, &edges))
}

/// A split-count game whose vertices all use the enumeration: a staircase with `K = 3`.
fn split_staircase(d: u32) -> Game {
    let edges: Vec<(u32, u32)> = (0..d).flat_map(|i| (0..i).map(move |j| (i, j))).collect();
    let split_counts = (0..d).map(|i| if i < 8 { 1 } else { 3 }).collect();
    Game::with_split_counts(digraph(d, &edges), split_counts).unwrap()
}

fn unlimited() -> Limits {
    Limits {
        cyclic_work_budget: u64::MAX,
        ..Limits::default()
    }
}

fn assert_cancelled(result: Result<grundy::engine::Analysis, AnalysisError>) {
    match result {
        Err(AnalysisError::Cancelled(_)) => {}
        Err(other) => panic!("expected Cancelled, got {other}"),
        Ok(_) => panic!("expected Cancelled, got a table"),
    }
}

#[test]
fn a_raised_flag_stops_every_kind_of_analysis_before_it_starts() {
    let interrupt = Interrupt::new();
    interrupt.interrupt();
    let games = [
        tournament_with_a_loop(2000),
        Game::token_sliding(graph(Shape::Dag, 100_000, 1_000_000, 3)),
        Game::token_sliding(graph(Shape::Cyclic, 100_000, 1_000_000, 3)),
        split_staircase(300),
    ];
    for game in games {
        assert_cancelled(analyse_interruptible(game, &unlimited(), &interrupt));
    }
}

/// Starts `game` on another thread and raises the flag once the thread is about to analyse:
/// the analyses here need seconds, so the flag goes up while they run.
fn cancel_while_running(game: Game) -> Result<grundy::engine::Analysis, AnalysisError> {
    let interrupt = Interrupt::new();
    let started = Arc::new(Barrier::new(2));
    let worker = {
        let (interrupt, started) = (interrupt.clone(), Arc::clone(&started));
        thread::spawn(move || {
            started.wait();
            analyse_interruptible(game, &unlimited(), &interrupt)
        })
    };
    started.wait();
    interrupt.interrupt();
    worker.join().expect("the analysis does not panic")
}

#[test]
fn a_flag_raised_during_a_cubic_labelling_stops_it() {
    // k = 3000: about 1.3 * 10^10 edge visits, many seconds if it were not stopped.
    assert_cancelled(cancel_while_running(tournament_with_a_loop(3000)));
}

#[test]
fn a_flag_raised_during_a_big_acyclic_table_stops_it() {
    // The benchmark DAG, 10^6 vertices and 10^7 edges: hundreds of milliseconds of work,
    // against microseconds between the barrier and the flag.
    let game = Game::token_sliding(graph(Shape::Dag, 1_000_000, 10_000_000, 5));
    assert_cancelled(cancel_while_running(game));
}

#[test]
fn a_fresh_interrupt_changes_nothing() {
    let game = Game::token_sliding(graph(Shape::Cyclic, 2000, 8000, 9));
    let plain = analyse(game.clone(), &Limits::default()).unwrap();
    let interruptible = analyse_interruptible(game, &Limits::default(), &Interrupt::new()).unwrap();
    assert_eq!(plain.values(), interruptible.values());
    assert!(plain.values().contains(&INFINITE));
}
