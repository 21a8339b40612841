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
//! - `game`: [`Game`]; `limits`: [`Limits`] and [`AnalysisError`]; `outcome`: [`Outcome`];
//!   `convention`: [`PlayConvention`], normal or misère play;
//! - `misere`: positions under misère play (the player who cannot move wins): one-token table
//!   and the sum search with its outcomes unknown;
//! - `analysis`: [`analyse`], the per-vertex table ([`Analysis`]) and a vertex's value;
//!   `remoteness_table`: its one-token remoteness, on acyclic graphs computed on first need;
//! - `evaluation`: positions: their verdict, a winning move, and their analysis;
//! - `targets`: [`CheckedTargets`], a graph's targets checked piece by piece as they arrive;
//! - `graph_error`: [`GraphError`], why either refused a graph;
//! - `huge_pages`: the hint that backs a large graph's CSR arrays with 2 MiB pages.
//!
//! This module only declares the modules and re-exports the engine's API.

#![warn(missing_docs)]

mod analysis;
mod convention;
mod evaluation;
mod game;
pub mod graph;
mod graph_error;
pub(crate) mod huge_pages;
pub mod interrupt;
mod limits;
pub mod loopy;
mod misere;
pub mod order;
mod outcome;
mod position;
mod position_set;
mod prefetch;
pub mod remoteness;
mod remoteness_table;
pub mod sliding;
pub mod split;
mod sum_search;
mod targets;

pub use analysis::{Analysis, VertexValue, analyse, analyse_interruptible};
pub use convention::PlayConvention;
pub use evaluation::{Evaluation, Move, MoveMemo, VertexOutOfRange};
pub use game::Game;
pub use graph::{Digraph, GraphError};
pub use interrupt::{Cancelled, Interrupt, RaiseOnDrop};
pub use limits::{AnalysisError, DEFAULT_CYCLIC_WORK_BUDGET, Limits};
pub use misere::{MisereError, MisereOverBudget};
pub use order::Cycle;
pub use outcome::Outcome;
pub use remoteness::{
    AnalysisOptions, DEFAULT_POSITION_BUDGET, DEFAULT_WORK_BUDGET, MoveAnalysis, PositionAnalysis,
    Remoteness,
};
pub use targets::CheckedTargets;
