//! Token sliding on graphs with cycles: the generalized Sprague-Grundy function `γ`
//! (C.A.B. Smith, 1966; A.S. Fraenkel and Y. Yesha, 1986), outcomes of sums, and moves.
//!
//! `γ(v)` is a finite nimber or `∞(K)`, where `K` is the set of finite values among the
//! followers of `v`. Finite vertices also carry a counter `c`, the order in which they were
//! labelled. `γ` is the unique function with, for every vertex `u`:
//! - A: if `γ(u) = a` is finite, no follower has value `a` and every `b < a` is the value of
//!   some follower;
//! - B: if `γ(u) = a` is finite, every follower `v` with a larger value or `∞` has a follower
//!   `w` with `γ(w) = a` and `c(w) < c(u)`: raising a token from `u` can be reversed, and the
//!   counter makes sure reversals cannot go on forever;
//! - C: if `γ(u) = ∞(K)`, some follower has `γ = ∞(L)` with `mex K ∉ L`: that follower could
//!   not be reversed, which is why `u` cannot take the value `mex K`.
//!
//! For a sum with `b` the xor of its finite tokens: all tokens finite, LOSE iff `b == 0`;
//! exactly one token at `∞(K)`, WIN iff `b ∈ K`, else DRAW; two or more infinite tokens, DRAW.
//!
//! On an acyclic graph `γ` is the ordinary Grundy function. Callers keep the cheaper acyclic
//! path ([`super::order::successors_first_order`] and [`super::sliding::grundy_table`]) and come
//! here only when that path reports a cycle.

mod labelling;
mod moves;
#[cfg(test)]
mod tests;

use super::graph::Digraph;
use super::interrupt::{Cancelled, Interrupt};
pub(super) use labelling::Predecessors;
use labelling::{Labelling, infinite_follower_sets, label_vertices};
pub(super) use moves::SumSummary;
pub use moves::loopy_move;

/// The value of an infinite vertex in [`LoopyTable::values`], and its [`LoopyTable::counter`].
pub const INFINITE: u64 = u64::MAX;

/// Stored counter of an infinite vertex: counters are labelling ranks `< V <= u32::MAX`.
const NO_COUNTER: u32 = u32::MAX;

/// The generalized Sprague-Grundy function of a graph, with the counters that make winning
/// strategies terminate and the `K` sets that decide sums with one infinite token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopyTable {
    /// `γ(v)`, [`INFINITE`] for `∞(K)`.
    values: Vec<u64>,
    /// Labelling rank of each finite vertex, [`NO_COUNTER`] for infinite ones. Vertices are
    /// labelled in order of value, so a move that lowers a finite value lowers the counter.
    counters: Vec<u32>,
    /// `K` sets in CSR form: `follower_value_offsets[v]..follower_value_offsets[v + 1]` indexes
    /// `follower_values`; the range is empty for finite vertices.
    follower_value_offsets: Vec<u32>,
    /// The concatenated `K` sets, each sorted and without repeats.
    follower_values: Vec<u64>,
}

impl LoopyTable {
    /// `γ(v)`, or `None` when it is infinite.
    pub fn value(&self, v: u32) -> Option<u64> {
        let value = self.values[v as usize];
        (value != INFINITE).then_some(value)
    }

    /// `γ` of every vertex, [`INFINITE`] for infinite vertices.
    pub fn values(&self) -> &[u64] {
        &self.values
    }

    /// The counter of a finite vertex (its labelling rank), [`INFINITE`] for infinite ones.
    pub fn counter(&self, v: u32) -> u64 {
        match self.counters[v as usize] {
            NO_COUNTER => INFINITE,
            counter => u64::from(counter),
        }
    }

    /// The `K` of an infinite vertex `∞(K)`, sorted; empty for finite vertices.
    pub fn infinite_followers(&self, v: u32) -> &[u64] {
        let v = v as usize;
        let start = self.follower_value_offsets[v] as usize;
        let end = self.follower_value_offsets[v + 1] as usize;
        &self.follower_values[start..end]
    }

    /// Bytes held by the table's arrays.
    pub fn heap_bytes(&self) -> usize {
        (self.values.capacity() + self.follower_values.capacity()) * size_of::<u64>()
            + (self.counters.capacity() + self.follower_value_offsets.capacity()) * size_of::<u32>()
    }

    /// Whether the infinite vertex `v` has a follower of finite value `value`.
    fn has_follower_value(&self, v: u32, value: u64) -> bool {
        self.infinite_followers(v).binary_search(&value).is_ok()
    }
}

