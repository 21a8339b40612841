//! The remoteness of a sum of tokens, searched exactly over the positions of the sum, and the
//! move list of [`super::Analysis::analyse_position`].
//!
//! A position is the sorted multiset of its token vertices; a move keeps the number of tokens,
//! so the search works on positions of one width. Two reductions are exact: a token on a
//! vertex without followers never moves and changes no one's options, so it is dropped from
//! the query and written [`SINK`](super::sum_search::SINK) once a move puts it there (all
//! sinks are alike); and a position with at most one movable token is answered from the
//! one-token table. The search itself is [`super::sum_search`].
//!
//! The moves of the position itself are listed without building the positions they lead to:
//! their outcomes come from the position's own verdict in O(1) a move
//! ([`SumRules::outcome_after_slide`]), and only the moves whose remoteness is searched, and
//! the first `max_moves` of each class whose remoteness is not, are kept. So neither the
//! listing nor the search holds memory in the square of the tokens.

use super::graph::Digraph;
use super::interrupt::Interrupt;
use super::outcome::Outcome;
use super::remoteness::{AnalysisOptions, MoveAnalysis, PositionAnalysis, Remoteness};
use super::sum_search::{Seed, SumRules, SumSearch};

/// Analyses a token-sliding position: see `Analysis::analyse_position`. `table` is the
/// one-token remoteness table, and `outcome` and `nim_sum` the verdict on `tokens`.
///
/// What it costs is bounded by `options` whatever the position: the moves are listed without
/// building the positions they lead to (O(1) each, O(out-degree) memory for the best
/// `max_moves` of each class), and the search spends at most `work_budget` units on its
/// closures and as many on settling (a unit is a token copied or compared; a position of `k`
/// tokens generated costs `k + STEP_COST`, see [`super::sum_search`]), so its memory is
/// linear in the budget and not in the square of the tokens. Once `interrupt` is raised (read
/// every `INTERRUPT_CHECK` units, in the listing and the settling too) the search stops as if
/// its budget had run out: the caller then discards the answer. `progress` is called at each
/// of those reads, on this thread: only a search that lasts calls it, so a caller holding
/// answers for someone can send them then instead of making them wait for the search.
pub(super) fn analyse_sliding(
    rules: &SumRules<'_>,
    table: &[u32],
    tokens: &[u32],
    (outcome, nim_sum): (Outcome, u64),
    options: &AnalysisOptions,
    interrupt: Option<&Interrupt>,
    progress: &mut dyn FnMut(),
) -> PositionAnalysis {
    let graph = rules.graph;
    let outcome_after_slide = rules
        .outcome_after_slide
        .expect("normal play knows the outcome after a slide");
    let root = movable_tokens(graph, tokens);
    let mut search = SumSearch::new(rules, table, root.len(), options, interrupt, progress);
    let root_seed = search.close(&root);

    // Moves by class (winning, drawing, losing for the mover), each class in `(from, to)`
    // order: the order in which their positions are closed. A move whose remoteness cannot
    // be known (over the budget) sorts last in its class by `(from, to)`, so of those only the
    // first `max_moves` of a class can be listed; the others are only counted.
    let search_moves = options.max_moves > 0;
    let mut kept: Vec<(MoveAnalysis, Seed)> = Vec::new();
    let mut total_moves = 0u64;
    let mut followers = Vec::new();
    for wanted in [Outcome::Win, Outcome::Draw, Outcome::Lose] {
        let mut unknown_kept = 0u64;
        for (index, &from) in root.iter().enumerate() {
            if index > 0 && root[index - 1] == from {
                continue;
            }
            if !search.listing(graph.out_degree(from)) {
                break; // interrupted: the caller discards the answer
            }
            followers.clear();
            followers.extend_from_slice(graph.successors(from));
            followers.sort_unstable();
            followers.dedup();
            for &to in &followers {
                let mover = for_the_mover(outcome_after_slide(from, to));
                if mover != wanted {
                    continue;
                }
                total_moves += 1;
                let seed = match mover {
                    Outcome::Draw => Seed::Draw,
                    _ if search_moves => search.close_child(&root, index, to),
                    _ => Seed::OverBudget,
                };
                if seed == Seed::OverBudget || seed == Seed::Draw {
                    if unknown_kept >= u64::from(options.max_moves) {
                        continue;
                    }
                    unknown_kept += 1;
                }
                let analysed = MoveAnalysis {
                    from,
                    to,
                    outcome: mover,
                    remoteness: Remoteness::Draw, // read from the seed below
                };
                kept.push((analysed, seed));
            }
        }
    }
    search.settle();
    let remoteness = search.remoteness(root_seed);
    let mut moves: Vec<MoveAnalysis> = kept
        .into_iter()
        .map(|(analysed, seed)| MoveAnalysis {
            remoteness: search.remoteness(seed),
            ..analysed
        })
        .collect();
    sort_best_first(&mut moves);
    let kept = moves.len().min(options.max_moves as usize);
    moves.truncate(kept);
    PositionAnalysis {
        outcome,
        nim_sum,
        remoteness,
        moves_omitted: total_moves - kept as u64,
        positions_searched: search.positions_searched(),
        moves,
    }
}

/// The tokens that can move (on vertices with followers), sorted: the root of a search.
pub(super) fn movable_tokens(graph: &Digraph, tokens: &[u32]) -> Vec<u32> {
    let mut root: Vec<u32> = tokens
        .iter()
        .copied()
        .filter(|&v| graph.out_degree(v) > 0)
        .collect();
    root.sort_unstable();
    root
}

/// The outcome of a move for its mover, from the outcome of the position it leads to.
pub(super) fn for_the_mover(after: Outcome) -> Outcome {
    match after {
        Outcome::Win => Outcome::Lose,
        Outcome::Lose => Outcome::Win,
        Outcome::Draw => Outcome::Draw,
    }
}

/// Sorts moves best first: winning moves by increasing remoteness, drawing moves, losing
/// moves by decreasing remoteness, ties by `(from, to)`, unknown remoteness last in its class.
pub(super) fn sort_best_first(moves: &mut [MoveAnalysis]) {
    moves.sort_by_key(|m| {
        let class = class(m.outcome);
        let rank = match (m.outcome, m.remoteness) {
            (Outcome::Win, Remoteness::Known(r)) => r,
            (Outcome::Lose, Remoteness::Known(r)) => u64::MAX - 1 - r,
            (Outcome::Draw, _) => 0,
            _ => u64::MAX,
        };
        (class, rank, m.from, m.to)
    });
}

/// Winning moves first, then drawing, then losing ones.
fn class(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Win => 0,
        Outcome::Draw => 1,
        Outcome::Lose => 2,
    }
}
