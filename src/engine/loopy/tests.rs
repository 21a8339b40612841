use super::super::order::successors_first_order;
use super::super::sliding::grundy_table;
use super::*;
use crate::engine::outcome::Outcome;
use proptest::prelude::*;
use std::collections::{HashMap, VecDeque};

fn graph(n: u32, edges: &[(u32, u32)]) -> Digraph {
    Digraph::from_edges(n, edges).unwrap()
}

/// The outcome and nim-sum of a sum given as `(vertex, count)` items, by the summary the
/// engine's evaluation path uses.
fn evaluate_sum(table: &LoopyTable, items: &[(u32, u64)]) -> (Outcome, u64) {
    let summary = SumSummary::of(table, items);
    (summary.outcome(table), summary.nim_sum)
}

/// Every position of `tokens` tokens (sorted vertex lists) with its outcome, by retrograde
/// analysis of the product game: nothing here knows about `γ`.
struct ProductGame {
    positions: Vec<Vec<u32>>,
    index: HashMap<Vec<u32>, usize>,
    /// Distinct positions reachable in one move.
    moves: Vec<Vec<usize>>,
    outcomes: Vec<Outcome>,
}

impl ProductGame {
    fn solve(graph: &Digraph, tokens: usize) -> Self {
        let n = graph.vertex_count();
        let mut positions = vec![Vec::new()];
        for _ in 0..tokens {
            positions = positions
                .into_iter()
                .flat_map(|position: Vec<u32>| {
                    let lowest = position.last().copied().unwrap_or(0);
                    (lowest..n).map(move |v| {
                        let mut longer = position.clone();
                        longer.push(v);
                        longer
                    })
                })
                .collect();
        }
        let index: HashMap<Vec<u32>, usize> = positions
            .iter()
            .enumerate()
            .map(|(i, position)| (position.clone(), i))
            .collect();
        let moves: Vec<Vec<usize>> = positions
            .iter()
            .map(|position| {
                let mut next = Vec::new();
                for (i, &from) in position.iter().enumerate() {
                    for &to in graph.successors(from) {
                        let mut moved = position.clone();
                        moved[i] = to;
                        moved.sort_unstable();
                        next.push(index[&moved]);
                    }
                }
                next.sort_unstable();
                next.dedup();
                next
            })
            .collect();
        let outcomes = retrograde(&moves);
        Self {
            positions,
            index,
            moves,
            outcomes,
        }
    }
}

/// WIN / LOSE / DRAW of every state of a game given by its move lists: no moves is LOSE, a
/// move to LOSE is WIN, all moves to WIN is LOSE, whatever stays undecided is DRAW.
fn retrograde(moves: &[Vec<usize>]) -> Vec<Outcome> {
    let mut predecessors = vec![Vec::new(); moves.len()];
    for (state, next) in moves.iter().enumerate() {
        for &target in next {
            predecessors[target].push(state);
        }
    }
    let mut outcomes: Vec<Option<Outcome>> = vec![None; moves.len()];
    let mut undecided_moves: Vec<usize> = moves.iter().map(Vec::len).collect();
    let mut queue = VecDeque::new();
    for (state, next) in moves.iter().enumerate() {
        if next.is_empty() {
            outcomes[state] = Some(Outcome::Lose);
            queue.push_back(state);
        }
    }
    while let Some(target) = queue.pop_front() {
        let target_loses = outcomes[target] == Some(Outcome::Lose);
        for &state in &predecessors[target] {
            if outcomes[state].is_some() {
                continue;
            }
            if target_loses {
                outcomes[state] = Some(Outcome::Win);
                queue.push_back(state);
            } else {
                undecided_moves[state] -= 1;
                if undecided_moves[state] == 0 {
                    outcomes[state] = Some(Outcome::Lose);
                    queue.push_back(state);
                }
            }
        }
    }
    outcomes
        .into_iter()
        .map(|outcome| outcome.unwrap_or(Outcome::Draw))
        .collect()
}

