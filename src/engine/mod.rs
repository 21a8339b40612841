//! The game engine: pure, synchronous, no I/O. It could be its own crate without edits.
//!
//! - [`graph`]: the CSR digraph, validated from untrusted input;
//! - [`interrupt`]: cooperative cancellation of a long analysis;
//! - [`order`]: topological order by Kahn's algorithm, and cycle reports (a depth-first
//!   search names a cycle);
//! - [`sliding`]: Grundy values of token sliding on acyclic graphs;
//! - [`loopy`]: the generalized Sprague-Grundy function of token sliding on cyclic graphs;
//! - [`split`]: values of the Addition-Subtraction game (split counts), method chosen per vertex;
//! - [`remoteness`]: how many moves a token-sliding position lasts under optimal play, the
//!   one-token table and the analysis of a position with its moves (the sum search is the
//!   private `position` module);
//! - this module: [`Game`], [`analyse`] (the per-vertex table) and position evaluation.

#![warn(missing_docs)]

pub mod graph;
pub mod interrupt;
pub mod loopy;
pub mod order;
mod outcome;
mod position;
mod position_set;
mod prefetch;
pub mod remoteness;
pub mod sliding;
pub mod split;

use std::collections::HashMap;
use std::sync::Arc;

pub use graph::{Digraph, GraphError};
pub use interrupt::{Cancelled, Interrupt};
pub use order::Cycle;
pub use outcome::Outcome;
pub use remoteness::{
    AnalysisOptions, DEFAULT_POSITION_BUDGET, MoveAnalysis, PositionAnalysis, Remoteness,
};

/// A game: a graph, and for the Addition-Subtraction game a split count per vertex.
#[derive(Debug, Clone)]
pub struct Game {
    graph: Digraph,
    split_counts: Option<Vec<u32>>,
}

impl Game {
    /// Token sliding on `graph` (cycles allowed).
    pub fn token_sliding(graph: Digraph) -> Self {
        Self {
            graph,
            split_counts: None,
        }
    }

    /// The Addition-Subtraction game: `split_counts[v]` is `K_v`.
    pub fn with_split_counts(graph: Digraph, split_counts: Vec<u32>) -> Result<Self, GraphError> {
        if split_counts.len() != graph.vertex_count() as usize {
            return Err(GraphError::SplitCountLength {
                got: split_counts.len(),
                expected: graph.vertex_count() as usize,
            });
        }
        Ok(Self {
            graph,
            split_counts: Some(split_counts),
        })
    }

    /// The graph the game is played on.
    pub fn graph(&self) -> &Digraph {
        &self.graph
    }

    /// `K_v` per vertex for the Addition-Subtraction game, `None` for token sliding.
    pub fn split_counts(&self) -> Option<&[u32]> {
        self.split_counts.as_deref()
    }

    /// Bytes held by the graph and the split counts (for cache and store accounting).
    pub fn heap_bytes(&self) -> usize {
        self.graph.heap_bytes() + self.split_counts.as_ref().map_or(0, |k| k.capacity() * 4)
    }
}

