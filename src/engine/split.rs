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

use std::ops::ControlFlow;

use super::graph::Digraph;
use super::interrupt::{Cancelled, Interrupt, Poller};

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

/// The cheapest exact method for distinct successor `values` and split count `k`, or the
/// estimated steps of the cheapest one when they exceed `budget`.
fn choose_method(values: &[u64], k: u32, budget: u64) -> Result<Method, u64> {
    let d = values.len() as u64;
    if d == 0 {
        return Ok(Method::Terminal);
    }
    if u64::from(k) + 1 >= d {
        return Ok(Method::Span);
    }
    let enumerate = enumeration_cost(values.len(), k);
    // The DP costs at least 2 d^2 (module doc): skip its rank computation when it cannot win.
    let parity_dp = if enumerate <= d.saturating_mul(d).saturating_mul(2) {
        u64::MAX
    } else {
        parity_dp_cost(values)
    };
    let (method, cost) = if parity_dp < enumerate {
        (Method::ParityDp, parity_dp)
    } else {
        (Method::Enumerate, enumerate)
    };
    if cost <= budget {
        Ok(method)
    } else {
        Err(cost)
    }
}

/// `sum_{j <= k} C(d, j)`, the sets [`for_each_option`] visits, saturating at `u64::MAX`.
/// Stops as soon as the sum saturates, so at most about 64 terms are computed for large `d`.
fn enumeration_cost(d: usize, k: u32) -> u64 {
    let d = d as u128;
    let mut term: u128 = 1;
    let mut total: u128 = 1;
    for j in 0..u128::from(k).min(d) {
        // Exact: C(d, j) * (d - j) is divisible by j + 1, and fits since C(d, j) < 2^64.
        term = term * (d - j) / (j + 1);
        total += term;
        if total >= u128::from(u64::MAX) {
            return u64::MAX;
        }
    }
    total as u64
}

/// `d * 2^r` for [`ParityDp`], saturating at `u64::MAX`.
fn parity_dp_cost(values: &[u64]) -> u64 {
    let states = 1u64
        .checked_shl(ParityBasis::of(values).rank())
        .unwrap_or(u64::MAX);
    (values.len() as u64).saturating_mul(states)
}

/// `g` of a vertex with distinct successor `values`, by a `method` that applies to them (as
/// [`choose_method`] returns). `None` when every u64 is an option (only [`Method::Span`]).
#[cfg(test)]
fn vertex_value(values: &[u64], k: u32, method: Method) -> Option<u64> {
    polled_vertex_value(values, k, method, &mut Interrupt::new().poller())
        .expect("nothing else holds this interrupt")
}

/// [`vertex_value`], ticking `poller` once per enumerated set or DP state update.
fn polled_vertex_value(
    values: &[u64],
    k: u32,
    method: Method,
    poller: &mut Poller<'_>,
) -> Result<Option<u64>, Cancelled> {
    Ok(match method {
        Method::Terminal => Some(0),
        Method::Span => ParityBasis::of(values).span_value(k),
        Method::Enumerate => {
            let mut options = MexSet::new(enumeration_cost(values.len(), k));
            if let ControlFlow::Break(cancelled) = for_each_option(values, k, |xor, _| {
                options.insert(xor);
                match poller.tick(1) {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(cancelled) => ControlFlow::Break(cancelled),
                }
            }) {
                return Err(cancelled);
            }
            Some(options.mex())
        }
        Method::ParityDp => {
            let dp = ParityDp::run(values, poller)?;
            // A parity class of the 2^r states holds 2^(r-1) of them.
            let mut options = MexSet::new(1 << (dp.basis.rank() - 1));
            dp.for_each_option(values, k, |xor| options.insert(xor));
            Some(options.mex())
        }
    })
}

/// Indices into `values` of a set of at most `k` values with `|set| ≡ k (mod 2)` whose xor is
/// `target`, found by `method`; `None` if `target` is not an option.
fn option_subset(values: &[u64], k: u32, method: Method, target: u64) -> Option<Vec<usize>> {
    match method {
        Method::Terminal => None,
        Method::Span => {
            let basis = ParityBasis::of(values);
            let set = basis.members(basis.coordinates(option_vector(k, target))?);
            debug_assert!(set.len() <= k as usize, "Span applies only when K >= d - 1");
            Some(set)
        }
        Method::Enumerate => match for_each_option(values, k, |xor, set| {
            if xor == target {
                ControlFlow::Break(set.to_vec())
            } else {
                ControlFlow::Continue(())
            }
        }) {
            ControlFlow::Break(set) => Some(set),
            ControlFlow::Continue(()) => None,
        },
        Method::ParityDp => ParityDp::run(values, &mut Interrupt::new().poller())
            .expect("nothing else holds this interrupt")
            .subset(k, target),
    }
}