/// A sorted position as `(vertex, count)` items, one per distinct vertex.
fn grouped(position: &[u32]) -> Vec<(u32, u64)> {
    let mut items: Vec<(u32, u64)> = Vec::new();
    for &v in position {
        match items.last_mut() {
            Some((last, count)) if *last == v => *count += 1,
            _ => items.push((v, 1)),
        }
    }
    items
}

/// Plays a move on `items`, checking it is legal; returns the sorted resulting position.
fn play(
    graph: &Digraph,
    items: &[(u32, u64)],
    (item_index, from, to): (usize, u32, u32),
) -> Vec<u32> {
    let (vertex, count) = items[item_index];
    assert_eq!(vertex, from, "the move starts on its item's vertex");
    assert!(count > 0, "the move takes a token that exists");
    assert!(
        graph.successors(from).contains(&to),
        "{from} -> {to} is an edge"
    );
    let mut position: Vec<u32> = Vec::new();
    for (i, &(v, count)) in items.iter().enumerate() {
        let count = if i == item_index { count - 1 } else { count };
        position.extend(std::iter::repeat_n(v, count as usize));
    }
    position.push(to);
    position.sort_unstable();
    position
}

/// Checks properties A, B, C, the `K` sets and the counters (see the module docs).
fn check_gamma_properties(graph: &Digraph, table: &LoopyTable) {
    let n = graph.vertex_count();
    assert_eq!(table.values().len(), n as usize);
    for u in 0..n {
        let followers = graph.successors(u);
        let mut finite: Vec<u64> = followers.iter().filter_map(|&w| table.value(w)).collect();
        finite.sort_unstable();
        finite.dedup();
        let mex = finite.iter().zip(0..).take_while(|&(&v, i)| v == i).count() as u64;
        match table.value(u) {
            Some(a) => {
                assert_eq!(mex, a, "A: γ({u}) is the mex of its finite followers");
                assert!(table.counter(u) < u64::from(n));
                assert!(table.infinite_followers(u).is_empty());
                for &v in followers {
                    if table.value(v).is_some_and(|b| b < a) {
                        continue;
                    }
                    assert!(
                        graph.successors(v).iter().any(|&w| {
                            table.value(w) == Some(a) && table.counter(w) < table.counter(u)
                        }),
                        "B: {u} -> {v} is reversible to value {a} with a smaller counter"
                    );
                }
            }
            None => {
                assert_eq!(table.counter(u), INFINITE);
                assert_eq!(table.infinite_followers(u), finite, "K of {u}");
                assert!(
                    followers.iter().any(|&v| {
                        table.value(v).is_none() && !table.has_follower_value(v, mex)
                    }),
                    "C: {u} has an irreversible infinite follower for value {mex}"
                );
            }
        }
    }
    let mut finite_by_counter: Vec<u32> = (0..n).filter(|&v| table.value(v).is_some()).collect();
    finite_by_counter.sort_unstable_by_key(|&v| table.counter(v));
    for pair in finite_by_counter.windows(2) {
        assert!(
            table.counter(pair[0]) < table.counter(pair[1]),
            "counters are distinct"
        );
        assert!(
            table.value(pair[0]) <= table.value(pair[1]),
            "counters follow values"
        );
    }
}

