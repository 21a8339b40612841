//! What the engine's property tests share: the oracle's view of a graph, and the engine's
//! answers as proptest case results, next to the oracles' verdicts.

use grundy::engine::{Analysis, Evaluation, Outcome};
use proptest::test_runner::TestCaseError;

use super::oracle::Verdict;

/// Token-sliding positions are checked with up to this many tokens. Four, not three, so that
/// sums with more than three tokens on vertices of infinite value (which an implementation may
/// count only up to a cap) are covered.
pub const MAX_TOKENS: usize = 4;

/// Out-neighbour lists in edge order, the oracle's view of the graph.
pub fn adjacency(vertex_count: u32, edges: &[(u32, u32)]) -> Vec<Vec<u32>> {
    let mut adjacency = vec![Vec::new(); vertex_count as usize];
    for &(from, to) in edges {
        adjacency[from as usize].push(to);
    }
    adjacency
}

pub fn expected_outcome(verdict: Verdict) -> Outcome {
    match verdict {
        Verdict::Win => Outcome::Win,
        Verdict::Lose => Outcome::Lose,
        Verdict::Draw => Outcome::Draw,
    }
}

pub fn evaluate(analysis: &Analysis, items: &[(u32, u64)]) -> Result<Evaluation, TestCaseError> {
    analysis
        .evaluate(items)
        .map_err(|error| TestCaseError::fail(format!("evaluate({items:?}) refused: {error}")))
}
