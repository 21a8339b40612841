//! Remoteness and position analysis ([`Analysis::analyse_position`]) judged by an oracle that
//! knows only the rules: [`Remote`] solves every multiset of `m` tokens of a small graph by
//! levels of remoteness, straight from the definition, without Grundy values.
//!
//! Test names start with what they need:
//! - `acyclic_*` and `cyclic_*`: random small graphs, every position of 1 to 3 tokens;
//! - `budget_*`: the position budget (tiny budgets, and large graphs);
//! - `deep_*`: a path of a million vertices (no recursion anywhere);
//! - `docs_*`: the examples of `docs/games.md`.

use std::collections::HashMap;

use crate::support::oracle::multisets;
use crate::support::properties::adjacency;
use crate::support::random_games::{config, dag, digraph};
use grundy::engine::{
    Analysis, AnalysisOptions, Digraph, Game, Limits, Move, MoveAnalysis, Outcome,
    PositionAnalysis, Remoteness, analyse, remoteness::DRAW,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Positions are checked with up to this many tokens.
const MAX_TOKENS: usize = 3;

// ---------------------------------------------------------------------------------------------
// The oracle
// ---------------------------------------------------------------------------------------------

/// Outcome and remoteness of every position of `m` tokens (a sorted vertex list) on one graph.
///
/// By levels: level 0 holds the positions without moves (LOSE). A position not yet solved is
/// WIN at odd level `r` when one of its moves reaches a LOSE position of level `r - 1`, and
/// LOSE at even level `r` when every move reaches a WIN position of level below `r` (so at
/// most `r - 1`, and exactly, since it was not solved before). A level that solves nothing
/// ends the search: the next one could only build on it. What is never solved is a DRAW.
struct Remote {
    index: HashMap<Vec<u32>, usize>,
    positions: Vec<Vec<u32>>,
    /// Distinct positions one move away.
    children: Vec<Vec<usize>>,
    /// `(outcome, remoteness)`, remoteness `None` for a DRAW.
    solved: Vec<(Outcome, Option<u64>)>,
}

impl Remote {
    fn solve(adjacency: &[Vec<u32>], tokens: usize) -> Self {
        let positions = multisets(adjacency.len() as u32, tokens);
        let index: HashMap<Vec<u32>, usize> = positions
            .iter()
            .enumerate()
            .map(|(i, position)| (position.clone(), i))
            .collect();
        let children: Vec<Vec<usize>> = positions
            .iter()
            .map(|position| {
                let mut next: Vec<usize> = slides(adjacency, position)
                    .into_iter()
                    .map(|(_, child)| index[&child])
                    .collect();
                next.sort_unstable();
                next.dedup();
                next
            })
            .collect();
        let mut level: Vec<Option<u64>> = vec![None; positions.len()];
        for r in 0.. {
            let newly: Vec<usize> = (0..positions.len())
                .filter(|&p| level[p].is_none())
                .filter(|&p| {
                    let moves = &children[p];
                    if r % 2 == 1 {
                        moves.iter().any(|&c| level[c] == Some(r - 1))
                    } else {
                        moves.iter().all(|&c| level[c].is_some_and(|l| l < r))
                    }
                })
                .collect();
            if newly.is_empty() {
                break;
            }
            for p in newly {
                level[p] = Some(r);
            }
        }
        let solved = level
            .iter()
            .map(|&l| match l {
                None => (Outcome::Draw, None),
                Some(r) if r % 2 == 0 => (Outcome::Lose, Some(r)),
                Some(r) => (Outcome::Win, Some(r)),
            })
            .collect();
        Self {
            index,
            positions,
            children,
            solved,
        }
    }

    fn of(&self, position: &[u32]) -> (Outcome, Option<u64>) {
        self.solved[self.index[position]]
    }
}

/// Every legal slide `(from, to)` of `position` with the sorted position it leads to, one per
/// token and edge (so repeats where tokens share a vertex or edges repeat).
fn slides(adjacency: &[Vec<u32>], position: &[u32]) -> Vec<((u32, u32), Vec<u32>)> {
    let mut all = Vec::new();
    for (i, &from) in position.iter().enumerate() {
        for &to in &adjacency[from as usize] {
            let mut child = position.to_vec();
            child[i] = to;
            child.sort_unstable();
            all.push(((from, to), child));
        }
    }
    all
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

fn sliding_analysis(vertex_count: u32, edges: &[(u32, u32)]) -> Analysis {
    let graph = Digraph::from_edges(vertex_count, edges).expect("a valid graph");
    analyse(Game::token_sliding(graph), &Limits::default()).expect("token sliding is analysed")
}

fn expected_remoteness(solved: (Outcome, Option<u64>)) -> Remoteness {
    solved.1.map_or(Remoteness::Draw, Remoteness::Known)
}

/// The outcome for the player who moves to a position of outcome `reached`.
fn mover_outcome(reached: Outcome) -> Outcome {
    match reached {
        Outcome::Win => Outcome::Lose,
        Outcome::Lose => Outcome::Win,
        Outcome::Draw => Outcome::Draw,
    }
}

/// The documented order: winning moves by increasing remoteness, drawing moves, losing moves
/// by decreasing remoteness, unknown remoteness last in its class, ties by `(from, to)`.
fn in_order(a: &MoveAnalysis, b: &MoveAnalysis) -> bool {
    let class = |m: &MoveAnalysis| match m.outcome {
        Outcome::Win => 0,
        Outcome::Draw => 1,
        Outcome::Lose => 2,
    };
    if class(a) != class(b) {
        return class(a) < class(b);
    }
    let (ra, rb) = (a.remoteness.known(), b.remoteness.known());
    if ra != rb {
        return match (ra, rb) {
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(x), Some(y)) if a.outcome == Outcome::Win => x < y,
            (Some(x), Some(y)) => x > y,
            (None, None) => unreachable!(),
        };
    }
    (a.from, a.to) < (b.from, b.to)
}

/// Checks one full analysis (no cap, enough budget) of `position` against the oracle.
fn check_full(
    analysis: &Analysis,
    adjacency: &[Vec<u32>],
    oracle: &Remote,
    position: &[u32],
    found: &PositionAnalysis,
) -> Result<(), TestCaseError> {
    let solved = oracle.of(position);
    let evaluation = analysis.evaluate_tokens(position).unwrap();
    prop_assert_eq!(found.outcome, solved.0, "outcome of {:?}", position);
    prop_assert_eq!(found.nim_sum, evaluation.nim_sum);
    prop_assert_eq!(
        found.remoteness,
        expected_remoteness(solved),
        "{:?}",
        position
    );
    prop_assert_eq!(found.moves_omitted, 0);
    let mut expected: Vec<(u32, u32)> = slides(adjacency, position)
        .into_iter()
        .map(|(m, _)| m)
        .collect();
    expected.sort_unstable();
    expected.dedup();
    let mut listed: Vec<(u32, u32)> = found.moves.iter().map(|m| (m.from, m.to)).collect();
    listed.sort_unstable();
    prop_assert_eq!(&listed, &expected, "the distinct moves of {:?}", position);
    for m in &found.moves {
        let mut child = position.to_vec();
        let i = child.iter().position(|&v| v == m.from).unwrap();
        child[i] = m.to;
        child.sort_unstable();
        let reached = oracle.of(&child);
        prop_assert_eq!(
            m.outcome,
            mover_outcome(reached.0),
            "{:?}: {:?}",
            position,
            m
        );
        prop_assert_eq!(
            m.remoteness,
            expected_remoteness(reached),
            "{:?}: {:?}",
            position,
            m
        );
    }
    for pair in found.moves.windows(2) {
        prop_assert!(in_order(&pair[0], &pair[1]), "{:?}: {:?}", position, pair);
    }
    // The oracle's own consistency: the remoteness follows from the moves.
    if let (Outcome::Win, Some(r)) = solved {
        prop_assert_eq!(found.moves[0].remoteness, Remoteness::Known(r - 1));
    }
    Ok(())
}

/// Every position of 1 to [`MAX_TOKENS`] tokens, fully, then capped and on a tight budget.
/// On an acyclic graph the winning move of one token alone (what `explain` names) is the
/// fastest: it reaches a LOSE position one less remote than the token's own.
fn check_fastest_win(
    analysis: &Analysis,
    oracle: &Remote,
    vertex: u32,
    solved: (Outcome, Option<u64>),
) -> Result<(), TestCaseError> {
    let (Outcome::Win, Some(remoteness)) = solved else {
        return Ok(());
    };
    if analysis.is_cyclic() {
        return Ok(());
    }
    let evaluation = analysis.evaluate_tokens(&[vertex]).unwrap();
    let Some(Move::Slide { to, .. }) = analysis.best_move(&[(vertex, 1)], &evaluation) else {
        return Err(TestCaseError::fail(format!(
            "no winning move from {vertex}"
        )));
    };
    prop_assert_eq!(
        oracle.of(&[to]),
        (Outcome::Lose, Some(remoteness - 1)),
        "{} -> {}",
        vertex,
        to
    );
    Ok(())
}

fn check_graph(
    vertex_count: u32,
    edges: &[(u32, u32)],
    max_moves: u32,
    budget: u64,
) -> Result<(), TestCaseError> {
    let analysis = sliding_analysis(vertex_count, edges);
    let adjacency = adjacency(vertex_count, edges);
    let table = analysis
        .remoteness_table()
        .expect("token sliding has a table");
    prop_assert_eq!(table.len(), vertex_count as usize);
    for tokens in 1..=MAX_TOKENS {
        let oracle = Remote::solve(&adjacency, tokens);
        for position in &oracle.positions {
            if tokens == 1 {
                let solved = oracle.of(position);
                let entry = solved.1.map_or(DRAW, |r| r as u32);
                prop_assert_eq!(table[position[0] as usize], entry, "vertex {}", position[0]);
                prop_assert_eq!(analysis.remoteness(position[0]), solved.1.map(|r| r as u32));
                check_fastest_win(&analysis, &oracle, position[0], solved)?;
            }
            let full = analysis
                .analyse_position(position, &AnalysisOptions::default())
                .unwrap();
            check_full(&analysis, &adjacency, &oracle, position, &full)?;
            // The same position in another token order gives the same answer.
            let reversed: Vec<u32> = position.iter().rev().copied().collect();
            let again = analysis
                .analyse_position(&reversed, &AnalysisOptions::default())
                .unwrap();
            prop_assert_eq!(&again, &full);

            let capped = analysis
                .analyse_position(
                    position,
                    &AnalysisOptions {
                        max_moves,
                        ..AnalysisOptions::default()
                    },
                )
                .unwrap();
            let kept = full.moves.len().min(max_moves as usize);
            prop_assert_eq!(&capped.moves[..], &full.moves[..kept]);
            prop_assert_eq!(capped.moves_omitted, (full.moves.len() - kept) as u64);
            prop_assert_eq!(capped.remoteness, full.remoteness);

            check_budget(&analysis, position, &full, budget)?;
        }
        // The oracle's state graph is closed: every child is a position of the same size.
        prop_assert_eq!(oracle.children.len(), oracle.positions.len());
    }
    Ok(())
}

/// On a budget of `budget` positions, what is known is exact, and only sums of two or more
/// movable tokens may be over budget (always, on a budget of 0); outcomes never change.
fn check_budget(
    analysis: &Analysis,
    position: &[u32],
    full: &PositionAnalysis,
    budget: u64,
) -> Result<(), TestCaseError> {
    let options = AnalysisOptions {
        position_budget: budget,
        ..AnalysisOptions::default()
    };
    let tight = analysis.analyse_position(position, &options).unwrap();
    prop_assert_eq!(tight.outcome, full.outcome);
    prop_assert_eq!(tight.nim_sum, full.nim_sum);
    prop_assert_eq!(tight.moves.len(), full.moves.len());
    let graph = analysis.game().graph();
    let movable = |p: &[u32]| p.iter().filter(|&&v| graph.out_degree(v) > 0).count();
    let agrees = |found: Remoteness, exact: Remoteness, p: &[u32]| match found {
        Remoteness::OverBudget {
            budget: reported,
            positions_explored,
        } => {
            reported == budget
                && positions_explored <= budget
                && movable(p) >= 2
                && exact != Remoteness::Draw
        }
        other => other == exact,
    };
    prop_assert!(
        agrees(tight.remoteness, full.remoteness, position),
        "{:?} on budget {}: {:?}",
        position,
        budget,
        tight.remoteness
    );
    if budget == 0 && movable(position) >= 2 && full.outcome != Outcome::Draw {
        let stopped = matches!(tight.remoteness, Remoteness::OverBudget { budget: 0, .. });
        prop_assert!(stopped, "{:?}: {:?}", position, tight.remoteness);
    }
    for m in &tight.moves {
        let exact = full
            .moves
            .iter()
            .find(|e| (e.from, e.to) == (m.from, m.to))
            .expect("the same moves");
        prop_assert_eq!(m.outcome, exact.outcome);
        let mut child = position.to_vec();
        let i = child.iter().position(|&v| v == m.from).unwrap();
        child[i] = m.to;
        prop_assert!(
            agrees(m.remoteness, exact.remoteness, &child),
            "{:?} -> {:?} on budget {}",
            position,
            m,
            budget
        );
    }
    for pair in tight.moves.windows(2) {
        prop_assert!(in_order(&pair[0], &pair[1]), "{:?}", pair);
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn acyclic_positions_match_the_oracle(
        (n, edges) in dag(7, 3),
        max_moves in 0u32..4,
        budget in 0u64..40,
    ) {
        check_graph(n, &edges, max_moves, budget)?;
    }

    #[test]
    fn cyclic_positions_match_the_oracle(
        (n, edges) in digraph(6),
        max_moves in 0u32..4,
        budget in 0u64..40,
    ) {
        check_graph(n, &edges, max_moves, budget)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Fixed cases
// ---------------------------------------------------------------------------------------------

/// `docs/games.md`: x = 0 and x' = 1 both have Grundy value 1 and remoteness 1, yet two tokens
/// on x end in 2 moves and tokens on x and x' in 4: in the sum the loser plays 1 -> 2, a move
/// that would be bad alone.
#[test]
fn docs_sum_remoteness_is_not_a_function_of_the_parts() {
    let analysis = sliding_analysis(5, &[(0, 4), (1, 4), (1, 2), (2, 3), (3, 4)]);
    assert_eq!(analysis.values(), &[1, 1, 0, 1, 0]);
    assert_eq!(analysis.remoteness_table(), Some(&[1, 1, 2, 1, 0][..]));
    let options = AnalysisOptions::default();
    let twins = analysis.analyse_position(&[0, 0], &options).unwrap();
    assert_eq!(
        (twins.outcome, twins.remoteness),
        (Outcome::Lose, Remoteness::Known(2))
    );
    let mixed = analysis.analyse_position(&[0, 1], &options).unwrap();
    assert_eq!(
        (mixed.outcome, mixed.remoteness),
        (Outcome::Lose, Remoteness::Known(4))
    );
    assert_eq!(
        mixed.moves[0],
        MoveAnalysis {
            from: 1,
            to: 2,
            outcome: Outcome::Lose,
            remoteness: Remoteness::Known(3),
        }
    );
}

#[test]
fn docs_split_count_games_have_no_remoteness() {
    let graph = Digraph::from_edges(4, &[(0, 1), (0, 2), (1, 3), (2, 1), (2, 3)]).unwrap();
    let game = Game::with_split_counts(graph, vec![2, 1, 3, 2]).unwrap();
    let analysis = analyse(game, &Limits::default()).unwrap();
    assert_eq!(analysis.remoteness_table(), None);
    assert_eq!(analysis.remoteness(0), None);
    let found = analysis
        .analyse_position(&[0, 2], &AnalysisOptions::default())
        .unwrap();
    assert_eq!(found.outcome, Outcome::Win);
    assert_eq!(found.nim_sum, 3);
    assert_eq!(found.remoteness, Remoteness::UnavailableForSplitCounts);
    assert!(found.moves.is_empty());
    assert_eq!(found.moves_omitted, 0);
}

#[test]
fn out_of_range_tokens_are_refused() {
    let analysis = sliding_analysis(2, &[(0, 1)]);
    let error = analysis
        .analyse_position(&[1, 7], &AnalysisOptions::default())
        .unwrap_err();
    assert_eq!((error.index, error.vertex, error.vertex_count), (1, 7, 2));
    let empty = analysis
        .analyse_position(&[], &AnalysisOptions::default())
        .unwrap();
    assert_eq!(
        (empty.outcome, empty.remoteness),
        (Outcome::Lose, Remoteness::Known(0))
    );
    assert!(empty.moves.is_empty());
}

/// A path `0 -> 1 -> ... -> n-1`: tokens never meet, each move shortens one path by one, so
/// a sum of tokens at distances `d_i` from the end lasts exactly `sum d_i` moves.
fn path(n: u32) -> Analysis {
    let edges: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
    sliding_analysis(n, &edges)
}

#[test]
fn deep_path_of_a_million() {
    let n = 1_000_000;
    let analysis = path(n);
    let options = AnalysisOptions::default();
    let one = analysis.analyse_position(&[0], &options).unwrap();
    assert_eq!(one.remoteness, Remoteness::Known(u64::from(n) - 1));
    assert_eq!(one.moves[0].remoteness, Remoteness::Known(u64::from(n) - 2));
    // Near the end the sum is small; a token on the last vertex never moves.
    let near = analysis
        .analyse_position(&[n - 5, n - 3, n - 1], &options)
        .unwrap();
    assert_eq!(near.remoteness, Remoteness::Known(4 + 2));
    assert_eq!(near.moves.len(), 2);
}

#[test]
fn deep_sum_is_settled_without_recursion() {
    // Two tokens on a path of 1000: about half a million positions, settled 1997 levels deep.
    let analysis = path(1000);
    let found = analysis
        .analyse_position(&[0, 1], &AnalysisOptions::default())
        .unwrap();
    assert_eq!(found.outcome, Outcome::Win);
    assert_eq!(found.remoteness, Remoteness::Known(999 + 998));
}

#[test]
fn budget_stops_a_large_sum() {
    let analysis = path(1_000_000);
    let options = AnalysisOptions {
        position_budget: 10_000,
        max_moves: 1,
        ..AnalysisOptions::default()
    };
    let found = analysis.analyse_position(&[0, 1], &options).unwrap();
    assert_eq!((found.outcome, found.nim_sum), (Outcome::Win, 1));
    assert_eq!(
        found.remoteness,
        Remoteness::OverBudget {
            budget: 10_000,
            positions_explored: 10_000
        }
    );
    assert_eq!(found.moves.len(), 1);
    assert_eq!(found.moves_omitted, 1);
    assert_eq!(found.moves[0].outcome, Outcome::Win);
}