/// Compares evaluations and moves with the retrograde analysis of all positions of 1, 2
/// and 3 tokens, and checks that the winning strategy ends every play.
fn check_against_retrograde(graph: &Digraph) {
    let table = generalized_grundy(graph);
    check_gamma_properties(graph, &table);
    for tokens in 1..=3 {
        let game = ProductGame::solve(graph, tokens);
        let mut strategy = vec![None; game.positions.len()];
        for (state, position) in game.positions.iter().enumerate() {
            let expected = game.outcomes[state];
            let nim_sum = position
                .iter()
                .filter_map(|&v| table.value(v))
                .fold(0, |x, value| x ^ value);
            let items = grouped(position);
            assert_eq!(
                evaluate_sum(&table, &items),
                (expected, nim_sum),
                "{position:?}"
            );
            // The same position as single tokens in another order, and an empty item.
            let singles: Vec<(u32, u64)> = std::iter::once((position[0], 0))
                .chain(position.iter().rev().map(|&v| (v, 1)))
                .collect();
            assert_eq!(evaluate_sum(&table, &singles), (expected, nim_sum));
            for items in [&items, &singles] {
                let chosen = loopy_move(graph, &table, items);
                let Some(chosen) = chosen else {
                    assert_eq!(expected, Outcome::Lose, "{position:?} has a move");
                    continue;
                };
                let next = game.index[&play(graph, items, chosen)];
                let wanted = match expected {
                    Outcome::Win => Outcome::Lose,
                    Outcome::Draw => Outcome::Draw,
                    Outcome::Lose => panic!("{position:?} is lost but got {chosen:?}"),
                };
                assert_eq!(game.outcomes[next], wanted, "{position:?} -> {chosen:?}");
                if expected == Outcome::Win && items == &grouped(position) {
                    strategy[state] = Some(next);
                }
            }
        }
        assert_strategy_terminates(&game, &strategy);
    }
}

/// The winner plays `strategy[s]` from every WIN state `s`, the loser any move. Every play
/// ends iff the graph "WIN state -> state after the winner's move and any reply" has no
/// cycle: Kahn's algorithm must remove every WIN state.
fn assert_strategy_terminates(game: &ProductGame, strategy: &[Option<usize>]) {
    let replies =
        |state: usize| -> &[usize] { strategy[state].map_or(&[], |next| &game.moves[next]) };
    let wins: Vec<usize> = (0..strategy.len())
        .filter(|&s| strategy[s].is_some())
        .collect();
    let mut indegree = vec![0usize; strategy.len()];
    for &state in &wins {
        for &reply in replies(state) {
            assert!(
                strategy[reply].is_some(),
                "every reply to a winning move is WIN again"
            );
            indegree[reply] += 1;
        }
    }
    let mut free: Vec<usize> = wins.iter().copied().filter(|&s| indegree[s] == 0).collect();
    let mut removed = 0;
    while let Some(state) = free.pop() {
        removed += 1;
        for &reply in replies(state) {
            indegree[reply] -= 1;
            if indegree[reply] == 0 {
                free.push(reply);
            }
        }
    }
    assert_eq!(
        removed,
        wins.len(),
        "the winning strategy can be made to cycle"
    );
}

fn small_graph() -> impl Strategy<Value = Digraph> {
    (1u32..=8)
        .prop_flat_map(|n| {
            (
                Just(n),
                prop::collection::vec((0..n, 0..n), 0..=3 * n as usize),
            )
        })
        .prop_map(|(n, edges)| graph(n, &edges))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn agrees_with_retrograde_analysis(g in small_graph()) {
        check_against_retrograde(&g);
    }

    #[test]
    fn acyclic_graphs_match_the_grundy_table(
        n in 1u32..=40,
        raw in prop::collection::vec((any::<u32>(), any::<u32>()), 0..160),
    ) {
        // Edges from larger to smaller indices: acyclic, with multi-edges.
        let edges: Vec<(u32, u32)> = raw
            .iter()
            .map(|&(a, b)| (a % n, b % n))
            .filter(|&(a, b)| a != b)
            .map(|(a, b)| (a.max(b), a.min(b)))
            .collect();
        let g = graph(n, &edges);
        let table = generalized_grundy(&g);
        let expected = grundy_table(&g, &successors_first_order(&g).unwrap());
        prop_assert_eq!(table.values(), &expected[..]);
        check_gamma_properties(&g, &table);
    }
}

