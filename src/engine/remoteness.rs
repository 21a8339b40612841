//! Remoteness of token-sliding positions: how many moves remain when the winner ends the game
//! as soon as possible and the loser holds out as long as possible (C.A.B. Smith, 1966).
//!
//! A position without moves has remoteness 0 and is lost. A WIN position has remoteness
//! `1 + min` over its moves to LOSE positions; a LOSE position `1 + max` over all its moves
//! (every one leads to a WIN position). A DRAW has none. So remoteness is even exactly for
//! LOSE positions: the table below needs no Grundy values, and its parity is the outcome.
//!
//! - One token, acyclic graph: in successors-first order, one pass after the Grundy values,
//!   on first need ([`acyclic_remoteness_interruptible`]).
//! - One token, cyclic graph: a retrograde pass from the vertices without followers over the
//!   predecessor lists of the generalized labelling (`cyclic_remoteness_interruptible`).
//!   A FIFO queue settles vertices in non-decreasing remoteness, so a WIN vertex settled by
//!   its first LOSE follower gets the least, a LOSE vertex settled by its last WIN follower
//!   the largest. Vertices never settled are the DRAWs.
//! - Several tokens: remoteness is not a function of the tokens' remotenesses; it is searched
//!   over the positions of the sum (`position.rs`), within a budget of positions.
//!
//! # Public API, for callers
//!
//! - [`super::Analysis::remoteness`] and [`super::Analysis::remoteness_table`]: the one-token table,
//!   computed by [`super::analyse`] for token sliding ([`DRAW`] marks draws; none for games
//!   with split counts).
//! - [`super::Analysis::analyse_position`] with [`AnalysisOptions`]: a [`PositionAnalysis`], i.e. the
//!   outcome, nim-sum, remoteness of a token list and every distinct move with its outcome
//!   and remoteness, best first, at most [`AnalysisOptions::max_moves`] of them.
//!
//! Games with split counts (the Addition-Subtraction game) have no remoteness here: their
//! analysis carries the outcome and nim-sum, [`Remoteness::UnavailableForSplitCounts`] and no
//! moves; [`super::Analysis::best_move`] gives their winning move.

use super::convention::PlayConvention;
use super::graph::Digraph;
use super::interrupt::{Cancelled, Interrupt};
use super::loopy::Predecessors;
use super::outcome::Outcome;
use super::prefetch::prefetch_ahead;

pub use super::convention::DRAW;

/// Default [`AnalysisOptions::position_budget`]: a million positions of a sum, some 30 bytes
/// each plus 4 per token, besides the edges out of their vertices.
pub const DEFAULT_POSITION_BUDGET: u64 = 1_000_000;

/// Default [`AnalysisOptions::work_budget`]: 2^24 units (a unit is a token copied or
/// compared; a position of `k` tokens generated costs `k + 8`), for the closures and as much
/// again for the settling: 0.1-0.3 s of one core on the slowest searches measured (random
/// graphs of 10^3-10^5 vertices, sums of 2 to 1,000 tokens: `examples/analysis_cost.rs`) and
/// a peak of some 40 MiB; four times the budget took 1-3 s there.
pub const DEFAULT_WORK_BUDGET: u64 = 1 << 24;

/// What [`super::Analysis::analyse_position`] may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnalysisOptions {
    /// Positions of the sum the remoteness search may visit, for the position and all its
    /// moves together (one shared memo). Positions with fewer than two movable tokens are
    /// answered from the table and cost nothing.
    pub position_budget: u64,
    /// Work units the search may spend, for the position and all its moves together (and as
    /// many again to settle them): what bounds its time and memory whatever the width of the
    /// position and the out-degrees of the graph. Over it, as over the position budget, a
    /// remoteness is [`Remoteness::OverBudget`].
    pub work_budget: u64,
    /// Moves listed at most, the best ones; the rest are counted in
    /// [`PositionAnalysis::moves_omitted`].
    pub max_moves: u32,
}

impl Default for AnalysisOptions {
    /// [`DEFAULT_POSITION_BUDGET`], [`DEFAULT_WORK_BUDGET`] and every move.
    fn default() -> Self {
        Self {
            position_budget: DEFAULT_POSITION_BUDGET,
            work_budget: DEFAULT_WORK_BUDGET,
            max_moves: u32::MAX,
        }
    }
}

