//! The Addition-Subtraction game (split counts `K_v`) through the engine's public API, judged
//! by the brute-force oracle of `support/split_oracle.rs` (token sliding is in `props.rs`).
//!
//! The oracle knows only the rules of `docs/games.md` and solves explicit positions by search,
//! so it catches mistakes in the engine's formulas (Sprague-Grundy values, the generalized SG
//! function on cycles, split counts) that tests derived from the same formulas would share.
//!
//! Test names start with the tier of the engine they need:
//! - `games_md_*`: the worked example and judge sample of `docs/games.md`, section 2;
//! - `split_*`: split counts on small DAGs, and with `K = 1` against the token-sliding oracle;
//!   `split_wide_*` on wider graphs, where other methods of computing the options apply;
//! - `memoised_*`: the move memo shared by the positions of a game.
//!
//! The property tests run from a fixed RNG seed, so a failure shows up on every run, and write no
//! regression files. `PROPTEST_RNG_SEED` and `PROPTEST_CASES` override the seed and case count.

use crate::support::oracle::{SlidingOracle, Verdict, multisets};
use crate::support::properties::{MAX_TOKENS, adjacency, evaluate, expected_outcome};
use crate::support::random_games::{config, dag, dag_edges};
use crate::support::split_oracle::SplitOracle;
use grundy::engine::{Analysis, Digraph, Game, Limits, Move, MoveMemo, Outcome, analyse};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

// ---------------------------------------------------------------------------------------------
// Random games
// ---------------------------------------------------------------------------------------------

/// A random Addition-Subtraction game small enough for the oracle: up to `max_vertices`
/// vertices, out-degree up to `max_out_degree` (repeats allowed), split counts
/// `0..=max_split_count`. `(vertex_count, edges, split_counts)`.
fn split_game(
    max_vertices: u32,
    max_out_degree: usize,
    max_split_count: u32,
) -> impl Strategy<Value = (u32, Vec<(u32, u32)>, Vec<u32>)> {
    (1..=max_vertices).prop_flat_map(move |n| {
        let split_counts = prop::collection::vec(0..=max_split_count, n as usize);
        (Just(n), dag_edges(n, max_out_degree), split_counts)
    })
}

// ---------------------------------------------------------------------------------------------
// Engine and oracle plumbing
// ---------------------------------------------------------------------------------------------

fn split_analysis(
    vertex_count: u32,
    edges: &[(u32, u32)],
    split_counts: &[u32],
) -> Result<Analysis, TestCaseError> {
    let graph = Digraph::from_edges(vertex_count, edges)
        .map_err(|error| TestCaseError::fail(format!("graph rejected: {error}")))?;
    let game = Game::with_split_counts(graph, split_counts.to_vec())
        .map_err(|error| TestCaseError::fail(format!("split counts rejected: {error}")))?;
    analyse(game, &Limits::default())
        .map_err(|error| TestCaseError::fail(format!("split game not analysed: {error}")))
}

/// An Addition-Subtraction position as one item `(v, value_v)` per vertex, in vertex order.
fn value_items(values: &[u32]) -> Vec<(u32, u64)> {
    (0u32..)
        .zip(values.iter().map(|&value| u64::from(value)))
        .collect()
}

/// Every value vector of `vertex_count` vertices holding `0..=max_units` units in all: with
/// two units it compares every pair of vertices, with three every triple.
fn unit_positions(vertex_count: u32, max_units: usize) -> Vec<Vec<u32>> {
    (0..=max_units)
        .flat_map(|units| multisets(vertex_count, units))
        .map(|tokens| {
            let mut values = vec![0; vertex_count as usize];
            for token in tokens {
                values[token as usize] += 1;
            }
            values
        })
        .collect()
}

/// Every vector of `length` values in `0..=max_value`.
fn value_vectors(length: usize, max_value: u32) -> Vec<Vec<u32>> {
    let mut vectors = vec![Vec::new()];
    for _ in 0..length {
        vectors = vectors
            .into_iter()
            .flat_map(|prefix| {
                (0..=max_value).map(move |value| {
                    let mut vector = prefix.clone();
                    vector.push(value);
                    vector
                })
            })
            .collect();
    }
    vectors
}

// ---------------------------------------------------------------------------------------------
// Addition-Subtraction checks
// ---------------------------------------------------------------------------------------------