/// Why a game could not be analysed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    /// A game with split counts on a graph with a cycle (the Addition-Subtraction game is
    /// defined on acyclic graphs only).
    #[error("the graph has a cycle: {cycle} (games with split counts must be acyclic)")]
    Cycle {
        /// One cycle of the graph.
        cycle: Cycle,
    },
    /// A vertex's value is too expensive or too large (Addition-Subtraction game).
    #[error("{0}")]
    Split(#[from] split::SplitError),
    /// Token sliding on a cyclic graph needed more work than [`Limits::cyclic_work_budget`].
    #[error("{0}")]
    CyclicWork(#[from] loopy::CyclicWorkExceeded),
    /// The [`Interrupt`] given to [`analyse_interruptible`] was raised before the analysis
    /// finished: nobody wants the result any more, so no table was built. Not the game's
    /// fault: the same game analyses normally with a fresh interrupt.
    #[error("{0}")]
    Cancelled(#[from] Cancelled),
}

impl From<loopy::LoopyStop> for AnalysisError {
    fn from(stop: loopy::LoopyStop) -> Self {
        match stop {
            loopy::LoopyStop::CyclicWork(exceeded) => Self::CyclicWork(exceeded),
            loopy::LoopyStop::Cancelled(cancelled) => Self::Cancelled(cancelled),
        }
    }
}

impl From<split::SplitStop> for AnalysisError {
    fn from(stop: split::SplitStop) -> Self {
        match stop {
            split::SplitStop::Split(error) => Self::Split(error),
            split::SplitStop::Cancelled(cancelled) => Self::Cancelled(cancelled),
        }
    }
}

/// Default [`Limits::cyclic_work_budget`]: 2^32 edge visits, a few seconds. Measured on one
/// core of the 2-core development machine (opt-level 2): 1.1 to 1.2 billion visits a second.
/// A transitive tournament of k = 2000 vertices plus one self-loop (2 million edges, values up
/// to 1998) needs about k^3 / 2 = 4 billion visits, 3.1 s, and stops after 1.7 s under a
/// budget of 2^31; a random cyclic graph of 10^6 vertices and 10^7 edges needs under 2E
/// (0.15 s), so random sparse graphs up to the default `--max-edges` fit.
pub const DEFAULT_CYCLIC_WORK_BUDGET: u64 = 1 << 32;

/// Tunable bounds on the work the engine accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Work allowed per vertex of a game with split counts.
    pub split: split::SplitLimits,
    /// Edge visits allowed to the generalized labelling of one cyclic token-sliding graph
    /// (see [`loopy::generalized_grundy_within`]); beyond, [`AnalysisError::CyclicWork`].
    pub cyclic_work_budget: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            split: split::SplitLimits::default(),
            cyclic_work_budget: DEFAULT_CYCLIC_WORK_BUDGET,
        }
    }
}

/// The per-vertex values of a game, ready to evaluate positions. The game is shared
/// ([`Analysis::shared_game`]): whoever else keeps it (the service's graph store) holds the
/// same graph, not a copy.
#[derive(Debug, Clone)]
pub struct Analysis {
    game: Arc<Game>,
    table: Table,
    /// The one-token remoteness of every vertex ([`remoteness::DRAW`] for draws); `None` for
    /// games with split counts.
    remoteness: Option<Vec<u32>>,
}

/// Per-vertex values, by the method that computed them.
#[derive(Debug, Clone)]
enum Table {
    /// Acyclic graph: one finite value per vertex.
    Acyclic(Vec<u64>),
    /// Token sliding on a graph with a cycle: the generalized Sprague-Grundy function.
    Loopy(loopy::LoopyTable),
    /// Addition-Subtraction game (acyclic): values and the method used per vertex.
    Split(split::SplitTable),
}

/// Computes the value of every vertex. CPU-bound: O(V + E) for acyclic token sliding,
/// O((Δ+1)(V + E)) for cyclic graphs (Δ the largest finite value), bounded by `limits`.
///
/// The acyclic path runs first (it is several times cheaper); Kahn's algorithm also detects
/// a cycle, and only then does the generalized labelling run. Never returns
/// [`AnalysisError::Cancelled`]: see [`analyse_interruptible`].
pub fn analyse(game: impl Into<Arc<Game>>, limits: &Limits) -> Result<Analysis, AnalysisError> {
    analyse_interruptible(game, limits, &Interrupt::new())
}