/// The remoteness of one position, or why there is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remoteness {
    /// Moves until the game ends under optimal play: even for LOSE, odd for WIN positions.
    Known(u64),
    /// The position is a DRAW: play goes on forever.
    Draw,
    /// The position is WIN or LOSE, but the search of its sum needed more positions or more
    /// work than its budgets.
    OverBudget {
        /// [`AnalysisOptions::position_budget`].
        budget: u64,
        /// Positions the query had visited when it stopped.
        positions_explored: u64,
    },
    /// Games with split counts: the engine computes no remoteness for them.
    UnavailableForSplitCounts,
}

impl Remoteness {
    /// The number of moves, when known.
    pub fn known(self) -> Option<u64> {
        match self {
            Self::Known(moves) => Some(moves),
            _ => None,
        }
    }
}

/// One distinct move of a position: a token on `from` slides to its follower `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveAnalysis {
    /// The vertex the token leaves.
    pub from: u32,
    /// The follower it moves to.
    pub to: u32,
    /// The outcome for the player who makes the move: WIN when it leads to a LOSE position,
    /// LOSE when it leads to a WIN position, DRAW to a DRAW.
    pub outcome: Outcome,
    /// The remoteness of the position the move leads to.
    pub remoteness: Remoteness,
}

/// Everything [`super::Analysis::analyse_position`] says about a position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PositionAnalysis {
    /// The outcome for the player to move (as [`super::Analysis::evaluate_tokens`]).
    pub outcome: Outcome,
    /// Xor of the finite values of the tokens (as [`super::Analysis::evaluate_tokens`]).
    pub nim_sum: u64,
    /// The remoteness of the position.
    pub remoteness: Remoteness,
    /// Distinct moves, best first: winning moves by increasing remoteness, then drawing
    /// moves, then losing moves by decreasing remoteness; ties by `(from, to)`, and a move of
    /// unknown remoteness last in its class. Empty for games with split counts.
    pub moves: Vec<MoveAnalysis>,
    /// Moves left out by [`AnalysisOptions::max_moves`].
    pub moves_omitted: u64,
    /// Positions of the sum the search indexed (those the one-token table answers are not
    /// counted): 0 when no search was needed.
    pub positions_searched: u64,
}

/// The remoteness of every vertex of an acyclic graph, visiting vertices in `order`
/// (successors first), stopping with [`Cancelled`] once `interrupt` is raised.
///
/// One pass, O(V + E), reading each follower's remoteness once: a follower with an even
/// remoteness is a LOSE position, so the least even one (if any) decides a WIN vertex, else
/// the largest decides a LOSE vertex. Prefetches as the Grundy pass does. The one-token table
/// of an acyclic graph is this pass, run on first need (`remoteness_table.rs`).
pub fn acyclic_remoteness_interruptible(
    graph: &Digraph,
    order: &[u32],
    interrupt: &Interrupt,
) -> Result<Vec<u32>, Cancelled> {
    acyclic_remoteness_as(graph, order, PlayConvention::Normal, interrupt)
}

/// [`acyclic_remoteness_interruptible`] under either play convention: the same pass, the
/// LOSE followers being those of the convention's losing parity (odd under misère play, where
/// a vertex without followers is a WIN of remoteness 0).
pub fn acyclic_remoteness_as(
    graph: &Digraph,
    order: &[u32],
    convention: PlayConvention,
    interrupt: &Interrupt,
) -> Result<Vec<u32>, Cancelled> {
    let mut poller = interrupt.poller();
    let mut remoteness = vec![0u32; graph.vertex_count() as usize];
    let offsets = graph.offsets();
    let targets = graph.targets();
    let losing_parity = convention.losing_parity();
    for (position, &vertex) in order.iter().enumerate() {
        prefetch_ahead(order, position, offsets, targets);
        let successors = graph.successors(vertex);
        remoteness[vertex as usize] = from_followers(&remoteness, successors, losing_parity);
        poller.tick(successors.len() as u64 + 1)?;
    }
    Ok(remoteness)
}