/// The position after the engine's move `chosen` on `values` (given as [`value_items`]); fails
/// unless it is a well-formed split move naming its item, and legal by the rules.
fn apply_engine_split(
    oracle: &SplitOracle,
    values: &[u32],
    items: &[(u32, u64)],
    chosen: &Move,
) -> Result<Vec<u32>, TestCaseError> {
    let Move::Split {
        item_index,
        vertex,
        odd_targets,
        pair_target,
        pair_count,
    } = chosen
    else {
        return Err(TestCaseError::fail(format!(
            "the split game answered a non-split move {chosen:?} for {values:?}"
        )));
    };
    let item = items.get(*item_index);
    prop_assert!(
        matches!(item, Some(&(item_vertex, count)) if item_vertex == *vertex && count > 0),
        "{chosen:?} names item {item:?} of {items:?}, not a unit on vertex {vertex}"
    );
    prop_assert!(
        odd_targets.windows(2).all(|pair| pair[0] < pair[1]),
        "{chosen:?}: odd_targets are not distinct and increasing"
    );
    prop_assert!(
        *pair_count == 0 || pair_target.is_some(),
        "{chosen:?}: pairs without a pair_target"
    );
    let mut picks = odd_targets.clone();
    if let Some(target) = *pair_target {
        picks.extend(std::iter::repeat_n(target, 2 * *pair_count as usize));
    }
    oracle
        .apply(values, *vertex, &picks)
        .map_err(|illegal| TestCaseError::fail(format!("{chosen:?} on {values:?}: {illegal:?}")))
}

/// The engine's outcome for `values` equals the oracle's verdict.
fn check_split_outcome(
    analysis: &Analysis,
    oracle: &mut SplitOracle,
    values: &[u32],
) -> Result<(), TestCaseError> {
    let evaluation = evaluate(analysis, &value_items(values))?;
    prop_assert_eq!(
        evaluation.outcome,
        expected_outcome(oracle.verdict(values)),
        "outcome of values {:?}",
        values
    );
    Ok(())
}

/// The engine's best move for `values`: on WIN a legal move to an oracle LOSE position, on LOSE
/// no move.
fn check_split_best_move(
    analysis: &Analysis,
    oracle: &mut SplitOracle,
    values: &[u32],
) -> Result<(), TestCaseError> {
    check_split_outcome(analysis, oracle, values)?;
    let items = value_items(values);
    let evaluation = evaluate(analysis, &items)?;
    let chosen = analysis.best_move(&items, &evaluation);
    if oracle.verdict(values) == Verdict::Lose {
        prop_assert!(
            chosen.is_none(),
            "LOSE values {values:?} but best move {chosen:?}"
        );
        return Ok(());
    }
    let Some(chosen) = chosen else {
        return Err(TestCaseError::fail(format!(
            "WIN values {values:?} but no best move"
        )));
    };
    let after = apply_engine_split(oracle, values, &items, &chosen)?;
    prop_assert_eq!(
        oracle.verdict(&after),
        Verdict::Lose,
        "best move {:?} from {:?} leads to {:?}",
        chosen,
        values,
        after
    );
    Ok(())
}

/// What a split-game property checks at each position.
#[derive(Debug, Clone, Copy)]
enum SplitCheck {
    Outcomes,
    BestMoves,
}

fn check_split_position(
    analysis: &Analysis,
    oracle: &mut SplitOracle,
    values: &[u32],
    check: SplitCheck,
) -> Result<(), TestCaseError> {
    match check {
        SplitCheck::Outcomes => check_split_outcome(analysis, oracle, values),
        SplitCheck::BestMoves => check_split_best_move(analysis, oracle, values),
    }
}