/// Bit 64 of a vector `(parity, xor)`.
const PARITY: u128 = 1 << 64;

/// The vector of an option of value `xor` when the split count is `k`.
fn option_vector(k: u32, xor: u64) -> u128 {
    (u128::from(k & 1) << 64) | u128::from(xor)
}

/// Calls `visit(xor, set)` for every set of at most `k` of the `values` with
/// `|set| ≡ k (mod 2)` (`set` = indices, ascending), stopping when `visit` breaks.
///
/// Depth first, without recursion, over the *prefixes*: sets of fewer than `min(k, d)` values.
/// Every non-empty set is a prefix plus one later value, visited in a tight loop on entering
/// the prefix (the largest sets, the bulk of the work, are never pushed). At most
/// [`enumeration_cost`] steps, `O(k)` memory.
fn for_each_option<B>(
    values: &[u64],
    k: u32,
    mut visit: impl FnMut(u64, &[usize]) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let max_size = values.len().min(k as usize);
    let parity = k as usize & 1;
    if parity == 0 {
        visit(0, &[])?;
    }
    let mut prefix: Vec<usize> = Vec::with_capacity(max_size);
    // xors[i] = xor of the values at prefix[..i].
    let mut xors: Vec<u64> = Vec::with_capacity(max_size);
    xors.push(0);
    // Values before `next` are not added to the current prefix (they come earlier in sets).
    let mut next = 0;
    let mut entered = true;
    loop {
        if entered && prefix.len() < max_size && (prefix.len() + 1) & 1 == parity {
            let xor = xors[prefix.len()];
            let slot = prefix.len();
            prefix.push(next);
            for (index, &value) in values.iter().enumerate().skip(next) {
                prefix[slot] = index;
                visit(xor ^ value, &prefix)?;
            }
            prefix.pop();
        }
        if prefix.len() + 1 < max_size && next < values.len() {
            xors.push(xors[prefix.len()] ^ values[next]);
            prefix.push(next);
            next += 1;
            entered = true;
        } else if let Some(last) = prefix.pop() {
            // Every set extending this prefix was visited: go on with the ones without `last`.
            xors.pop();
            next = last + 1;
            entered = false;
        } else {
            return ControlFlow::Continue(());
        }
    }
}

/// An echelon basis of the vectors `(1, a)` of some distinct values. The values inserted
/// independently are the *basis values*; every row records which of them it sums, so a member
/// of the span can be written as a set of values.
struct ParityBasis {
    /// `rows[b]` has leading bit `b`, or is 0.
    rows: [u128; 65],
    /// `combos[b]`: bit `j` set if basis value `j` is in the sum `rows[b]`.
    combos: [u128; 65],
    /// Indices into the value list of the basis values, in insertion order.
    items: Vec<usize>,
}

impl ParityBasis {
    fn of(values: &[u64]) -> Self {
        let mut basis = Self {
            rows: [0; 65],
            combos: [0; 65],
            items: Vec::new(),
        };
        for (index, &value) in values.iter().enumerate() {
            let (rest, combo) = basis.reduce(PARITY | u128::from(value));
            if rest != 0 {
                // rest = value + sum(combo), so as a sum of basis values it is combo + value.
                let lead = leading_bit(rest);
                basis.rows[lead] = rest;
                basis.combos[lead] = combo ^ (1 << basis.items.len());
                basis.items.push(index);
            }
        }
        basis
    }

    fn rank(&self) -> u32 {
        self.items.len() as u32
    }

    /// Clears the leading bits of `vector` that lead rows: returns the remainder (0 iff
    /// `vector` is in the span) and the basis values whose sum was removed.
    fn reduce(&self, mut vector: u128) -> (u128, u128) {
        let mut combo = 0;
        while vector != 0 {
            let lead = leading_bit(vector);
            if self.rows[lead] == 0 {
                break;
            }
            vector ^= self.rows[lead];
            combo ^= self.combos[lead];
        }
        (vector, combo)
    }

