//! The game engine: pure, synchronous, no I/O. It could be its own crate without edits.
//!
//! - [`graph`]: the CSR digraph, validated from untrusted input;
//! - [`order`]: topological order by iterative DFS, and cycle reports;
//! - [`sliding`]: Grundy values of token sliding on acyclic graphs;
//! - this module: [`Game`], [`analyse`] (the per-vertex table) and position evaluation.

pub mod graph;
pub mod order;
pub mod sliding;

pub use graph::{Digraph, GraphError};
pub use order::Cycle;

/// The outcome of a position for the player to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    Win,
    Lose,
    Draw,
}

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

    pub fn graph(&self) -> &Digraph {
        &self.graph
    }

    pub fn split_counts(&self) -> Option<&[u32]> {
        self.split_counts.as_deref()
    }
}

/// Why a game could not be analysed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    #[error("the graph has a cycle: {cycle} (only acyclic graphs are supported here)")]
    Cycle { cycle: Cycle },
}

/// Tunable bounds on the work the engine accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {}

impl Default for Limits {
    fn default() -> Self {
        Self {}
    }
}

/// The per-vertex values of a game, ready to evaluate positions.
#[derive(Debug, Clone)]
pub struct Analysis {
    game: Game,
    values: Vec<u64>,
}

/// Computes the value of every vertex. CPU-bound: O(V + E) for token sliding.
pub fn analyse(game: Game, _limits: &Limits) -> Result<Analysis, AnalysisError> {
    let order = order::successors_first_order(&game.graph)
        .map_err(|cycle| AnalysisError::Cycle { cycle })?;
    let values = sliding::grundy_table(&game.graph, &order);
    Ok(Analysis { game, values })
}

/// A position item referred to a vertex that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("vertex {vertex} is out of range (vertex_count {vertex_count})")]
pub struct VertexOutOfRange {
    /// Index of the item in the position.
    pub index: usize,
    pub vertex: u32,
    pub vertex_count: u32,
}

/// A move from a position, as returned by [`Analysis::best_move`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Move {
    /// Token sliding: move one unit of item `item_index` from `from` to its successor `to`.
    Slide { item_index: usize, from: u32, to: u32 },
    /// Addition-Subtraction: take one unit from `vertex` (the vertex of item `item_index`) and
    /// add one unit to each of `odd_targets` plus `2 * pair_count` units to `pair_target`.
    /// `odd_targets` are distinct successors in increasing order, and
    /// `odd_targets.len() + 2 * pair_count == K_vertex`.
    Split {
        item_index: usize,
        vertex: u32,
        odd_targets: Vec<u32>,
        pair_target: Option<u32>,
        pair_count: u32,
    },
}

/// The value of one vertex: a nimber, or `∞(K)` on a cyclic graph (K = the finite values
/// among its followers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VertexValue<'a> {
    Finite(u64),
    Infinite { finite_followers: &'a [u64] },
}

/// The verdict on one position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evaluation {
    pub outcome: Outcome,
    /// Xor of the finite values of the position's units.
    pub nim_sum: u64,
}

impl Analysis {
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Grundy value of every vertex.
    pub fn values(&self) -> &[u64] {
        &self.values
    }

    /// The value of `vertex`, or None when out of range.
    pub fn vertex_value(&self, vertex: u32) -> Option<VertexValue<'_>> {
        self.values.get(vertex as usize).map(|&v| VertexValue::Finite(v))
    }

    /// True when the graph has a directed cycle (values may be infinite).
    pub fn is_cyclic(&self) -> bool {
        false
    }

    /// Bytes held by the graph and the tables (for cache accounting).
    pub fn heap_bytes(&self) -> usize {
        self.game.graph.heap_bytes()
            + self.game.split_counts.as_ref().map_or(0, |k| k.capacity() * 4)
            + self.values.capacity() * 8
    }

    /// Largest finite value.
    pub fn max_value(&self) -> u64 {
        self.values.iter().copied().max().unwrap_or(0)
    }

    /// Evaluates a position given as `(vertex, count)` items: `count` units on `vertex`.
    /// Token lists are items with count 1; dense value vectors are `(v, values[v])`.
    pub fn evaluate<I>(&self, items: I) -> Result<Evaluation, VertexOutOfRange>
    where
        I: IntoIterator<Item = (u32, u64)>,
    {
        let vertex_count = self.game.graph.vertex_count();
        let mut nim_sum = 0u64;
        for (index, (vertex, count)) in items.into_iter().enumerate() {
            let value = *self
                .values
                .get(vertex as usize)
                .ok_or(VertexOutOfRange {
                    index,
                    vertex,
                    vertex_count,
                })?;
            if count & 1 == 1 {
                nim_sum ^= value;
            }
        }
        let outcome = if nim_sum == 0 {
            Outcome::Lose
        } else {
            Outcome::Win
        };
        Ok(Evaluation { outcome, nim_sum })
    }

    /// A winning move for a WIN position (None for LOSE). `items` must have passed
    /// [`Analysis::evaluate`], which produced `evaluation`. O(sum of out-degrees of the items).
    pub fn best_move(&self, items: &[(u32, u64)], evaluation: &Evaluation) -> Option<Move> {
        if evaluation.outcome != Outcome::Win {
            return None;
        }
        let graph = &self.game.graph;
        let nim_sum = evaluation.nim_sum;
        items
            .iter()
            .enumerate()
            .filter(|&(_, &(_, count))| count > 0)
            .find_map(|(item_index, &(from, _))| {
                let wanted = self.values[from as usize] ^ nim_sum;
                if wanted >= self.values[from as usize] {
                    return None;
                }
                let to = *graph
                    .successors(from)
                    .iter()
                    .find(|&&w| self.values[w as usize] == wanted)?;
                Some(Move::Slide {
                    item_index,
                    from,
                    to,
                })
            })
    }
}