/// Computes `γ`, the counters and the `K` sets of every vertex. Self-loops and multi-edges are
/// allowed.
///
/// Staged labelling: stage `i` labels `i` every unlabelled vertex `u` that has no follower
/// labelled `i` and whose followers that are unlabelled or infinite all have a follower
/// labelled `i` (property B), one at a time, counting labels as counters. Vertices still
/// unlabelled at the end of the stage without a follower labelled `i` can never take a value
/// above `i` (it would need a follower of value `i`), so they become infinite (property C);
/// the others go on to stage `i + 1`. Every unlabelled vertex of stage `i` has followers of
/// all values below `i` (otherwise it became infinite earlier), which gives property A.
///
/// Each stage is a retrograde pass with queues and per-vertex counts of unanswered followers:
/// O(V + E), so O((Δ + 1)(V + E)) in all for Δ the largest finite value, after one counting
/// sort for the predecessor lists. Memory is linear: the predecessor lists plus a few words per
/// vertex. No recursion.
pub fn generalized_grundy(graph: &Digraph) -> LoopyTable {
    generalized_grundy_within(graph, u64::MAX).expect("an unlimited budget cannot be exceeded")
}

/// [`generalized_grundy`] within a work budget: at most `work_budget` edge visits in the
/// stages (see [`CyclicWorkExceeded`]), checked after the set-up and at the end of every stage,
/// so a graph stops at most one stage (about `3E` edge visits) past the budget. The predecessor
/// lists and the `K` sets cost O(V + E) once and are not counted.
pub fn generalized_grundy_within(
    graph: &Digraph,
    work_budget: u64,
) -> Result<LoopyTable, CyclicWorkExceeded> {
    match generalized_grundy_interruptible(graph, work_budget, &Interrupt::new()) {
        Ok(table) => Ok(table),
        Err(LoopyStop::CyclicWork(exceeded)) => Err(exceeded),
        Err(other) => unreachable!("nothing else holds this interrupt: {other}"),
    }
}

/// [`generalized_grundy_within`], stopping with [`LoopyStop::Cancelled`] once `interrupt`
/// is raised (read every [`super::interrupt::CHECK_INTERVAL`] edge visits, in the set-up and
/// in the stages); over the budget, [`LoopyStop::CyclicWork`].
pub fn generalized_grundy_interruptible(
    graph: &Digraph,
    work_budget: u64,
    interrupt: &Interrupt,
) -> Result<LoopyTable, LoopyStop> {
    generalized_grundy_and_predecessors(graph, work_budget, interrupt).map(|(table, _)| table)
}

/// [`generalized_grundy_interruptible`], also handing back the predecessor lists it built, for
/// the retrograde remoteness pass ([`super::remoteness`]) to reuse.
pub(super) fn generalized_grundy_and_predecessors(
    graph: &Digraph,
    work_budget: u64,
    interrupt: &Interrupt,
) -> Result<(LoopyTable, Predecessors), LoopyStop> {
    let mut poller = interrupt.poller();
    let predecessors = Predecessors::of(graph, &mut poller)?;
    let Labelling {
        values,
        counters,
        order,
    } = label_vertices(graph, &predecessors, work_budget, &mut poller)?;
    let (follower_value_offsets, follower_values) =
        infinite_follower_sets(&values, &order, &predecessors, &mut poller)?;
    let table = LoopyTable {
        values,
        counters,
        follower_value_offsets,
        follower_values,
    };
    Ok((table, predecessors))
}

/// The staged labelling of a cyclic graph needed more edge visits than its budget. Each stage
/// visits the out-edges of the vertices still unlabelled and the in-edges of the vertices it
/// labels and answers, so the total is O((Δ + 1)(V + E)) for Δ the largest finite value:
/// cubic in V on dense graphs with large values (a transitive tournament plus one self-loop).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the cyclic labelling stopped in stage {stage}, giving the value {stage} ({labelled} of \
     {vertex_count} vertices valued by then), after {work} edge visits, over the budget of \
     {budget}"
)]
pub struct CyclicWorkExceeded {
    /// The stage (the finite value being assigned) when the budget ran out.
    pub stage: u64,
    /// Vertices with a finite value by then.
    pub labelled: u32,
    /// Vertices of the graph.
    pub vertex_count: u32,
    /// Edge visits spent so far.
    pub work: u64,
    /// The budget that was exceeded.
    pub budget: u64,
}

/// Why the cyclic labelling stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LoopyStop {
    /// Over the work budget.
    #[error("{0}")]
    CyclicWork(#[from] CyclicWorkExceeded),
    /// The interrupt was raised.
    #[error("{0}")]
    Cancelled(#[from] Cancelled),
}