/// [`analyse`], stopping with [`AnalysisError::Cancelled`] soon after `interrupt` is raised:
/// every long loop (the topological order, the mex pass, the stages of the cyclic labelling,
/// the split-count methods) reads the flag every [`interrupt::CHECK_INTERVAL`] units of work.
pub fn analyse_interruptible(
    game: impl Into<Arc<Game>>,
    limits: &Limits,
    interrupt: &Interrupt,
) -> Result<Analysis, AnalysisError> {
    let game = game.into();
    interrupt.check()?;
    let (table, remoteness) = match &game.split_counts {
        None => match order::acyclic_order_interruptible(&game.graph, interrupt)? {
            Some(order) => {
                let (values, remoteness) =
                    sliding::grundy_and_remoteness_interruptible(&game.graph, &order, interrupt)?;
                (Table::Acyclic(values), Some(remoteness))
            }
            None => {
                let (table, predecessors) = loopy::generalized_grundy_and_predecessors(
                    &game.graph,
                    limits.cyclic_work_budget,
                    interrupt,
                )?;
                let remoteness = remoteness::cyclic_remoteness_interruptible(
                    &game.graph,
                    &predecessors,
                    interrupt,
                )?;
                (Table::Loopy(table), Some(remoteness))
            }
        },
        Some(split_counts) => {
            let order = match order::acyclic_order_interruptible(&game.graph, interrupt)? {
                Some(order) => order,
                None => {
                    let cycle = order::find_cycle(&game.graph)
                        .expect("Kahn's algorithm stalls only on a cycle");
                    return Err(AnalysisError::Cycle { cycle });
                }
            };
            let table = split::split_grundy_table_interruptible(
                &game.graph,
                split_counts,
                &order,
                &limits.split,
                interrupt,
            )?;
            (Table::Split(table), None)
        }
    };
    Ok(Analysis {
        game,
        table,
        remoteness,
    })
}

/// A position item referred to a vertex that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("vertex {vertex} is out of range (vertex_count {vertex_count})")]
pub struct VertexOutOfRange {
    /// Index of the item in the position.
    pub index: usize,
    /// The vertex named by the item.
    pub vertex: u32,
    /// The graph's vertex count: valid vertices are `0..vertex_count`.
    pub vertex_count: u32,
}

/// A move from a position, as returned by [`Analysis::best_move`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Move {
    /// Token sliding: move one unit of item `item_index` from `from` to its successor `to`.
    Slide {
        /// Index of the moved item in the position.
        item_index: usize,
        /// The vertex the unit leaves.
        from: u32,
        /// The successor of `from` the unit moves to.
        to: u32,
    },
    /// Addition-Subtraction: take one unit from `vertex` (the vertex of item `item_index`) and
    /// add one unit to each of `odd_targets` plus `2 * pair_count` units to `pair_target`.
    /// `odd_targets` are distinct successors in increasing order, and
    /// `odd_targets.len() + 2 * pair_count == K_vertex`.
    Split {
        /// Index of the moved item in the position.
        item_index: usize,
        /// The vertex the unit leaves.
        vertex: u32,
        /// Successors that get one unit each.
        odd_targets: Vec<u32>,
        /// The successor that gets the `2 * pair_count` padding units, if any.
        pair_target: Option<u32>,
        /// Pairs of units added to `pair_target`.
        pair_count: u32,
    },
}

/// The value of one vertex: a nimber, or `∞(K)` on a cyclic graph (K = the finite values
/// among its followers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VertexValue<'a> {
    /// A nimber.
    Finite(u64),
    /// `∞(K)`.
    Infinite {
        /// `K`, sorted and without repeats.
        finite_followers: &'a [u64],
    },
}

/// Split picks already found for one [`Analysis`], by `(vertex, target value)`: see
/// [`Analysis::best_move_memo`]. Holds at most [`MoveMemo::MAX_ENTRIES`] entries, and starts
/// over when full. Use one memo with one analysis only.
#[derive(Debug, Default)]
pub struct MoveMemo {
    split_picks: HashMap<(u32, u64), Option<split::SplitPicks>>,
}

impl MoveMemo {
    /// Bound on the entries: each holds at most `K` successors of its vertex.
    pub const MAX_ENTRIES: usize = 4096;

    fn split_picks(
        &mut self,
        vertex: u32,
        target: u64,
        find: impl FnOnce() -> Option<split::SplitPicks>,
    ) -> Option<split::SplitPicks> {
        if let Some(picks) = self.split_picks.get(&(vertex, target)) {
            return picks.clone();
        }
        if self.split_picks.len() >= Self::MAX_ENTRIES {
            self.split_picks.clear();
        }
        let picks = find();
        self.split_picks.insert((vertex, target), picks.clone());
        picks
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.split_picks.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.split_picks.is_empty()
    }
}