    /// The basis values summing to `vector` (bit `j` = basis value `j`), if it is in the span.
    fn coordinates(&self, vector: u128) -> Option<u128> {
        let (rest, combo) = self.reduce(vector);
        (rest == 0).then_some(combo)
    }

    /// Indices into the value list of the basis values in `coordinates`.
    fn members(&self, coordinates: u128) -> Vec<usize> {
        (0..self.items.len())
            .filter(|&j| coordinates >> j & 1 == 1)
            .map(|j| self.items[j])
            .collect()
    }

    /// [`Method::Span`]: the mex of the parity-`k` slice of the span (module doc), `None` if
    /// that slice is all of GF(2)^64.
    fn span_value(&self, k: u32) -> Option<u64> {
        if k & 1 == 1 && self.coordinates(PARITY).is_none() {
            return Some(0);
        }
        (0..64).find(|&b| self.rows[b] == 0).map(|b| 1 << b)
    }
}

/// The index of the highest set bit of a non-zero vector.
fn leading_bit(vector: u128) -> usize {
    127 - vector.leading_zeros() as usize
}

/// [`Method::ParityDp`]: the fewest values reaching each state of the span of the vectors
/// `(1, a)`, states numbered by their coordinates in a [`ParityBasis`].
struct ParityDp {
    basis: ParityBasis,
    /// Coordinates of each value's vector.
    generators: Vec<usize>,
    /// `fewest[state]`: the size of a smallest set of values summing to `state`.
    fewest: Vec<u8>,
}

impl ParityDp {
    /// Adds the values one at a time: a state's smallest set either avoids the new value or is
    /// a smallest set of `state ^ generator` plus it. States pair up as `(s, s ^ generator)`,
    /// updated together so each value is used at most once: `d * 2^r` state updates.
    /// Ticks `poller` once per state update, checking between generators.
    fn run(values: &[u64], poller: &mut Poller<'_>) -> Result<Self, Cancelled> {
        let basis = ParityBasis::of(values);
        let generators: Vec<usize> = values
            .iter()
            .map(|&value| {
                let coordinates = basis.coordinates(PARITY | u128::from(value));
                coordinates.expect("every value is in the span it built") as usize
            })
            .collect();
        let states = 1usize << basis.rank();
        // u8::MAX = not reached yet; every state ends up reached with at most r <= 65 values,
        // since the generators include the basis values.
        let mut fewest = vec![u8::MAX; states];
        fewest[0] = 0;
        for &generator in &generators {
            // Each pair once: its state without the generator's leading bit, block by block.
            let lead = 1 << (usize::BITS - 1 - generator.leading_zeros());
            for block in (0..states).step_by(2 * lead) {
                for state in block..block + lead {
                    let partner = state ^ generator;
                    let (here, there) = (fewest[state], fewest[partner]);
                    fewest[state] = here.min(there.saturating_add(1));
                    fewest[partner] = there.min(here.saturating_add(1));
                }
            }
            poller.tick(states as u64 / 2)?;
        }
        Ok(Self {
            basis,
            generators,
            fewest,
        })
    }

    /// Calls `visit(xor)` for every option: the states of parity `k` (as many basis values
    /// as `k`, mod 2) reached with at most `k` values. Visits states in Gray-code order so each
    /// xor is one update away from the previous one.
    fn for_each_option(&self, values: &[u64], k: u32, mut visit: impl FnMut(u64)) {
        let basis_values: Vec<u64> = self.basis.items.iter().map(|&i| values[i]).collect();
        let mut xor = 0;
        for step in 0..self.fewest.len() {
            if step > 0 {
                xor ^= basis_values[step.trailing_zeros() as usize];
            }
            let state = step ^ (step >> 1);
            if state.count_ones() & 1 == k & 1 && u32::from(self.fewest[state]) <= k {
                visit(xor);
            }
        }
    }

    /// Indices of a smallest set of values reaching the option `target`, walking back from its
    /// state through states one value closer to the empty set. A smallest set never uses a
    /// generator twice (the two would cancel), so the indices are distinct.
    fn subset(&self, k: u32, target: u64) -> Option<Vec<usize>> {
        let mut state = self.basis.coordinates(option_vector(k, target))? as usize;
        if u32::from(self.fewest[state]) > k {
            return None;
        }
        let mut set = Vec::with_capacity(usize::from(self.fewest[state]));
        while state != 0 {
            let index = (0..self.generators.len())
                .find(|&i| self.fewest[state ^ self.generators[i]] + 1 == self.fewest[state])
                .expect("a smallest set without one of its values reaches a closer state");
            set.push(index);
            state ^= self.generators[index];
        }
        Some(set)
    }
}

