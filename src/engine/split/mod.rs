//! Grundy values of the Addition-Subtraction game (`docs/games.md`, section 2): a move takes
//! one unit from a vertex `v` and adds `K_v` units to successors of `v`, repeats allowed.
//!
//! # The options of one unit
//!
//! Added units cancel in pairs, so a unit at `v` moves to a set `B` of successors with
//! `|B| <= K` and `|B| ≡ K (mod 2)`, of value `xor { g(w) : w in B }`; `g(v)` is the mex of
//! these options, and 0 without successors. Only the `d` *distinct successor values* matter: a
//! set holding two successors of equal value has the xor of the set without both, which is 2
//! smaller and has the same parity. Duplicate edges and equal values are therefore merged first.
//!
//! # Methods and their cost
//!
//! Each vertex uses the cheapest exact [`Method`]. They read a value `a` as the 65-bit vector
//! `(1, a)`: bit 64 carries the parity of a set, bits 0..64 its xor, so a set's vector is
//! `(|B| mod 2, xor)` and the options are the vectors `(K mod 2, x)` reachable with `|B| <= K`.
//!
//! - [`Method::Span`], when `K >= d - 1`. The size bound then excludes nothing of the right
//!   parity (only `|B| = d` exceeds `K = d - 1`, and it has the other parity), so the options
//!   are the parity-`K` slice of the span of the vectors `(1, a)`. Its even slice is a subspace
//!   `E` of GF(2)^64 (the xors of even sets, spanned by `a_i ^ a_1`). Its odd slice is the coset
//!   `a_1 + E`: if `(1, 0)` is in the span the coset contains 0 and equals `E`, otherwise it
//!   misses 0 and its mex is 0. The mex of `E` is `2^j`, `j` the lowest bit that leads no row
//!   of an echelon basis: the rows leading at bits `0..j` are `j` independent vectors below
//!   `2^j`, so they span all of `0..2^j`, while every element of `E` leads with a row's leading
//!   bit, so `2^j` is missing. If all 64 bits lead rows, every u64 is an option and the value,
//!   2^64, is a [`SplitError::ValueOverflow`]. Cost: Gaussian elimination, `O(65 d)` word
//!   operations. It is linear in the input, so the budget does not apply.
//! - [`Method::Enumerate`] walks every set of at most `K` values, depth first:
//!   `sum_{j <= K} C(d, j)` steps. Cheap for small `K` (`K = 1` is token sliding, `d + 1` steps).
//! - [`Method::ParityDp`]: the vectors `(1, a)` span `2^r` states (`r` = rank, at most 65),
//!   numbered by their coordinates in a basis chosen among the values. A DP adds the `d` values
//!   one by one, keeping for every state the fewest values that reach it; the options are the
//!   parity-`K` states reached with at most `K` values. `d * 2^r` steps and `2^r` bytes: cheap
//!   for many successors with narrow values and a `K` too large to enumerate.
//!
//! When `K < d - 1`, both estimates are computed first, saturating at `u64::MAX`. The DP's
//! needs the rank, an `O(65 d)` elimination, skipped when enumeration costs at most `2 d^2`:
//! `d` distinct vectors of parity 1 need `2^(r-1) >= d`, so the DP costs at least that much.
//! The cheaper method runs if its estimate is within [`SplitLimits::work_budget_per_vertex`];
//! otherwise the vertex fails with [`SplitError::WorkBudget`] before any work. Both methods
//! find at most as many options as they take steps, so their values stay below the budget.
//! Values above 64 bits can only come from Span, and are reported, never wrapped.

mod algebra;
mod methods;
#[cfg(test)]
mod tests;

use super::graph::Digraph;
use super::interrupt::{Cancelled, Interrupt};
use methods::{choose_method, option_subset, polled_vertex_value};

/// Default [`SplitLimits::work_budget_per_vertex`]: 2^26 steps, measured at 0.1 to 0.2 s for
/// one vertex at the limit on one core of a release build (a step is a few instructions: one
/// set visited by enumeration, one state update of the DP). Scratch memory at the limit:
/// 8 MiB for enumeration's option bitset, under 4 MiB for the DP (`2^r <= budget / d` with
/// `r <= d`).
pub const DEFAULT_WORK_BUDGET_PER_VERTEX: u64 = 1 << 26;