#[test]
fn two_cycle_draws() {
    let g = graph(2, &[(0, 1), (1, 0)]);
    let table = generalized_grundy(&g);
    assert_eq!(table.values(), &[INFINITE, INFINITE]);
    assert_eq!(table.infinite_followers(0), &[] as &[u64]);
    assert_eq!(evaluate_sum(&table, &[(0, 1)]), (Outcome::Draw, 0));
    assert_eq!(loopy_move(&g, &table, &[(0, 1)]), Some((0, 0, 1)));
    check_against_retrograde(&g);
}

#[test]
fn lone_self_loop_draws() {
    let g = graph(1, &[(0, 0)]);
    let table = generalized_grundy(&g);
    assert_eq!(table.value(0), None);
    assert_eq!(table.counter(0), INFINITE);
    assert_eq!(loopy_move(&g, &table, &[(0, 1)]), Some((0, 0, 0)));
    check_against_retrograde(&g);
}

#[test]
fn self_loop_with_an_exit_is_infinite_not_one() {
    // 0 -> {0, 1}: one token wins by moving to 1, but γ(0) cannot be 1: two tokens on 0
    // would then cancel, while in fact neither player wants to leave the loop first.
    let g = graph(2, &[(0, 0), (0, 1)]);
    let table = generalized_grundy(&g);
    assert_eq!(table.values(), &[INFINITE, 0]);
    assert_eq!(table.infinite_followers(0), &[0]);
    assert_eq!(evaluate_sum(&table, &[(0, 1)]), (Outcome::Win, 0));
    assert_eq!(loopy_move(&g, &table, &[(0, 1)]), Some((0, 0, 1)));
    assert_eq!(evaluate_sum(&table, &[(0, 2)]).0, Outcome::Draw);
    assert_eq!(loopy_move(&g, &table, &[(0, 2)]), Some((0, 0, 0)));
    assert_eq!(evaluate_sum(&table, &[(1, 1), (0, 1)]).0, Outcome::Win);
    assert_eq!(loopy_move(&g, &table, &[(1, 1), (0, 1)]), Some((1, 0, 1)));
    check_against_retrograde(&g);
}

#[test]
fn reversible_cycle_is_finite_and_the_counter_picks_the_exit() {
    // 0 <-> 1 -> 2: γ = [0, 1, 0] despite the cycle; labelled 2, then 0, then 1.
    let g = graph(3, &[(0, 1), (1, 0), (1, 2)]);
    let table = generalized_grundy(&g);
    assert_eq!(table.values(), &[0, 1, 0]);
    assert_eq!([0, 1, 2].map(|v| table.counter(v)), [1, 2, 0]);
    // Tokens on 0 and 1: moving 1 -> 0 would also leave nim-sum 0, but lets the opponent
    // raise 0 -> 1 forever; 1 -> 2 has the smaller counter and makes progress.
    assert_eq!(evaluate_sum(&table, &[(0, 1), (1, 1)]), (Outcome::Win, 1));
    assert_eq!(loopy_move(&g, &table, &[(0, 1), (1, 1)]), Some((1, 1, 2)));
    check_against_retrograde(&g);
}

#[test]
fn counts_are_token_multiplicities() {
    let g = graph(4, &[(0, 0), (0, 1), (2, 1), (3, 3)]);
    let table = generalized_grundy(&g);
    assert_eq!(table.values(), &[INFINITE, 0, 1, INFINITE]);
    // Empty items are ignored, even counts of a finite vertex cancel.
    assert_eq!(evaluate_sum(&table, &[(3, 0), (2, 4)]), (Outcome::Lose, 0));
    assert_eq!(loopy_move(&g, &table, &[(3, 0), (2, 4)]), None);
    assert_eq!(evaluate_sum(&table, &[(2, u64::MAX)]), (Outcome::Win, 1));
    // One infinite token: WIN iff the others' nim-sum is in K = {0}.
    assert_eq!(evaluate_sum(&table, &[(0, 1), (2, 2)]).0, Outcome::Win);
    assert_eq!(evaluate_sum(&table, &[(0, 1), (2, 1)]).0, Outcome::Draw);
    // Many tokens on an infinite vertex are many infinite tokens, never cancelling.
    assert_eq!(evaluate_sum(&table, &[(0, u64::MAX)]).0, Outcome::Draw);
    assert_eq!(evaluate_sum(&table, &[(3, 2)]).0, Outcome::Draw);
    // From a draw with two infinite tokens, leaving the loop would hand over a win.
    assert_eq!(loopy_move(&g, &table, &[(0, 2)]), Some((0, 0, 0)));
}

