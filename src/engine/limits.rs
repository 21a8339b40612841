//! The bounds on the work the engine accepts, and why an analysis can fail.

use super::interrupt::Cancelled;
use super::loopy;
use super::order::Cycle;
use super::split;

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
    /// The [`super::Interrupt`] given to [`super::analyse_interruptible`] was raised before the analysis
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