/// Bounds on the work spent on one vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitLimits {
    /// Largest estimated step count accepted for [`Method::Enumerate`] or
    /// [`Method::ParityDp`]; scratch memory is at most this many bytes. The limit is per
    /// vertex: a graph may spend it once per vertex.
    pub work_budget_per_vertex: u64,
}

impl Default for SplitLimits {
    fn default() -> Self {
        Self {
            work_budget_per_vertex: DEFAULT_WORK_BUDGET_PER_VERTEX,
        }
    }
}

/// Why the split-count table stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SplitStop {
    /// A vertex failed.
    #[error("{0}")]
    Split(#[from] SplitError),
    /// The interrupt was raised.
    #[error("{0}")]
    Cancelled(#[from] Cancelled),
}

/// Why a split-count game could not be analysed. Both name the vertex that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    /// Every 64-bit value is an option of a vertex (by [`Method::Span`]).
    #[error(
        "vertex {vertex}: every 64-bit value is one of its options, so its Grundy value (2^64) \
         does not fit in 64 bits"
    )]
    ValueOverflow {
        /// The vertex whose value is 2^64.
        vertex: u32,
    },
    /// The cheapest exact method for a vertex needs more steps than
    /// [`SplitLimits::work_budget_per_vertex`].
    #[error(
        "vertex {vertex}: computing its value needs about 2^{} steps, over the budget of {} \
         (out-degree {out_degree} with {distinct_values} distinct successor values, K {split_count})",
        rounded_log2(*.estimated_work),
        budget_text(*.budget)
    )]
    WorkBudget {
        /// The vertex that failed.
        vertex: u32,
        /// Steps of the cheapest exact method (saturated at `u64::MAX`).
        estimated_work: u64,
        /// [`SplitLimits::work_budget_per_vertex`].
        budget: u64,
        /// Out-degree of the vertex, repeated edges counted.
        out_degree: u32,
        /// `d`: the successor values that count (duplicates merged), see the module doc.
        distinct_values: u32,
        /// `K` of the vertex.
        split_count: u32,
    },
}

/// `log2(n)` to the nearest integer, for messages.
fn rounded_log2(n: u64) -> u32 {
    (n.max(1) as f64).log2().round() as u32
}

/// `2^k` for powers of two (the usual budgets), else the number.
fn budget_text(budget: u64) -> String {
    if budget.is_power_of_two() {
        format!("2^{}", budget.trailing_zeros())
    } else {
        budget.to_string()
    }
}

/// How a vertex's value was computed (`d` = distinct successor values, `r` <= 65 the rank of
/// the vectors `(1, g)`; see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// No out-edges: value 0, no moves. O(1).
    Terminal,
    /// `K >= d - 1`: options are a GF(2) subspace or coset, mex read off an echelon basis.
    /// `O(65 d)`, not budgeted.
    Span,
    /// Every set of at most `K` distinct values: at most `sum_{j <= K} C(d, j)` steps.
    Enumerate,
    /// Fewest values reaching each `(parity, xor)` state of the span: `d * 2^r` steps,
    /// `2^r` bytes.
    ParityDp,
}

/// Per-vertex values and the method that computed each (reused by [`find_split_picks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitTable {
    /// `g(v)` per vertex.
    pub values: Vec<u64>,
    /// The method that computed `g(v)`, per vertex.
    pub methods: Vec<Method>,
}

/// Computes `g(v)` for every vertex, visiting vertices in `order`: successors first, as returned
/// by [`super::order::successors_first_order`] (vertices missing from `order` stay terminal).
/// `split_counts[v]` is `K_v` and must have one entry per vertex.
///
/// Stops at the first vertex whose value overflows u64 or whose cheapest method exceeds the
/// budget. Besides the per-vertex methods, O(E log E) to merge equal successor values.
pub fn split_grundy_table(
    graph: &Digraph,
    split_counts: &[u32],
    order: &[u32],
    limits: &SplitLimits,
) -> Result<SplitTable, SplitError> {
    let interrupt = Interrupt::new();
    match split_grundy_table_interruptible(graph, split_counts, order, limits, &interrupt) {
        Ok(table) => Ok(table),
        Err(SplitStop::Split(error)) => Err(error),
        Err(other) => unreachable!("nothing else holds this interrupt: {other}"),
    }
}