/// Which of `0..=bound` are options. With at most `bound` options the mex is at most `bound`,
/// so larger options never matter: `bound / 8` bytes whatever the values.
struct MexSet {
    words: Vec<u64>,
}

impl MexSet {
    fn new(bound: u64) -> Self {
        Self {
            words: vec![0; (bound / 64 + 1) as usize],
        }
    }

    fn insert(&mut self, value: u64) {
        if let Some(word) = self.words.get_mut((value / 64) as usize) {
            *word |= 1 << (value % 64);
        }
    }

    fn mex(&self) -> u64 {
        let (index, word) = self
            .words
            .iter()
            .enumerate()
            .find(|&(_, &word)| word != u64::MAX)
            .expect("no more options than the bound, so one of 0..=bound is missing");
        index as u64 * 64 + u64::from(word.trailing_ones())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::super::order::successors_first_order;
    use super::super::sliding::grundy_table;
    use super::*;

    fn graph(n: u32, edges: &[(u32, u32)]) -> Digraph {
        Digraph::from_edges(n, edges).unwrap()
    }

    fn table(g: &Digraph, split_counts: &[u32]) -> Result<SplitTable, SplitError> {
        let order = successors_first_order(g).unwrap();
        split_grundy_table(g, split_counts, &order, &SplitLimits::default())
    }

    /// The options of one unit by brute force over every subset of the successor values as
    /// given (equal values not merged).
    fn naive_options(raw: &[u64], k: u32) -> BTreeSet<u64> {
        (0u32..1 << raw.len())
            .filter(|mask| mask.count_ones() <= k && mask.count_ones() % 2 == k % 2)
            .map(|mask| {
                (0..raw.len())
                    .filter(|&i| mask >> i & 1 == 1)
                    .fold(0, |xor, i| xor ^ raw[i])
            })
            .collect()
    }

    fn mex(options: &BTreeSet<u64>) -> u64 {
        (0..).find(|x| !options.contains(x)).unwrap()
    }

    /// The distinct values as the table sees them, `raw[i]` being the value of successor `i`.
    fn distinct_values(raw: &[u64]) -> Vec<u64> {
        let successors: Vec<u32> = (0..raw.len() as u32).collect();
        let mut candidates = Candidates::default();
        candidates.collect(&successors, raw);
        candidates.values
    }

    /// Every method that is exact for these distinct values.
    fn applicable(values: &[u64], k: u32) -> Vec<Method> {
        if values.is_empty() {
            return vec![Method::Terminal];
        }
        let mut methods = vec![Method::Enumerate, Method::ParityDp];
        if k as usize + 1 >= values.len() {
            methods.push(Method::Span);
        }
        methods
    }

    /// `set` (indices into `values`) is a legal move of one unit with value `target`.
    fn assert_option_set(values: &[u64], k: u32, target: u64, set: &[usize]) {
        let unique: BTreeSet<usize> = set.iter().copied().collect();
        assert_eq!(unique.len(), set.len(), "a value is used twice in {set:?}");
        assert!(set.len() <= k as usize, "{} values for K {k}", set.len());
        assert_eq!(
            set.len() % 2,
            k as usize % 2,
            "{} values for K {k}",
            set.len()
        );
        assert_eq!(set.iter().fold(0, |xor, &i| xor ^ values[i]), target);
    }

    /// `picks` is a legal move of one unit at `vertex` to the value `target`.
    fn assert_picks(
        g: &Digraph,
        k: u32,
        values: &[u64],
        vertex: u32,
        target: u64,
        picks: &SplitPicks,
    ) {
        let successors = g.successors(vertex);
        let odd = &picks.odd_targets;
        assert!(odd.windows(2).all(|w| w[0] < w[1]), "{odd:?} not ascending");
        assert!(odd.iter().all(|w| successors.contains(w)), "{odd:?}");
        assert_eq!(odd.len() as u32 + 2 * picks.pair_count, k);
        assert_eq!(picks.pair_target.is_some(), picks.pair_count > 0);
        assert!(picks.pair_target.is_none_or(|w| successors.contains(&w)));
        assert_eq!(
            odd.iter().fold(0, |xor, &w| xor ^ values[w as usize]),
            target
        );
    }

    /// Deterministic pseudo-random values (splitmix64).
    fn pseudo_random(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Vertices 0..=64: vertex 0 is terminal, vertex `i > 0` has successors `0..i` and K = 64,
    /// so its even sets span all values below 2^(i-1) and `g(i) = 2^(i-1)`.
    fn power_chain_edges() -> Vec<(u32, u32)> {
        (1..=64).flat_map(|i| (0..i).map(move |w| (i, w))).collect()
    }

    /// An acyclic graph on `1..max_n` vertices, duplicate edges allowed.
    fn dag(max_n: u32, max_edges: usize) -> impl Strategy<Value = (u32, Vec<(u32, u32)>)> {
        (1..max_n)
            .prop_flat_map(move |n| (Just(n), prop::collection::vec((0..n, 0..n), 0..max_edges)))
            .prop_map(|(n, pairs)| {
                let edges = pairs
                    .into_iter()
                    .filter(|&(a, b)| a != b)
                    .map(|(a, b)| (a.min(b), a.max(b)))
                    .collect();
                (n, edges)
            })
    }

    #[test]
    fn worked_example() {
        // docs/games.md section 2: edges 0->1, 0->2, 1->3, 2->1, 2->3, K = {2, 1, 3, 2}.
        let g = graph(4, &[(0, 1), (0, 2), (1, 3), (2, 1), (2, 3)]);
        let ks = [2, 1, 3, 2];
        let t = table(&g, &ks).unwrap();
        assert_eq!(t.values, vec![1, 1, 2, 0]);
        assert_eq!(t.methods[3], Method::Terminal);
        let nim_sum = |position: [u64; 4]| {
            (0..4)
                .filter(|&v| position[v] % 2 == 1)
                .fold(0, |xor, v| xor ^ t.values[v])
        };
        assert_ne!(nim_sum([3, 4, 5, 6]), 0, "WINNING");
        assert_eq!(nim_sum([0, 0, 0, 5]), 0, "LOSING");
        assert_ne!(nim_sum([1, 0, 0, 0]), 0, "WINNING");

        // From {3,4,5,6} (nim-sum 3), the unit at vertex 2 (value 2) goes to value 1: one unit
        // to vertex 1 and a pair to vertex 1, giving {3,7,4,6}, one of the listed moves.
        let picks = find_split_picks(&g, &ks, &t, 2, 1).unwrap();
        let expected = SplitPicks {
            odd_targets: vec![1],
            pair_target: Some(1),
            pair_count: 1,
        };
        assert_eq!(picks, expected);
        assert_eq!(nim_sum([3, 7, 4, 6]), 0);
        // Vertex 0 (K = 2) moves to {} or {1, 2}: options 0 and 3 only.
        let both = find_split_picks(&g, &ks, &t, 0, 3).unwrap();
        assert_eq!(both.odd_targets, vec![1, 2]);
        assert_eq!((both.pair_target, both.pair_count), (None, 0));
        assert_eq!(find_split_picks(&g, &ks, &t, 0, 2), None);
        assert_eq!(find_split_picks(&g, &ks, &t, 3, 0), None, "terminal");
        assert_eq!(find_split_picks(&g, &ks, &t, 4, 0), None, "out of range");
    }

    proptest! {
        #[test]
        fn methods_agree_with_brute_force(
            raw in prop::collection::vec(prop_oneof![3 => 0u64..8, 1 => any::<u64>()], 0..11),
            k in 0u32..13,
            stranger in any::<u64>(),
        ) {
            let options = naive_options(&raw, k);
            let expected = if raw.is_empty() { 0 } else { mex(&options) };
            let values = distinct_values(&raw);
            let chosen = choose_method(&values, k, u64::MAX).unwrap();
            prop_assert!(applicable(&values, k).contains(&chosen));
            for method in applicable(&values, k) {
                prop_assert_eq!(vertex_value(&values, k, method), Some(expected), "{:?}", method);
                let is_option = |x: &u64| method != Method::Terminal && options.contains(x);
                for target in options.iter().copied().chain(0..=expected + 1).chain([stranger]) {
                    match option_subset(&values, k, method, target) {
                        Some(set) => {
                            prop_assert!(is_option(&target), "{:?} found non-option {}", method, target);
                            assert_option_set(&values, k, target, &set);
                        }
                        None => prop_assert!(!is_option(&target), "{:?} missed {}", method, target),
                    }
                }
            }
        }

        #[test]
        fn split_count_one_is_token_sliding((n, edges) in dag(40, 120)) {
            let g = graph(n, &edges);
            let order = successors_first_order(&g).unwrap();
            let t = table(&g, &vec![1; n as usize]).unwrap();
            prop_assert_eq!(t.values, grundy_table(&g, &order));
        }

        #[test]
        fn picks_realise_every_option((n, edges) in dag(12, 40), seed in any::<u64>()) {
            let g = graph(n, &edges);
            let mut state = seed;
            let ks: Vec<u32> = (0..n).map(|_| (pseudo_random(&mut state) % 7) as u32).collect();
            let t = table(&g, &ks).unwrap();
            for vertex in 0..n {
                let k = ks[vertex as usize];
                let mut successors = g.successors(vertex).to_vec();
                successors.sort_unstable();
                successors.dedup();
                let raw: Vec<u64> = successors.iter().map(|&w| t.values[w as usize]).collect();
                let options = if raw.is_empty() { BTreeSet::new() } else { naive_options(&raw, k) };
                let value = t.values[vertex as usize];
                prop_assert_eq!(value, if raw.is_empty() { 0 } else { mex(&options) });
                for target in options.iter().copied().chain(0..=value + 1) {
                    match find_split_picks(&g, &ks, &t, vertex, target) {
                        Some(picks) => {
                            prop_assert!(options.contains(&target), "non-option {} at {}", target, vertex);
                            assert_picks(&g, k, &t.values, vertex, target, &picks);
                        }
                        None => prop_assert!(!options.contains(&target), "missed {} at {}", target, vertex),
                    }
                }
            }
        }
    }

    #[test]
    fn span_with_5000_successors() {
        let all: Vec<u64> = (0..5000).collect();
        let even: Vec<u64> = (0..5000).map(|i| 2 * i).collect();
        let odd: Vec<u64> = (0..5000).map(|i| 2 * i + 1).collect();
        let cases = [
            // 0 is a value, so odd sets reach 0 too; the even sets span all of 0..2^13.
            (&all, 4999, 8192),
            (&all, 5000, 8192),
            // Only even values: bit 0 leads no row.
            (&even, 5001, 1),
            // An odd number of odd values xors to an odd value, never 0.
            (&odd, 4999, 0),
            (&odd, 5000, 1),
        ];
        for (values, k, expected) in cases {
            assert_eq!(choose_method(values, k, 0), Ok(Method::Span));
            assert_eq!(
                vertex_value(values, k, Method::Span),
                Some(expected),
                "K {k}"
            );
            let below = expected
                .checked_sub(1)
                .map(|v| option_subset(values, k, Method::Span, v));
            if let Some(set) = below {
                assert_option_set(values, k, expected - 1, &set.unwrap());
            }
            assert_eq!(option_subset(values, k, Method::Span, expected), None);
        }
    }

    #[test]
    fn sixty_successors_with_split_count_three() {
        let mut state = 7;
        // A few small values so the mex is not trivially 0; the rest are wide and independent.
        let wide: Vec<u64> = (0..60)
            .map(|i| if i < 6 { i } else { pseudo_random(&mut state) })
            .collect();
        let narrow: Vec<u64> = (0..60).map(|_| pseudo_random(&mut state) % 32).collect();
        for (raw, method) in [(wide, Method::Enumerate), (narrow, Method::ParityDp)] {
            let mut options = BTreeSet::new();
            for i in 0..60 {
                options.insert(raw[i]);
                for j in i + 1..60 {
                    for l in j + 1..60 {
                        options.insert(raw[i] ^ raw[j] ^ raw[l]);
                    }
                }
            }
            let values = distinct_values(&raw);
            assert_eq!(
                choose_method(&values, 3, DEFAULT_WORK_BUDGET_PER_VERTEX),
                Ok(method)
            );
            assert_eq!(
                vertex_value(&values, 3, method),
                Some(mex(&options)),
                "{method:?}"
            );
            for &target in options.iter().take(300) {
                let set = option_subset(&values, 3, method, target).unwrap();
                assert_option_set(&values, 3, target, &set);
            }
        }
    }

    #[test]
    fn parity_dp_handles_many_narrow_values() {
        // A staircase: vertex i < 40 has successors 0..i and K = 1, so g(i) = i. Vertex 40 sees
        // the values 0..40 with K = 20: enumeration needs about 2^39 steps, the DP 40 * 2^7.
        // Vertex 41 sees 0..20 with K = 3: 1351 sets against 20 * 2^6 DP updates.
        // Both reach every x < 64 (resp. 32): x itself, or the xor of two (three) values.
        let mut edges: Vec<(u32, u32)> =
            (0..40).flat_map(|i| (0..i).map(move |w| (i, w))).collect();
        edges.extend((0..40).map(|w| (40, w)));
        edges.extend((0..20).map(|w| (41, w)));
        let g = graph(42, &edges);
        let mut ks = vec![1; 42];
        ks[40] = 20;
        ks[41] = 3;
        let t = table(&g, &ks).unwrap();
        for (vertex, value) in [(40, 64), (41, 32)] {
            assert_eq!(t.methods[vertex as usize], Method::ParityDp);
            assert_eq!(t.values[vertex as usize], value);
            let k = ks[vertex as usize];
            for target in 0..value {
                let picks = find_split_picks(&g, &ks, &t, vertex, target).unwrap();
                assert_picks(&g, k, &t.values, vertex, target, &picks);
            }
            assert_eq!(find_split_picks(&g, &ks, &t, vertex, value), None);
        }
        let narrow: Vec<u64> = (0..40).collect();
        assert_eq!(choose_method(&narrow, 20, 1 << 12), Err(40 << 7));
    }

    #[test]
    fn value_overflow_is_an_error() {
        let mut edges = power_chain_edges();
        let chain = table(&graph(65, &edges), &[64; 65]).unwrap();
        let powers: Vec<u64> = std::iter::once(0).chain((0..64).map(|b| 1 << b)).collect();
        assert_eq!(chain.values, powers);
        // Vertex 65 sees 0, 1, 2, ..., 2^63: even sets span everything, and {0} is odd.
        edges.extend((0..65).map(|w| (65, w)));
        for k in [64, 65, 1000] {
            let mut ks = vec![64; 66];
            ks[65] = k;
            let error = table(&graph(66, &edges), &ks).unwrap_err();
            assert_eq!(error, SplitError::ValueOverflow { vertex: 65 });
            assert_eq!(
                error.to_string(),
                "vertex 65: every 64-bit value is one of its options, so its Grundy value (2^64) \
                 does not fit in 64 bits"
            );
        }
    }

    #[test]
    fn work_budget_is_an_error() {
        // Vertex 65 sees the 64 independent values 2^0..2^63.
        let mut edges = power_chain_edges();
        edges.extend((1..65).map(|w| (65, w)));
        let g = graph(66, &edges);
        let mut ks = vec![64; 66];
        ks[65] = 20;
        let error = table(&g, &ks).unwrap_err();
        let expected = SplitError::WorkBudget {
            vertex: 65,
            estimated_work: enumeration_cost(64, 20),
            budget: 1 << 26,
            out_degree: 64,
            distinct_values: 64,
            split_count: 20,
        };
        assert_eq!(error, expected);
        assert_eq!(
            error.to_string(),
            "vertex 65: computing its value needs about 2^55 steps, over the budget of 2^26 \
             (out-degree 64 with 64 distinct successor values, K 20)"
        );
        // With K = 3 the options are the values with 1 or 3 bits set; with K = 2, 0 or 2 bits.
        for (k, value) in [(3, 0), (2, 1)] {
            ks[65] = k;
            let t = table(&g, &ks).unwrap();
            assert_eq!((t.values[65], t.methods[65]), (value, Method::Enumerate));
        }
    }

    #[test]
    fn enumeration_cost_saturates() {
        assert_eq!(enumeration_cost(10, 0), 1);
        assert_eq!(enumeration_cost(10, 2), 1 + 10 + 45);
        assert_eq!(enumeration_cost(64, 64), u64::MAX);
        assert_eq!(enumeration_cost(u32::MAX as usize, u32::MAX - 2), u64::MAX);
    }

    #[test]
    fn deep_chain_does_not_recurse() {
        let n = 1_000_000u32;
        let edges: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
        let t = table(&graph(n, &edges), &vec![1; n as usize]).unwrap();
        assert_eq!(t.values[n as usize - 1], 0);
        assert_eq!(t.values[0], u64::from((n - 1) % 2));
    }
}
