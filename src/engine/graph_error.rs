//! Why a wire graph was refused: the one error type of the graph's constructors
//! ([`super::graph`]) and of the targets checked as they arrive ([`super::targets`]), which
//! both depend on it and not on each other's errors.

/// Why a graph was rejected. Every variant names the offending field and index.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    /// A graph needs at least one vertex.
    #[error("vertex_count must be at least 1")]
    NoVertices,
    /// `out_degrees` does not have one entry per vertex.
    #[error("out_degrees has {got} entries, expected vertex_count = {expected}")]
    DegreeCount {
        /// Entries given.
        got: usize,
        /// The vertex count.
        expected: usize,
    },
    /// `targets` does not have one entry per edge.
    #[error("targets has {got} entries, expected the sum of out_degrees = {expected}")]
    TargetCount {
        /// Entries given.
        got: usize,
        /// The sum of the out-degrees.
        expected: u64,
    },
    /// An edge endpoint names no vertex.
    #[error("targets[{index}] = {target} is out of range (vertex_count {vertex_count})")]
    TargetOutOfRange {
        /// Index of the target (or of the edge, for an edge list).
        index: usize,
        /// The endpoint given.
        target: u32,
        /// Valid endpoints are `0..vertex_count`.
        vertex_count: u32,
    },
    /// More edges than [`MAX_EDGES`](super::graph::MAX_EDGES).
    #[error("the graph has {edges} edges, more than the engine's limit of {limit}")]
    TooManyEdges {
        /// Edges given.
        edges: u64,
        /// [`MAX_EDGES`](super::graph::MAX_EDGES).
        limit: u64,
    },
    /// `split_counts` does not have one entry per vertex.
    #[error("split_counts has {got} entries, expected vertex_count = {expected}")]
    SplitCountLength {
        /// Entries given.
        got: usize,
        /// The vertex count.
        expected: usize,
    },
}