/// The remoteness of a vertex of an acyclic graph whose `successors` have their entries in
/// `remoteness` already; LOSE remotenesses have parity `losing_parity`.
#[inline(always)]
fn from_followers(remoteness: &[u32], successors: &[u32], losing_parity: u32) -> u32 {
    let mut fold = FollowerFold::new(losing_parity);
    for &w in successors {
        fold.add(remoteness[w as usize]);
    }
    fold.remoteness(!successors.is_empty())
}

/// The remoteness of a vertex from those of its followers, one at a time: 1 + the least one
/// of the losing parity (a LOSE follower) if any, else 1 + the largest, 0 without followers.
#[derive(Debug, Clone, Copy)]
struct FollowerFold {
    least_losing: u32,
    largest: u32,
    losing_parity: u32,
}

impl FollowerFold {
    #[inline(always)]
    fn new(losing_parity: u32) -> Self {
        Self {
            least_losing: u32::MAX,
            largest: 0,
            losing_parity,
        }
    }

    /// Folds in a follower of remoteness `r` (never [`DRAW`]: acyclic graphs only).
    #[inline(always)]
    fn add(&mut self, r: u32) {
        // Branch-free: an r of the winning parity becomes u32::MAX and never wins the min.
        let winning = (r & 1) ^ self.losing_parity;
        self.least_losing = self.least_losing.min(r | winning.wrapping_neg());
        self.largest = self.largest.max(r);
    }

    /// The vertex's remoteness; `has_followers` tells a vertex without moves from the others.
    #[inline(always)]
    fn remoteness(self, has_followers: bool) -> u32 {
        if self.least_losing != u32::MAX {
            self.least_losing + 1
        } else {
            self.largest + u32::from(has_followers)
        }
    }
}

/// The one-token remoteness table of `graph` under `convention`, [`DRAW`] for draws, as
/// [`super::Analysis`] computes it on first need: Kahn's order and the follower fold on an
/// acyclic graph, the predecessor lists and the retrograde pass on a cyclic one.
pub fn one_token_table(
    graph: &Digraph,
    convention: PlayConvention,
    interrupt: &Interrupt,
) -> Result<Vec<u32>, Cancelled> {
    match super::order::acyclic_order_interruptible(graph, interrupt)? {
        Some(order) => acyclic_remoteness_as(graph, &order, convention, interrupt),
        None => cyclic_remoteness(graph, convention, interrupt),
    }
}

/// The remoteness of every vertex of any `graph` under `convention`, [`DRAW`]
/// for draws: the predecessor lists, then the retrograde pass.
pub(super) fn cyclic_remoteness(
    graph: &Digraph,
    convention: PlayConvention,
    interrupt: &Interrupt,
) -> Result<Vec<u32>, Cancelled> {
    interrupt.check()?;
    let predecessors = Predecessors::of(graph, &mut interrupt.poller())?;
    cyclic_remoteness_interruptible(graph, &predecessors, convention, interrupt)
}

/// The remoteness of every vertex of any graph, [`DRAW`] for draws, by retrograde analysis
/// over `predecessors` (the edges into each vertex, one entry per edge), stopping with
/// [`Cancelled`] once `interrupt` is raised. O(V + E), two `u32` per vertex besides the
/// result (the FIFO queue is the settling order itself).
///
/// Under misère play (`convention`) the vertices without followers are WINs of remoteness 0
/// instead of LOSEs: the same pass, with the losing parity flipped.
pub(super) fn cyclic_remoteness_interruptible(
    graph: &Digraph,
    predecessors: &Predecessors,
    convention: PlayConvention,
    interrupt: &Interrupt,
) -> Result<Vec<u32>, Cancelled> {
    let losing_parity = convention.losing_parity();
    let mut poller = interrupt.poller();
    let n = graph.vertex_count();
    let mut remoteness = vec![DRAW; n as usize];
    // Out-edges to followers not yet settled as WIN: a LOSE vertex is settled at zero.
    let mut unsettled: Vec<u32> = (0..n).map(|v| graph.out_degree(v)).collect();
    let mut queue: Vec<u32> = (0..n).filter(|&v| unsettled[v as usize] == 0).collect();
    for &v in &queue {
        remoteness[v as usize] = 0;
    }
    let mut head = 0;
    while let Some(&settled) = queue.get(head) {
        head += 1;
        let next = remoteness[settled as usize] + 1;
        let settled_loses = remoteness[settled as usize] & 1 == losing_parity;
        let sources = predecessors.of_vertex(settled);
        for &p in sources {
            let p = p as usize;
            if remoteness[p] != DRAW {
                continue;
            }
            if settled_loses {
                remoteness[p] = next;
                queue.push(p as u32);
            } else {
                unsettled[p] -= 1;
                if unsettled[p] == 0 {
                    remoteness[p] = next;
                    queue.push(p as u32);
                }
            }
        }
        poller.tick(sources.len() as u64 + 1)?;
    }
    Ok(remoteness)
}