fn random_graph(n: u32, edge_count: usize, seed: u64) -> Digraph {
    let mut rng = crate::generate::Rng::new(seed);
    let mut vertex = || rng.below(u64::from(n)) as u32;
    let edges: Vec<(u32, u32)> = (0..edge_count).map(|_| (vertex(), vertex())).collect();
    graph(n, &edges)
}

#[test]
fn large_random_cyclic_graph() {
    let (n, edge_count) = (100_000, 1_000_000);
    let g = random_graph(n, edge_count, 0x9E37_79B9_7F4A_7C15);
    let table = generalized_grundy(&g);
    check_gamma_properties(&g, &table);
    // values, counters, K offsets, and K sets no larger than the edge count.
    assert!(table.heap_bytes() <= 16 * (n as usize + 1) + 8 * edge_count);
}

#[test]
fn large_sparse_graph_mixes_finite_and_infinite_values() {
    // Three edges per vertex: cycles everywhere, yet many finite values over several stages.
    let g = random_graph(100_000, 300_000, 0x2545_F491_4F6C_DD1D);
    let table = generalized_grundy(&g);
    check_gamma_properties(&g, &table);
    assert!(table.values().contains(&INFINITE));
    assert!(table.values().iter().any(|&v| (2..INFINITE).contains(&v)));
}

/// Vertex `i < k` moves to every `j < i`, and the top vertex also to itself: the values
/// are `0..k-1` one stage each, and every stage revisits the remaining out-edges, so the
/// labelling costs about `k^3 / 2` edge visits (out-edges of the unlabelled vertices,
/// in-edges of the answered ones) for `k^2 / 2` edges.
fn tournament_with_a_loop(k: u32) -> Digraph {
    let mut edges: Vec<(u32, u32)> = (0..k).flat_map(|i| (0..i).map(move |j| (i, j))).collect();
    edges.push((k - 1, k - 1));
    graph(k, &edges)
}

#[test]
fn work_budget_stops_a_cubic_labelling() {
    let k = 300;
    let g = tournament_with_a_loop(k);
    let table = generalized_grundy(&g);
    check_gamma_properties(&g, &table);
    assert_eq!(table.value(k - 2), Some(u64::from(k - 2)));
    let budget = 1_000_000;
    let error = generalized_grundy_within(&g, budget).unwrap_err();
    assert_eq!((error.budget, error.vertex_count), (budget, k));
    // Stopped part-way, at most one stage (3E edge visits) past the budget.
    assert!(error.work > budget);
    assert!(error.work <= budget + 3 * g.edge_count(), "{error:?}");
    assert!((1..u64::from(k) - 1).contains(&error.stage), "{error:?}");
    assert_eq!(
        u64::from(error.labelled),
        error.stage,
        "one vertex per stage"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "the cyclic labelling stopped in stage {0}, giving the value {0} ({0} of {k} \
             vertices valued by then), after {1} edge visits, over the budget of {budget}",
            error.stage, error.work
        )
    );
    // k^3 / 2 = 13.5 million: 20 million is enough, and gives the same table.
    assert_eq!(generalized_grundy_within(&g, 20_000_000), Ok(table));
}

#[test]
fn long_cycle_does_not_recurse() {
    let n = 1_000_000u32;
    let edges: Vec<(u32, u32)> = (0..n).map(|v| (v, (v + 1) % n)).collect();
    let table = generalized_grundy(&graph(n, &edges));
    assert!(table.values().iter().all(|&v| v == INFINITE));
}
