//! A game: the graph, and for the Addition-Subtraction game a split count per vertex.

use super::graph::{Digraph, GraphError};

/// A game: a graph, and for the Addition-Subtraction game a split count per vertex.
#[derive(Debug, Clone)]
pub struct Game {
    pub(super) graph: Digraph,
    pub(super) split_counts: Option<Vec<u32>>,
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