/// The verdict on one position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evaluation {
    /// The outcome for the player to move.
    pub outcome: Outcome,
    /// Xor of the finite values of the position's units.
    pub nim_sum: u64,
}

impl Analysis {
    /// The game that was analysed.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The game that was analysed, to keep beside the analysis without copying it.
    pub fn shared_game(&self) -> &Arc<Game> {
        &self.game
    }

    /// A winning move of the Addition-Subtraction game: a unit at `v` whose value has the
    /// nim-sum's top bit moves to an option worth `g(v) ^ nim_sum` (below `g(v)`, so it is an
    /// option by the mex), realised by the vertex's own method.
    fn split_move(
        &self,
        table: &split::SplitTable,
        items: &[(u32, u64)],
        nim_sum: u64,
        memo: &mut MoveMemo,
    ) -> Option<Move> {
        let split_counts = self.game.split_counts.as_deref()?;
        let (item_index, vertex, target) =
            items
                .iter()
                .enumerate()
                .find_map(|(item_index, &(vertex, count))| {
                    let value = table.values[vertex as usize];
                    let target = value ^ nim_sum;
                    (count & 1 == 1 && target < value).then_some((item_index, vertex, target))
                })?;
        let picks = memo.split_picks(vertex, target, || {
            split::find_split_picks(&self.game.graph, split_counts, table, vertex, target)
        })?;
        Some(Move::Split {
            item_index,
            vertex,
            odd_targets: picks.odd_targets,
            pair_target: picks.pair_target,
            pair_count: picks.pair_count,
        })
    }

    /// On a game with split counts, one winning move from each vertex of the position from
    /// which one exists (each vertex with a unit and an out-edge whose move can bring the
    /// nim-sum to 0), by increasing vertex, at most `max_moves` of them; and how many more
    /// vertices have one. Empty for other games and for LOSE positions. Each vertex costs one
    /// search of its picks (memoised in `memo`), never a listing of all of them.
    pub fn winning_split_moves(
        &self,
        items: &[(u32, u64)],
        evaluation: &Evaluation,
        memo: &mut MoveMemo,
        max_moves: u32,
    ) -> (Vec<Move>, u64) {
        let (Table::Split(table), Some(split_counts)) =
            (&self.table, self.game.split_counts.as_deref())
        else {
            return (Vec::new(), 0);
        };
        if evaluation.outcome != Outcome::Win {
            return (Vec::new(), 0);
        }
        let mut vertices: Vec<(u32, usize)> = items
            .iter()
            .enumerate()
            .filter(|&(_, &(vertex, count))| count > 0 && self.game.graph.out_degree(vertex) > 0)
            .map(|(item_index, &(vertex, _))| (vertex, item_index))
            .collect();
        vertices.sort_unstable();
        vertices.dedup_by_key(|&mut (vertex, _)| vertex);
        let mut moves = Vec::new();
        let mut omitted = 0;
        for (vertex, item_index) in vertices {
            // Moving a unit off `vertex` flips its parity (its value leaves or joins the
            // xor); the picks must make up the rest.
            let target = table.values[vertex as usize] ^ evaluation.nim_sum;
            let Some(picks) = memo.split_picks(vertex, target, || {
                split::find_split_picks(&self.game.graph, split_counts, table, vertex, target)
            }) else {
                continue;
            };
            if moves.len() >= max_moves as usize {
                omitted += 1;
                continue;
            }
            moves.push(Move::Split {
                item_index,
                vertex,
                odd_targets: picks.odd_targets,
                pair_target: picks.pair_target,
                pair_count: picks.pair_count,
            });
        }
        (moves, omitted)
    }

    /// Value of every vertex; [`loopy::INFINITE`] marks an infinite vertex.
    pub fn values(&self) -> &[u64] {
        match &self.table {
            Table::Acyclic(values) | Table::Split(split::SplitTable { values, .. }) => values,
            Table::Loopy(table) => table.values(),
        }
    }