#[cfg(test)]
mod tests {
    use super::super::order::successors_first_order;
    use super::super::{Analysis, Game, Limits, analyse};
    use super::*;

    fn analysis(n: u32, edges: &[(u32, u32)]) -> Analysis {
        let graph = Digraph::from_edges(n, edges).unwrap();
        analyse(Game::token_sliding(graph), &Limits::default()).unwrap()
    }

    #[test]
    fn acyclic_table_of_the_sample_graph() {
        // 0 -> {1, 2}, 2 -> 3: 1 and 3 are lost at once, 2 wins in one, 0 wins in one.
        let a = analysis(4, &[(0, 1), (0, 2), (2, 3)]);
        assert_eq!(a.remoteness_table(), Some(&[1, 0, 1, 0][..]));
        assert_eq!(a.remoteness(4), None);
    }

    #[test]
    fn lose_delays_through_the_longest_win() {
        // 0 -> {1, 3}; 1 -> 2; 3 -> 4 -> 5 -> 6: 0 is LOSE (both followers win), and the
        // loser picks 3, which wins in 1 + r(4) = 1 + 2 = 3, so r(0) = 4.
        let a = analysis(7, &[(0, 1), (0, 3), (1, 2), (3, 4), (4, 5), (5, 6)]);
        assert_eq!(a.remoteness_table(), Some(&[4, 1, 0, 3, 2, 1, 0][..]));
    }

    #[test]
    fn cyclic_table_marks_draws() {
        // 0 <-> 1 -> 2 is finite: 2 LOSE 0, 1 WIN 1, 0 LOSE 2 (its only move is to 1).
        let a = analysis(3, &[(0, 1), (1, 0), (1, 2)]);
        assert_eq!(a.remoteness_table(), Some(&[2, 1, 0][..]));
        // A lone self-loop draws; 0 -> {0, 1} wins at once.
        let a = analysis(3, &[(0, 0), (0, 1), (2, 2)]);
        assert_eq!(a.remoteness_table(), Some(&[1, 0, DRAW][..]));
        assert_eq!(a.remoteness(2), None);
    }

    #[test]
    fn parity_matches_the_grundy_table() {
        let edges: Vec<(u32, u32)> = (0..200u32)
            .flat_map(|v| [(v, (v * 7 + 3) % 200), (v, (v * 13 + 1) % 200)])
            .filter(|&(a, b)| a > b)
            .collect();
        let graph = Digraph::from_edges(200, &edges).unwrap();
        let order = successors_first_order(&graph).unwrap();
        let table = acyclic_remoteness_interruptible(&graph, &order, &Interrupt::new()).unwrap();
        let values = super::super::sliding::grundy_table(&graph, &order);
        for v in 0..200 {
            assert_eq!(table[v].is_multiple_of(2), values[v] == 0, "vertex {v}");
        }
    }

    #[test]
    fn chain_of_a_million() {
        let n = 1_000_000u32;
        let edges: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
        let a = analysis(n, &edges);
        assert_eq!(a.remoteness(0), Some(n - 1));
        let cycle: Vec<(u32, u32)> = edges.iter().copied().chain([(n - 1, n - 1)]).collect();
        assert_eq!(analysis(n, &cycle).remoteness(0), None);
    }

    #[test]
    fn raised_interrupt_stops_the_passes() {
        let n = 1_000_000u32;
        let edges: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
        let graph = Digraph::from_edges(n, &edges).unwrap();
        let order = successors_first_order(&graph).unwrap();
        let interrupt = Interrupt::new();
        interrupt.interrupt();
        assert_eq!(
            acyclic_remoteness_interruptible(&graph, &order, &interrupt),
            Err(Cancelled)
        );
    }
}