/// Runs `check` on each of `starts`, then on every position the oracle had solved by then
/// (reached from them: larger values, sinks at 0), and names the game in any failure.
fn check_split_game(
    vertex_count: u32,
    edges: &[(u32, u32)],
    split_counts: &[u32],
    starts: &[Vec<u32>],
    check: SplitCheck,
) -> Result<(), TestCaseError> {
    let analysis = split_analysis(vertex_count, edges, split_counts)?;
    let mut oracle = SplitOracle::new(&adjacency(vertex_count, edges), split_counts);
    let in_game = |error: TestCaseError| {
        TestCaseError::fail(format!(
            "{error} in the game of {vertex_count} vertices, edges {edges:?}, \
             split counts {split_counts:?}"
        ))
    };
    for values in starts {
        check_split_position(&analysis, &mut oracle, values, check).map_err(in_game)?;
    }
    let solved: Vec<Vec<u32>> = oracle
        .solved_positions()
        .into_iter()
        .map(|(values, _)| values)
        .collect();
    for values in solved {
        check_split_position(&analysis, &mut oracle, &values, check).map_err(in_game)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// docs/games.md worked examples
// ---------------------------------------------------------------------------------------------

/// The worked example and judge sample of section 2: rounds WINNING, LOSING, WINNING.
#[test]
fn games_md_addition_subtraction_example() {
    let edges = [(0, 1), (0, 2), (1, 3), (2, 1), (2, 3)];
    let split_counts = [2, 1, 3, 2];
    let analysis = split_analysis(4, &edges, &split_counts).unwrap();
    let mut oracle = SplitOracle::new(&adjacency(4, &edges), &split_counts);

    // The moves docs/games.md lists from {3,4,5,6} are all legal. (By the stated rule vertex 2
    // also has the picks {1,3,3} and {3,3,3}; the list there is not exhaustive.)
    let start = [3, 4, 5, 6];
    let reachable: Vec<Vec<u32>> = oracle
        .moves(&start)
        .into_iter()
        .map(|step| oracle.apply(&start, step.vertex, &step.picks).unwrap())
        .collect();
    let listed = [
        [2, 5, 6, 6],
        [2, 6, 5, 6],
        [2, 4, 7, 6],
        [3, 3, 5, 7],
        [3, 7, 4, 6],
        [3, 6, 4, 7],
    ];
    for position in listed {
        assert!(
            reachable.contains(&position.to_vec()),
            "{position:?} not reachable"
        );
    }

    let rounds: [([u32; 4], Outcome); 3] = [
        ([3, 4, 5, 6], Outcome::Win),
        ([0, 0, 0, 5], Outcome::Lose),
        ([1, 0, 0, 0], Outcome::Win),
    ];
    for (values, expected) in rounds {
        assert_eq!(
            expected_outcome(oracle.verdict(&values)),
            expected,
            "oracle on {values:?}"
        );
        let evaluation = evaluate(&analysis, &value_items(&values)).unwrap();
        assert_eq!(evaluation.outcome, expected, "engine on {values:?}");
        check_split_best_move(&analysis, &mut oracle, &values).unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(1000))]

    /// Tiny games (up to 5 vertices, out-degree up to 3, K in 0..=3), every value vector in
    /// 0..=2 and every larger position met while solving them: the engine's outcome is the
    /// oracle's.
    #[test]
    fn split_outcomes_match_oracle((n, edges, split_counts) in split_game(5, 3, 3)) {
        let starts = value_vectors(n as usize, 2);
        check_split_game(n, &edges, &split_counts, &starts, SplitCheck::Outcomes)?;
    }

    /// Tiny games, same positions: on WIN the engine's best move is legal (a unit of the named
    /// item, K_v picks among the out-neighbours) and leads to an oracle LOSE position; on LOSE
    /// there is none.
    #[test]
    fn split_best_moves_win((n, edges, split_counts) in split_game(5, 3, 3)) {
        let starts = value_vectors(n as usize, 2);
        check_split_game(n, &edges, &split_counts, &starts, SplitCheck::BestMoves)?;
    }

    /// With K = 1 everywhere the split game is token sliding (each unit is a token): the
    /// engine's split-game outcome for the unit counts of every position of 0..=MAX_TOKENS tokens is the
    /// token-sliding oracle's.
    #[test]
    fn split_unit_counts_match_token_sliding((n, edges) in dag(6, 3)) {
        let analysis = split_analysis(n, &edges, &vec![1; n as usize])?;
        let oracle = SlidingOracle::solve(&adjacency(n, &edges), MAX_TOKENS);
        for (tokens, verdict) in oracle.positions() {
            let mut values = vec![0u32; n as usize];
            for &token in tokens {
                values[token as usize] += 1;
            }
            let evaluation = evaluate(&analysis, &value_items(&values))?;
            prop_assert_eq!(
                evaluation.outcome,
                expected_outcome(verdict),
                "tokens {:?} as values {:?} on {:?}",
                tokens,
                values,
                edges
            );
        }
    }
}

proptest! {
    // Each wide game costs the oracle up to tens of milliseconds: fewer cases.
    #![proptest_config(config(300))]

    /// Wider games (up to 8 vertices, out-degree up to 7, K in 0..=2), every position of at most
    /// three units and every position met while solving them. Here vertices have more distinct
    /// successor values than K + 1, where the options are not a GF(2) span (or coset) and the
    /// engine enumerates subsets. Outcomes as above.
    #[test]
    fn split_wide_outcomes_match_oracle((n, edges, split_counts) in split_game(8, 7, 2)) {
        let starts = unit_positions(n, 3);
        check_split_game(n, &edges, &split_counts, &starts, SplitCheck::Outcomes)?;
    }

    /// Wider games, same positions: best moves as above.
    #[test]
    fn split_wide_best_moves_win((n, edges, split_counts) in split_game(8, 7, 2)) {
        let starts = unit_positions(n, 3);
        check_split_game(n, &edges, &split_counts, &starts, SplitCheck::BestMoves)?;
    }
}

proptest! {
    #![proptest_config(config(300))]

    /// A memo of split picks shared by every position of a game changes no move: the memoised
    /// moves equal the ones found afresh.
    #[test]
    fn memoised_split_moves_equal_fresh_ones((n, edges, split_counts) in split_game(8, 7, 3)) {
        let analysis = split_analysis(n, &edges, &split_counts)?;
        let mut memo = MoveMemo::default();
        for _ in 0..2 {
            for values in value_vectors(n as usize, 1) {
                let items = value_items(&values);
                let evaluation = evaluate(&analysis, &items)?;
                let fresh = analysis.best_move(&items, &evaluation);
                let memoised = analysis.best_move_memo(&items, &evaluation, &mut memo);
                prop_assert_eq!(&memoised, &fresh, "values {:?}", values);
            }
        }
        prop_assert!(memo.len() <= MoveMemo::MAX_ENTRIES);
    }
}