    /// The generalized Sprague-Grundy table, when the graph is cyclic.
    pub fn loopy_table(&self) -> Option<&loopy::LoopyTable> {
        match &self.table {
            Table::Acyclic(_) | Table::Split(_) => None,
            Table::Loopy(table) => Some(table),
        }
    }

    /// The value of `vertex`, or None when out of range.
    pub fn vertex_value(&self, vertex: u32) -> Option<VertexValue<'_>> {
        let value = *self.values().get(vertex as usize)?;
        Some(match self.loopy_table() {
            Some(table) if value == loopy::INFINITE => VertexValue::Infinite {
                finite_followers: table.infinite_followers(vertex),
            },
            _ => VertexValue::Finite(value),
        })
    }

    /// True when the graph has a directed cycle (values may be infinite).
    pub fn is_cyclic(&self) -> bool {
        matches!(self.table, Table::Loopy(_))
    }

    /// Bytes held by the graph and the tables (for cache accounting).
    pub fn heap_bytes(&self) -> usize {
        self.game.heap_bytes()
            + match &self.table {
                Table::Acyclic(values) => values.capacity() * 8,
                Table::Split(table) => table.values.capacity() * 8 + table.methods.capacity(),
                Table::Loopy(table) => table.heap_bytes(),
            }
            + self
                .remoteness
                .as_ref()
                .map_or(0, |table| table.capacity() * 4)
    }

    /// Largest finite value.
    pub fn max_value(&self) -> u64 {
        self.values()
            .iter()
            .copied()
            .filter(|&v| v != loopy::INFINITE)
            .max()
            .unwrap_or(0)
    }

    /// Evaluates a position given as `(vertex, count)` items: `count` units on `vertex`.
    /// Token lists are items with count 1; dense value vectors are `(v, values[v])`.
    pub fn evaluate(&self, items: &[(u32, u64)]) -> Result<Evaluation, VertexOutOfRange> {
        self.evaluate_units(items.iter().copied())
    }

    /// Evaluates a position given as a token list (one unit per entry): the same as
    /// [`Analysis::evaluate`] with count-1 items, without building them.
    pub fn evaluate_tokens(&self, tokens: &[u32]) -> Result<Evaluation, VertexOutOfRange> {
        self.evaluate_units(tokens.iter().map(|&vertex| (vertex, 1)))
    }

    /// The one evaluation path: checks each vertex and folds it in, in one pass and without
    /// allocating. Reports the first out-of-range vertex.
    fn evaluate_units(
        &self,
        units: impl Iterator<Item = (u32, u64)>,
    ) -> Result<Evaluation, VertexOutOfRange> {
        let vertex_count = self.game.graph.vertex_count();
        let out_of_range = |index, vertex| VertexOutOfRange {
            index,
            vertex,
            vertex_count,
        };
        match &self.table {
            Table::Acyclic(values) | Table::Split(split::SplitTable { values, .. }) => {
                let mut nim_sum = 0;
                for (index, (vertex, count)) in units.enumerate() {
                    let value = values
                        .get(vertex as usize)
                        .ok_or_else(|| out_of_range(index, vertex))?;
                    if count & 1 == 1 {
                        nim_sum ^= value;
                    }
                }
                Ok(Evaluation {
                    outcome: Outcome::of_nim_sum(nim_sum),
                    nim_sum,
                })
            }
            Table::Loopy(table) => {
                let mut summary = loopy::SumSummary::default();
                for (index, (vertex, count)) in units.enumerate() {
                    if vertex >= vertex_count {
                        return Err(out_of_range(index, vertex));
                    }
                    summary.add(table, vertex, count);
                }
                Ok(Evaluation {
                    outcome: summary.outcome(table),
                    nim_sum: summary.nim_sum,
                })
            }
        }
    }

    /// A winning move for a WIN position, a draw-keeping move for a DRAW position (when there
    /// is any move), None for LOSE. `items` must have passed [`Analysis::evaluate`], which
    /// produced `evaluation`. O(sum of out-degrees of the items), no pass over the graph, except
    /// on split-count games: see [`Analysis::best_move_memo`].
    pub fn best_move(&self, items: &[(u32, u64)], evaluation: &Evaluation) -> Option<Move> {
        self.best_move_memo(items, evaluation, &mut MoveMemo::default())
    }

    /// [`Analysis::best_move`], remembering in `memo` the split picks it finds. A split move
    /// reruns the method of its vertex (up to the per-vertex budget, 2^26 steps by default),
    /// so callers answering many positions of one game keep one memo for all of them.
    pub fn best_move_memo(
        &self,
        items: &[(u32, u64)],
        evaluation: &Evaluation,
        memo: &mut MoveMemo,
    ) -> Option<Move> {
        if evaluation.outcome == Outcome::Lose {
            return None;
        }
        let graph = &self.game.graph;
        let values = match &self.table {
            Table::Acyclic(values) => values,
            Table::Split(table) => return self.split_move(table, items, evaluation.nim_sum, memo),
            Table::Loopy(table) => {
                let (item_index, from, to) = loopy::loopy_move(graph, table, items)?;
                return Some(Move::Slide {
                    item_index,
                    from,
                    to,
                });
            }
        };
        let nim_sum = evaluation.nim_sum;
        items
            .iter()
            .enumerate()
            .filter(|&(_, &(_, count))| count > 0)
            .find_map(|(item_index, &(from, _))| {
                let wanted = values[from as usize] ^ nim_sum;
                if wanted >= values[from as usize] {
                    return None;
                }
                let to = *graph
                    .successors(from)
                    .iter()
                    .find(|&&w| values[w as usize] == wanted)?;
                Some(Move::Slide {
                    item_index,
                    from,
                    to,
                })
            })
    }
}

