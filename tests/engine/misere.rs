//! Misère play through the engine's API, judged by the brute force of
//! `support/misere_oracle.rs`: every position of 1 to 4 tokens on random small graphs, acyclic
//! and cyclic, its outcome, remoteness and every move with its outcome and remoteness, best
//! first. Also the named examples of `docs/games.md`, the one-token tables, the budget and
//! the interrupt.

use crate::support::misere_oracle::{MisereOracle, OracleMove, Verdict};
use crate::support::random_games::{config, dag, digraph};
use grundy::engine::{
    Analysis, AnalysisOptions, Digraph, Game, Interrupt, Limits, MisereError, MoveAnalysis,
    Outcome, PlayConvention, PositionAnalysis, Remoteness, analyse, remoteness::DRAW,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn analysis(vertices: u32, edges: &[(u32, u32)]) -> Analysis {
    let graph = Digraph::from_edges(vertices, edges).unwrap();
    analyse(Game::token_sliding(graph), &Limits::default()).unwrap()
}

fn verdict(outcome: Outcome) -> Verdict {
    match outcome {
        Outcome::Win => Verdict::Win,
        Outcome::Lose => Verdict::Lose,
        Outcome::Draw => Verdict::Draw,
    }
}

fn known(remoteness: Remoteness) -> Option<u32> {
    match remoteness {
        Remoteness::Known(r) => Some(u32::try_from(r).unwrap()),
        Remoteness::Draw => None,
        other => panic!("a small position has a remoteness or is a DRAW: {other:?}"),
    }
}

fn as_oracle_moves(moves: &[MoveAnalysis]) -> Vec<OracleMove> {
    moves
        .iter()
        .map(|m| OracleMove {
            from: m.from,
            to: m.to,
            outcome: verdict(m.outcome),
            remoteness: known(m.remoteness),
        })
        .collect()
}

fn misere(a: &Analysis, tokens: &[u32]) -> PositionAnalysis {
    a.analyse_position_misere(tokens, &AnalysisOptions::default())
        .unwrap_or_else(|e| panic!("{tokens:?}: {e}"))
}

/// Every position of 1 to 4 tokens on the graph agrees with the brute force.
fn agrees_everywhere(vertices: u32, edges: &[(u32, u32)]) -> Result<(), TestCaseError> {
    let a = analysis(vertices, edges);
    for tokens in 1..=4 {
        let oracle = MisereOracle::solve(vertices, edges, tokens);
        for position in oracle.positions() {
            // Unsorted, as a client may send it.
            let mut sent = position.clone();
            sent.reverse();
            let got = misere(&a, &sent);
            let (outcome, remoteness) = oracle.verdict(position);
            prop_assert_eq!(verdict(got.outcome), outcome, "{:?}", position);
            prop_assert_eq!(known(got.remoteness), remoteness, "{:?}", position);
            prop_assert_eq!(got.nim_sum, 0);
            prop_assert_eq!(got.moves_omitted, 0);
            // Theory (at most one movable token) answers without a search, and only it.
            let by_theory = a.misere_settled_by_theory(position);
            prop_assert_eq!(by_theory, got.positions_searched == 0, "{:?}", position);
            prop_assert_eq!(
                as_oracle_moves(&got.moves),
                oracle.moves(position),
                "{:?}",
                position
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn acyclic_misere_positions_match_the_brute_force((n, edges) in dag(6, 3)) {
        agrees_everywhere(n, &edges)?;
    }

    #[test]
    fn cyclic_misere_positions_match_the_brute_force((n, edges) in digraph(5)) {
        agrees_everywhere(n, &edges)?;
    }

    #[test]
    fn misere_one_token_table_matches_the_brute_force((n, edges) in digraph(7)) {
        let a = analysis(n, &edges);
        let table = a
            .remoteness_table_as(PlayConvention::Misere, &Interrupt::new())
            .unwrap()
            .unwrap();
        let oracle = MisereOracle::solve(n, &edges, 1);
        for v in 0..n {
            let (outcome, remoteness) = oracle.verdict(&[v]);
            prop_assert_eq!(remoteness.unwrap_or(DRAW), table[v as usize]);
            prop_assert_eq!(verdict(PlayConvention::Misere.outcome_of_remoteness(table[v as usize])), outcome);
        }
    }
}

#[test]
fn misere_worked_example_is_a_loss_where_misere_nim_on_grundy_values_says_win() {
    // docs/games.md: edges 0 -> 1, 1 -> 2, 1 -> 3, 2 -> 3. The Grundy values are
    // g = (0, 2, 1, 0): one token on 0 is worth the Nim heap 0, and misère Nim (Bouton: with
    // every heap at most 1, the player to move wins iff the nim-sum is 0) would call it a WIN.
    // It is a LOSE: the only move is 0 -> 1, the opponent answers 1 -> 2, and the player to
    // move must slide 2 -> 3, leaving the opponent without a move, who wins.
    let edges = [(0, 1), (1, 2), (1, 3), (2, 3)];
    let a = analysis(4, &edges);
    assert_eq!(a.values(), &[0, 2, 1, 0]);
    let got = misere(&a, &[0]);
    assert_eq!(got.outcome, Outcome::Lose);
    assert_eq!(got.remoteness, Remoteness::Known(3));
    assert_eq!(got.moves.len(), 1);
    assert_eq!((got.moves[0].from, got.moves[0].to), (0, 1));
    assert_eq!(got.moves[0].outcome, Outcome::Lose);
    assert_eq!(got.moves[0].remoteness, Remoteness::Known(2));
    // From 1 the winning move is 1 -> 2 (to a LOSE of remoteness 1), not 1 -> 3.
    let got = misere(&a, &[1]);
    assert_eq!(
        (got.outcome, got.remoteness),
        (Outcome::Win, Remoteness::Known(2))
    );
    assert_eq!((got.moves[0].from, got.moves[0].to), (1, 2));
    let oracle = MisereOracle::solve(4, &edges, 1);
    assert_eq!(oracle.verdict(&[0]), (Verdict::Lose, Some(3)));
}

#[test]
fn misere_tokens_all_on_ends_win_at_once() {
    let a = analysis(3, &[(0, 1)]);
    for tokens in [&[][..], &[1], &[2], &[1, 2, 2]] {
        let got = misere(&a, tokens);
        assert_eq!(
            (got.outcome, got.remoteness),
            (Outcome::Win, Remoteness::Known(0))
        );
        assert!(got.moves.is_empty());
        assert!(a.misere_settled_by_theory(tokens));
    }
    // One movable token beside ends: the one-token table. 0 -> 1 and then no move: LOSE 1.
    let got = misere(&a, &[2, 0, 1]);
    assert_eq!(
        (got.outcome, got.remoteness),
        (Outcome::Lose, Remoteness::Known(1))
    );
    assert!(a.misere_settled_by_theory(&[2, 0, 1]));
    assert!(!a.misere_settled_by_theory(&[0, 0]));
}

#[test]
fn misere_search_over_the_budget_answers_nothing() {
    // Two tokens on a long path: 10^4 x 10^4 / 2 positions, far over a budget of 100.
    let n = 10_000u32;
    let edges: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
    let a = analysis(n, &edges);
    let options = AnalysisOptions {
        position_budget: 100,
        ..AnalysisOptions::default()
    };
    match a.analyse_position_misere(&[0, 0], &options) {
        Err(MisereError::OverBudget(over)) => {
            assert_eq!(over.budget, 100);
            assert!(over.positions_explored <= 100);
            assert!(
                over.to_string().contains("position budget of 100"),
                "{over}"
            );
        }
        other => panic!("expected over budget, got {other:?}"),
    }
    // Within the default budget the same sum is answered: the parity of the moves left.
    let got = misere(&a, &[n - 3, n - 2]);
    assert_eq!(
        (got.outcome, got.remoteness),
        (Outcome::Lose, Remoteness::Known(3))
    );
}

#[test]
fn misere_search_stops_once_interrupted() {
    let n = 2_000u32;
    let edges: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
    let a = analysis(n, &edges);
    let interrupt = Interrupt::new();
    interrupt.interrupt();
    let options = AnalysisOptions::default();
    let got = a.analyse_position_misere_interruptible(&[0, 0, 0], &options, &interrupt, &mut || {});
    assert!(got.is_err(), "{got:?}");
}

#[test]
fn misere_refuses_split_counts_and_bad_vertices() {
    let graph = Digraph::from_edges(2, &[(0, 1)]).unwrap();
    let a = analyse(
        Game::with_split_counts(graph, vec![1, 1]).unwrap(),
        &Limits::default(),
    )
    .unwrap();
    let options = AnalysisOptions::default();
    assert_eq!(
        a.analyse_position_misere(&[0], &options),
        Err(MisereError::SplitCounts)
    );
    let a = analysis(2, &[(0, 1)]);
    assert!(matches!(
        a.analyse_position_misere(&[0, 5], &options),
        Err(MisereError::OutOfRange(e)) if e.index == 1 && e.vertex == 5
    ));
}