/// [`split_grundy_table`], stopping with [`SplitStop::Cancelled`] once `interrupt` is
/// raised: read between vertices and every [`super::interrupt::CHECK_INTERVAL`] steps of
/// enumeration or of the DP within one (a vertex at the budget takes 0.1 to 0.2 s).
pub fn split_grundy_table_interruptible(
    graph: &Digraph,
    split_counts: &[u32],
    order: &[u32],
    limits: &SplitLimits,
    interrupt: &Interrupt,
) -> Result<SplitTable, SplitStop> {
    let n = graph.vertex_count() as usize;
    let mut poller = interrupt.poller();
    let mut table = SplitTable {
        values: vec![0; n],
        methods: vec![Method::Terminal; n],
    };
    let mut candidates = Candidates::default();
    for &vertex in order {
        let split_count = split_counts[vertex as usize];
        candidates.collect(graph.successors(vertex), &table.values);
        poller.tick(candidates.values.len() as u64 + 1)?;
        let budget = limits.work_budget_per_vertex;
        let method =
            choose_method(&candidates.values, split_count, budget).map_err(|estimated_work| {
                SplitError::WorkBudget {
                    vertex,
                    estimated_work,
                    budget,
                    out_degree: graph.out_degree(vertex),
                    distinct_values: candidates.values.len() as u32,
                    split_count,
                }
            })?;
        table.values[vertex as usize] =
            polled_vertex_value(&candidates.values, split_count, method, &mut poller)?
                .ok_or(SplitError::ValueOverflow { vertex })?;
        table.methods[vertex as usize] = method;
    }
    Ok(table)
}

/// Where the `K` units of one move go: one to each of `odd_targets`, and `2 * pair_count` more
/// to `pair_target` (pairs cancel, so they only pad the move to exactly `K` units).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitPicks {
    /// Distinct successors, ascending; the xor of their values is the move's target value.
    pub odd_targets: Vec<u32>,
    /// The smallest successor when `pair_count > 0`, else `None`.
    pub pair_target: Option<u32>,
    /// Pairs of units added to `pair_target` (they cancel, padding the move to `K` units).
    pub pair_count: u32,
}

/// Picks for a move of one unit at `vertex` whose option value is `target`: the xor of `g` over
/// `odd_targets` is `target` and `odd_targets.len() + 2 * pair_count == K_vertex`. `None` if
/// `target` is not an option of `vertex` (always for a terminal or out-of-range vertex).
///
/// Reruns the method recorded in `table` for `vertex`, so it costs what computing the value did
/// (within the budget that `table` was built with), plus `O(d K)` for the DP's walk back.
pub fn find_split_picks(
    graph: &Digraph,
    split_counts: &[u32],
    table: &SplitTable,
    vertex: u32,
    target: u64,
) -> Option<SplitPicks> {
    let method = *table.methods.get(vertex as usize)?;
    let split_count = split_counts[vertex as usize];
    let mut candidates = Candidates::default();
    candidates.collect(graph.successors(vertex), &table.values);
    let chosen = option_subset(&candidates.values, split_count, method, target)?;
    let mut odd_targets: Vec<u32> = chosen.iter().map(|&i| candidates.holders[i]).collect();
    odd_targets.sort_unstable();
    let pair_count = (split_count - odd_targets.len() as u32) / 2;
    let pair_target = if pair_count > 0 {
        graph.successors(vertex).iter().copied().min()
    } else {
        None
    };
    Some(SplitPicks {
        odd_targets,
        pair_target,
        pair_count,
    })
}

/// The distinct values among a vertex's successors, ascending, and for each the smallest
/// successor holding it. The buffers are reused from vertex to vertex.
#[derive(Debug, Default)]
struct Candidates {
    pairs: Vec<(u64, u32)>,
    values: Vec<u64>,
    holders: Vec<u32>,
}

impl Candidates {
    fn collect(&mut self, successors: &[u32], table: &[u64]) {
        self.pairs.clear();
        self.pairs
            .extend(successors.iter().map(|&w| (table[w as usize], w)));
        self.pairs.sort_unstable();
        self.pairs.dedup_by_key(|&mut (value, _)| value);
        self.values.clear();
        self.holders.clear();
        for &(value, holder) in &self.pairs {
            self.values.push(value);
            self.holders.push(holder);
        }
    }
}