/// Remoteness and position analysis (see [`remoteness`]).
impl Analysis {
    /// The remoteness of one token on `vertex`; `None` for a DRAW, a vertex out of range, or
    /// a game with split counts.
    pub fn remoteness(&self, vertex: u32) -> Option<u32> {
        let remoteness = *self.remoteness.as_ref()?.get(vertex as usize)?;
        (remoteness != remoteness::DRAW).then_some(remoteness)
    }

    /// The remoteness of one token on every vertex, [`remoteness::DRAW`] for draws; `None` for a game
    /// with split counts.
    pub fn remoteness_table(&self) -> Option<&[u32]> {
        self.remoteness.as_deref()
    }

    /// Analyses the token-sliding position with one token on each entry of `tokens` (repeats
    /// allowed): outcome, nim-sum, remoteness, and every distinct move `(from, to)` with the
    /// outcome for its mover and the remoteness of where it leads, best first.
    ///
    /// One token is answered from the table. Several tokens are a sum whose remoteness is
    /// searched exactly over its positions, sharing one memo and
    /// [`AnalysisOptions::position_budget`] between the position and its moves; beyond the
    /// budget a remoteness is [`Remoteness::OverBudget`], while outcomes stay exact (they come
    /// from the table). For a game with split counts only the outcome and nim-sum are
    /// answered (see the module docs).
    pub fn analyse_position(
        &self,
        tokens: &[u32],
        options: &AnalysisOptions,
    ) -> Result<PositionAnalysis, VertexOutOfRange> {
        let evaluation = self.evaluate_tokens(tokens)?;
        let Some(table) = self.remoteness.as_deref() else {
            return Ok(PositionAnalysis {
                outcome: evaluation.outcome,
                nim_sum: evaluation.nim_sum,
                remoteness: Remoteness::UnavailableForSplitCounts,
                moves: Vec::new(),
                moves_omitted: 0,
            });
        };
        let outcome = |position: &[u32]| {
            let tokens = position.iter().filter(|&&v| v != position::SINK);
            self.evaluate_units(tokens.map(|&v| (v, 1)))
                .expect("positions hold vertices of the graph")
                .outcome
        };
        let rules = position::SumRules {
            graph: &self.game.graph,
            outcome: &outcome,
        };
        Ok(position::analyse_sliding(
            &rules,
            table,
            tokens,
            (evaluation.outcome, evaluation.nim_sum),
            options,
        ))
    }
}
