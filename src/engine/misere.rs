//! Token sliding under misère play: the player who cannot move wins.
//!
//! No theory gives the misère outcome of a sum from values of its parts (the Sprague-Grundy
//! theory is for normal play only), so a position is answered by two exact reductions, then
//! a search:
//!
//! - a token on a vertex without followers never moves: a position is the same game without
//!   it (the misère zero is the game without moves, and `0 + G = G`). With no movable token
//!   left, the player to move cannot move and wins: WIN, remoteness 0;
//! - one movable token (the others on vertices without followers) is read from the one-token
//!   misère table (`remoteness_table.rs`);
//! - otherwise the sum search of `position.rs` runs with its outcomes unknown: the closure
//!   follows every move (not only those that matter, which would need the outcomes), and the
//!   retrograde settling finds the outcome and remoteness of every position reached. A
//!   position the settling never reaches is a DRAW. The position budget, the work budget and
//!   the interrupt bound it as under normal play; a position whose closure does not complete
//!   within them has no answer at all ([`MisereOverBudget`]): unlike normal play, its outcome
//!   is not known either.

use super::analysis::Analysis;
use super::convention::PlayConvention;
use super::evaluation::VertexOutOfRange;
use super::graph::Digraph;
use super::interrupt::{Cancelled, Interrupt};
use super::position;
use super::remoteness::{AnalysisOptions, MoveAnalysis, PositionAnalysis};
use super::sum_search::{Seed, SumRules, SumSearch};

/// Why a position has no misère analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MisereError {
    /// A token is on a vertex that does not exist.
    #[error("{0}")]
    OutOfRange(#[from] VertexOutOfRange),
    /// The search did not complete within its budgets.
    #[error("{0}")]
    OverBudget(#[from] MisereOverBudget),
    /// The Addition-Subtraction game (split counts) has no misère analysis here.
    #[error("misère play is not supported for the Addition-Subtraction game (split counts)")]
    SplitCounts,
}

/// Misère play (see the module docs).
impl Analysis {
    /// Analyses the token-sliding position with one token on each entry of `tokens` under
    /// misère play: outcome, remoteness and every distinct move with the outcome for its
    /// mover and the remoteness of where it leads, best first (as
    /// [`Analysis::analyse_position`]); the nim-sum is 0, meaningless under misère play.
    /// Positions with at most one movable token are read from the one-token misère table
    /// (computed on first need); others are searched within `options`' budgets, beyond which
    /// nothing is answered ([`MisereError::OverBudget`]).
    pub fn analyse_position_misere(
        &self,
        tokens: &[u32],
        options: &AnalysisOptions,
    ) -> Result<PositionAnalysis, MisereError> {
        self.analyse_position_misere_interruptible(tokens, options, &Interrupt::new(), &mut || {})
            .expect("nothing else holds this interrupt")
    }

    /// [`Analysis::analyse_position_misere`], stopping with [`Cancelled`] once `interrupt` is
    /// raised (in the one-token table's computation, and as
    /// [`Analysis::analyse_position_interruptible`] in the search, calling `progress` alike).
    pub fn analyse_position_misere_interruptible(
        &self,
        tokens: &[u32],
        options: &AnalysisOptions,
        interrupt: &Interrupt,
        progress: &mut dyn FnMut(),
    ) -> Result<Result<PositionAnalysis, MisereError>, Cancelled> {
        if let Err(error) = self.evaluate_tokens(tokens) {
            return Ok(Err(error.into()));
        }
        let Some(table) = self.remoteness_table_as(PlayConvention::Misere, interrupt)? else {
            return Ok(Err(MisereError::SplitCounts));
        };
        let analysis = analyse_misere(
            &self.game.graph,
            table,
            tokens,
            options,
            Some(interrupt),
            progress,
        );
        interrupt.check()?;
        Ok(analysis.map_err(MisereError::from))
    }

    /// Whether the misère answer for `tokens` comes from theory alone (at most one token on a
    /// vertex with followers: the one-token table), without a search of the sum.
    pub fn misere_settled_by_theory(&self, tokens: &[u32]) -> bool {
        let graph = &self.game.graph;
        tokens
            .iter()
            .filter(|&&v| v < graph.vertex_count() && graph.out_degree(v) > 0)
            .nth(1)
            .is_none()
    }
}

/// The misère analysis of a position did not complete within its budgets (or its position
/// had more tokens than a search takes): nothing is known of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the misère outcome needs a search beyond the position budget of {budget} positions \
     ({positions_explored} explored)"
)]
pub struct MisereOverBudget {
    /// [`AnalysisOptions::position_budget`].
    pub budget: u64,
    /// Positions the search had visited when it stopped.
    pub positions_explored: u64,
}

/// Analyses a token-sliding position under misère play: outcome, remoteness and every
/// distinct move best first (as under normal play), the nim-sum 0. `table` is the one-token
/// misère table. Bounded and interruptible as `position::analyse_sliding`; once `interrupt`
/// is raised the answer is an error the caller discards.
pub(super) fn analyse_misere(
    graph: &Digraph,
    table: &[u32],
    tokens: &[u32],
    options: &AnalysisOptions,
    interrupt: Option<&Interrupt>,
    progress: &mut dyn FnMut(),
) -> Result<PositionAnalysis, MisereOverBudget> {
    let rules = SumRules {
        graph,
        convention: super::PlayConvention::Misere,
        outcome: None,
        outcome_after_slide: None,
    };
    let root = position::movable_tokens(graph, tokens);
    let mut search = SumSearch::new(&rules, table, root.len(), options, interrupt, progress);
    let root_seed = search.close(&root);
    // Every move's position is in the root's closure (or answered from the table), so
    // closing it again only finds it.
    let mut moves: Vec<(u32, u32, Seed)> = Vec::new();
    let mut followers = Vec::new();
    if root_seed != Seed::OverBudget {
        for (index, &from) in root.iter().enumerate() {
            if index > 0 && root[index - 1] == from {
                continue;
            }
            followers.clear();
            followers.extend_from_slice(graph.successors(from));
            followers.sort_unstable();
            followers.dedup();
            for &to in &followers {
                moves.push((from, to, search.close_child(&root, index, to)));
            }
        }
    }
    search.settle();
    let over = |search: &SumSearch<'_, '_>| MisereOverBudget {
        budget: options.position_budget,
        positions_explored: search.positions_searched(),
    };
    let outcome = search.outcome_of(root_seed).ok_or_else(|| over(&search))?;
    let mut analysed = Vec::with_capacity(moves.len());
    for &(from, to, seed) in &moves {
        let after = search.outcome_of(seed).ok_or_else(|| over(&search))?;
        analysed.push(MoveAnalysis {
            from,
            to,
            outcome: position::for_the_mover(after),
            remoteness: search.remoteness(seed),
        });
    }
    position::sort_best_first(&mut analysed);
    let total = analysed.len() as u64;
    analysed.truncate(options.max_moves as usize);
    Ok(PositionAnalysis {
        outcome,
        nim_sum: 0,
        remoteness: search.remoteness(root_seed),
        moves_omitted: total - analysed.len() as u64,
        positions_searched: search.positions_searched(),
        moves: analysed,
    })
}
