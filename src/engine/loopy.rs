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

use super::graph::Digraph;
use super::interrupt::{CHECK_INTERVAL, Cancelled, Interrupt, Poller};
use super::outcome::Outcome;

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
    "the cyclic labelling stopped in stage {stage} (finite values 0..{stage} given to \
     {labelled} of {vertex_count} vertices) after {work} edge visits, over the budget of {budget}"
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

/// The edges into each vertex, in CSR form: one source per edge, so multi-edges repeat.
pub(super) struct Predecessors {
    offsets: Vec<u32>,
    sources: Vec<u32>,
}

impl Predecessors {
    /// Counting sort of the edges by target: O(V + E).
    fn of(graph: &Digraph, poller: &mut Poller<'_>) -> Result<Self, Cancelled> {
        let n = graph.vertex_count() as usize;
        let mut offsets = vec![0u32; n + 1];
        for chunk in graph.targets().chunks(CHECK_INTERVAL as usize) {
            for &target in chunk {
                offsets[target as usize + 1] += 1;
            }
            poller.tick(CHECK_INTERVAL)?;
        }
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        let mut cursor = offsets[..n].to_vec();
        let mut sources = vec![0u32; graph.targets().len()];
        for source in 0..graph.vertex_count() {
            let successors = graph.successors(source);
            for &target in successors {
                let slot = &mut cursor[target as usize];
                sources[*slot as usize] = source;
                *slot += 1;
            }
            poller.tick(successors.len() as u64 + 1)?;
        }
        Ok(Self { offsets, sources })
    }

    /// The source of every edge into `v` (repeated for multi-edges).
    pub(super) fn of_vertex(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.sources[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }
}

/// The outcome of the staged labelling.
struct Labelling {
    values: Vec<u64>,
    counters: Vec<u32>,
    /// Finite vertices in labelling order, hence in non-decreasing value.
    order: Vec<u32>,
}

/// Runs the stages of [`generalized_grundy`].
///
/// Within stage `i` a vertex is *active* while it is not finite (unlabelled, or infinite from an
/// earlier stage) and *answered* once it has a follower labelled `i`. `unanswered[u]` counts the
/// out-edges of an unlabelled `u` to active vertices not yet answered; `u` is labelled `i` when
/// it reaches zero: then `u` is not answered itself, since the edge to a follower labelled `i`
/// stays counted (that follower was active, and a labelled vertex is never answered). Nor can it
/// become answered later: that follower would have to be active and unanswered, keeping the
/// count above zero. So the labelling order within a stage does not change the values.
fn label_vertices(
    graph: &Digraph,
    predecessors: &Predecessors,
    work_budget: u64,
    poller: &mut Poller<'_>,
) -> Result<Labelling, LoopyStop> {
    let n = graph.vertex_count() as usize;
    let mut values = vec![INFINITE; n];
    let mut counters = vec![NO_COUNTER; n];
    let mut order = Vec::new();
    let mut unlabelled: Vec<u32> = (0..graph.vertex_count()).collect();
    let mut is_unlabelled = vec![true; n];
    let mut unanswered = vec![0u32; n];
    // `answered_in[v] == stage + 1` once v is answered in `stage`: stamps need no clearing.
    // The stage count stays far below u32::MAX: a value Δ needs followers valued 0..Δ-1, each of
    // which needs as many out-edges, so Δ(Δ + 1) / 2 <= E <= u32::MAX.
    let mut answered_in = vec![0u32; n];
    let mut ready = Vec::new();
    let mut stage = 0u32;
    let mut work = 0u64;
    let check_budget = |work: u64, stage: u32, labelled: usize| {
        if work <= work_budget {
            return Ok(());
        }
        Err(CyclicWorkExceeded {
            stage: u64::from(stage),
            labelled: labelled as u32,
            vertex_count: graph.vertex_count(),
            work,
            budget: work_budget,
        })
    };
    while !unlabelled.is_empty() {
        let stamp = stage + 1;
        for &u in &unlabelled {
            let successors = graph.successors(u);
            work += successors.len() as u64;
            // In stage 0 nothing is finite yet: every follower is active, and the count is
            // the out-degree, without reading the followers.
            let active = if stage == 0 {
                successors.len()
            } else {
                successors
                    .iter()
                    .filter(|&&w| values[w as usize] == INFINITE)
                    .count()
            };
            // At most the out-degree, which fits in u32 like every CSR offset.
            unanswered[u as usize] = active as u32;
            if active == 0 {
                ready.push(u);
            }
            poller.tick(successors.len() as u64 + 1)?;
        }
        check_budget(work, stage, order.len())?;
        while let Some(u) = ready.pop() {
            debug_assert_ne!(
                answered_in[u as usize], stamp,
                "a ready vertex got answered"
            );
            values[u as usize] = u64::from(stage);
            counters[u as usize] = order.len() as u32;
            order.push(u);
            is_unlabelled[u as usize] = false;
            let answering = predecessors.of_vertex(u);
            work += answering.len() as u64;
            poller.tick(answering.len() as u64 + 1)?;
            for &p in answering {
                if values[p as usize] != INFINITE || answered_in[p as usize] == stamp {
                    continue;
                }
                answered_in[p as usize] = stamp;
                let waiting = predecessors.of_vertex(p);
                work += waiting.len() as u64;
                poller.tick(waiting.len() as u64)?;
                for &q in waiting {
                    if !is_unlabelled[q as usize] {
                        continue;
                    }
                    let count = &mut unanswered[q as usize];
                    *count -= 1;
                    if *count == 0 {
                        ready.push(q);
                    }
                }
            }
        }
        // Labelled vertices leave; unanswered ones become infinite (their value stays INFINITE).
        unlabelled.retain(|&u| {
            let u = u as usize;
            if is_unlabelled[u] && answered_in[u] != stamp {
                is_unlabelled[u] = false;
            }
            is_unlabelled[u]
        });
        check_budget(work, stage, order.len())?;
        stage += 1;
    }
    Ok(Labelling {
        values,
        counters,
        order,
    })
}

/// The `K` sets of the infinite vertices as CSR `(offsets, values)`, sorted and without
/// repeats, in O(V + E): visiting the finite vertices in labelling order (non-decreasing value)
/// and appending each value to its infinite predecessors builds sorted lists, in which a repeat
/// can only be a copy of the last entry. One pass counts, the second fills.
fn infinite_follower_sets(
    values: &[u64],
    order: &[u32],
    predecessors: &Predecessors,
    poller: &mut Poller<'_>,
) -> Result<(Vec<u32>, Vec<u64>), Cancelled> {
    let n = values.len();
    let mut offsets = vec![0u32; n + 1];
    let mut last_counted = vec![INFINITE; n];
    for &w in order {
        let value = values[w as usize];
        poller.tick(predecessors.of_vertex(w).len() as u64 + 1)?;
        for &p in predecessors.of_vertex(w) {
            let p = p as usize;
            if values[p] == INFINITE && last_counted[p] != value {
                last_counted[p] = value;
                offsets[p + 1] += 1;
            }
        }
    }
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    let mut cursor = offsets[..n].to_vec();
    let mut follower_values = vec![0u64; offsets[n] as usize];
    for &w in order {
        let value = values[w as usize];
        poller.tick(predecessors.of_vertex(w).len() as u64 + 1)?;
        for &p in predecessors.of_vertex(w) {
            let p = p as usize;
            if values[p] != INFINITE {
                continue;
            }
            let end = cursor[p] as usize;
            if end == offsets[p] as usize || follower_values[end - 1] != value {
                follower_values[end] = value;
                cursor[p] += 1;
            }
        }
    }
    Ok((offsets, follower_values))
}

/// A move from a sum as `(item_index, from, to)`: one token of item `item_index`, on `from`,
/// slides to the follower `to`. `table` must be the table of `graph`.
///
/// - WIN: a move to a LOSE position, chosen so that repeating this choice wins in finitely
///   many moves. Without an infinite token, the token with the largest counter among those
///   that can restore nim-sum 0 slides to the follower of the wanted value with the smallest
///   counter; with the single infinite token, that token slides to a follower valued the xor
///   of the others, smallest counter first.
/// - DRAW: a move to a DRAW position (a DRAW position always has one, and never a move to a
///   LOSE position).
/// - LOSE: `None`.
///
/// Why repeating the WIN choice ends the game: after each winning move every token is finite;
/// take the multiset of their counters. If the opponent lowers a token, its counter drops
/// (values never decrease along the labelling order), and so does the counter of the token
/// the answer lowers. If the opponent raises a token from `u` to `v` (a larger value or
/// infinite), property B offers the reversal from `v` to a `w` with `c(w) < c(u)`; the
/// chosen answer removes the largest counter it can and adds the smallest, so it leaves a
/// multiset no larger than the reversal would. Either way the multiset shrinks over each
/// pair of moves, and multisets of naturals cannot shrink forever.
///
/// O(items + sum of the out-degrees of the items' vertices), plus binary searches in `K` sets.
pub fn loopy_move(
    graph: &Digraph,
    table: &LoopyTable,
    items: &[(u32, u64)],
) -> Option<(usize, u32, u32)> {
    let summary = SumSummary::of(table, items);
    match summary.outcome(table) {
        Outcome::Lose => None,
        Outcome::Win => winning_move(graph, table, items, &summary),
        Outcome::Draw => drawing_move(graph, table, items, &summary),
    }
}

/// See [`loopy_move`]. `None` only if `table` does not belong to `graph`.
fn winning_move(
    graph: &Digraph,
    table: &LoopyTable,
    items: &[(u32, u64)],
    summary: &SumSummary,
) -> Option<(usize, u32, u32)> {
    let nim_sum = summary.nim_sum;
    let (item_index, from, wanted) = if summary.infinite_tokens == 0 {
        let (item_index, &(from, _)) = items
            .iter()
            .enumerate()
            .filter(|&(_, &(vertex, count))| {
                let value = table.values[vertex as usize];
                count > 0 && value ^ nim_sum < value
            })
            .max_by_key(|&(_, &(vertex, _))| table.counters[vertex as usize])?;
        (item_index, from, table.values[from as usize] ^ nim_sum)
    } else {
        let item_index = items
            .iter()
            .position(|&(vertex, count)| count > 0 && table.value(vertex).is_none())?;
        (item_index, items[item_index].0, nim_sum)
    };
    let to = graph
        .successors(from)
        .iter()
        .copied()
        .filter(|&w| table.values[w as usize] == wanted)
        .min_by_key(|&w| table.counters[w as usize])?;
    Some((item_index, from, to))
}

/// See [`loopy_move`]: the first move, in item then edge order, whose result is a DRAW.
fn drawing_move(
    graph: &Digraph,
    table: &LoopyTable,
    items: &[(u32, u64)],
    summary: &SumSummary,
) -> Option<(usize, u32, u32)> {
    items
        .iter()
        .enumerate()
        .filter(|&(_, &(_, count))| count > 0)
        .find_map(|(item_index, &(from, _))| {
            graph
                .successors(from)
                .iter()
                .find(|&&to| summary.after_slide(table, from, to).outcome(table) == Outcome::Draw)
                .map(|&to| (item_index, from, to))
        })
}

/// What decides the outcome of a sum: the xor of its finite tokens and its infinite tokens.
/// Built one item at a time by [`SumSummary::add`], so callers need not collect items.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SumSummary {
    pub(super) nim_sum: u64,
    /// Tokens on infinite vertices, capped at 3: two or more draw whatever their number, and
    /// one slide changes the count by at most one.
    infinite_tokens: usize,
    /// The vertices of the first `min(infinite_tokens, 2)` infinite tokens.
    infinite_vertices: [u32; 2],
}

impl SumSummary {
    fn of(table: &LoopyTable, items: &[(u32, u64)]) -> Self {
        let mut summary = Self::default();
        for &(vertex, count) in items {
            summary.add(table, vertex, count);
        }
        summary
    }

    /// Adds `count` tokens on `vertex` (`< V`).
    pub(super) fn add(&mut self, table: &LoopyTable, vertex: u32, count: u64) {
        match table.value(vertex) {
            Some(value) if count % 2 == 1 => self.nim_sum ^= value,
            Some(_) => {}
            None => {
                for _ in 0..count.min(3) {
                    self.add_infinite(vertex);
                }
            }
        }
    }

    pub(super) fn outcome(&self, table: &LoopyTable) -> Outcome {
        match self.infinite_tokens {
            0 => Outcome::of_nim_sum(self.nim_sum),
            1 if table.has_follower_value(self.infinite_vertices[0], self.nim_sum) => Outcome::Win,
            _ => Outcome::Draw,
        }
    }

    /// The summary after one token slides from `from` to `to`.
    fn after_slide(&self, table: &LoopyTable, from: u32, to: u32) -> Self {
        let mut next = *self;
        match table.value(from) {
            Some(value) => next.nim_sum ^= value,
            None => next.remove_infinite(from),
        }
        match table.value(to) {
            Some(value) => next.nim_sum ^= value,
            None => next.add_infinite(to),
        }
        next
    }

    fn add_infinite(&mut self, vertex: u32) {
        if self.infinite_tokens < 2 {
            self.infinite_vertices[self.infinite_tokens] = vertex;
        }
        self.infinite_tokens = (self.infinite_tokens + 1).min(3);
    }

    /// Removes one token on the infinite `vertex`. From two, the other one becomes the first.
    /// From three or more, the tracked vertices may go stale, but [`Self::after_slide`] only
    /// adds at most one token afterwards, so two or more remain and they are never consulted.
    fn remove_infinite(&mut self, vertex: u32) {
        if self.infinite_tokens == 2 && self.infinite_vertices[0] == vertex {
            self.infinite_vertices[0] = self.infinite_vertices[1];
        }
        self.infinite_tokens -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::order::successors_first_order;
    use super::super::sliding::grundy_table;
    use super::*;
    use proptest::prelude::*;
    use std::collections::{HashMap, VecDeque};

    fn graph(n: u32, edges: &[(u32, u32)]) -> Digraph {
        Digraph::from_edges(n, edges).unwrap()
    }

    /// The outcome and nim-sum of a sum given as `(vertex, count)` items, by the summary the
    /// engine's evaluation path uses.
    fn evaluate_sum(table: &LoopyTable, items: &[(u32, u64)]) -> (Outcome, u64) {
        let summary = SumSummary::of(table, items);
        (summary.outcome(table), summary.nim_sum)
    }

    /// Every position of `tokens` tokens (sorted vertex lists) with its outcome, by retrograde
    /// analysis of the product game: nothing here knows about `γ`.
    struct ProductGame {
        positions: Vec<Vec<u32>>,
        index: HashMap<Vec<u32>, usize>,
        /// Distinct positions reachable in one move.
        moves: Vec<Vec<usize>>,
        outcomes: Vec<Outcome>,
    }

    impl ProductGame {
        fn solve(graph: &Digraph, tokens: usize) -> Self {
            let n = graph.vertex_count();
            let mut positions = vec![Vec::new()];
            for _ in 0..tokens {
                positions = positions
                    .into_iter()
                    .flat_map(|position: Vec<u32>| {
                        let lowest = position.last().copied().unwrap_or(0);
                        (lowest..n).map(move |v| {
                            let mut longer = position.clone();
                            longer.push(v);
                            longer
                        })
                    })
                    .collect();
            }
            let index: HashMap<Vec<u32>, usize> = positions
                .iter()
                .enumerate()
                .map(|(i, position)| (position.clone(), i))
                .collect();
            let moves: Vec<Vec<usize>> = positions
                .iter()
                .map(|position| {
                    let mut next = Vec::new();
                    for (i, &from) in position.iter().enumerate() {
                        for &to in graph.successors(from) {
                            let mut moved = position.clone();
                            moved[i] = to;
                            moved.sort_unstable();
                            next.push(index[&moved]);
                        }
                    }
                    next.sort_unstable();
                    next.dedup();
                    next
                })
                .collect();
            let outcomes = retrograde(&moves);
            Self {
                positions,
                index,
                moves,
                outcomes,
            }
        }
    }

    /// WIN / LOSE / DRAW of every state of a game given by its move lists: no moves is LOSE, a
    /// move to LOSE is WIN, all moves to WIN is LOSE, whatever stays undecided is DRAW.
    fn retrograde(moves: &[Vec<usize>]) -> Vec<Outcome> {
        let mut predecessors = vec![Vec::new(); moves.len()];
        for (state, next) in moves.iter().enumerate() {
            for &target in next {
                predecessors[target].push(state);
            }
        }
        let mut outcomes: Vec<Option<Outcome>> = vec![None; moves.len()];
        let mut undecided_moves: Vec<usize> = moves.iter().map(Vec::len).collect();
        let mut queue = VecDeque::new();
        for (state, next) in moves.iter().enumerate() {
            if next.is_empty() {
                outcomes[state] = Some(Outcome::Lose);
                queue.push_back(state);
            }
        }
        while let Some(target) = queue.pop_front() {
            let target_loses = outcomes[target] == Some(Outcome::Lose);
            for &state in &predecessors[target] {
                if outcomes[state].is_some() {
                    continue;
                }
                if target_loses {
                    outcomes[state] = Some(Outcome::Win);
                    queue.push_back(state);
                } else {
                    undecided_moves[state] -= 1;
                    if undecided_moves[state] == 0 {
                        outcomes[state] = Some(Outcome::Lose);
                        queue.push_back(state);
                    }
                }
            }
        }
        outcomes
            .into_iter()
            .map(|outcome| outcome.unwrap_or(Outcome::Draw))
            .collect()
    }

    /// A sorted position as `(vertex, count)` items, one per distinct vertex.
    fn grouped(position: &[u32]) -> Vec<(u32, u64)> {
        let mut items: Vec<(u32, u64)> = Vec::new();
        for &v in position {
            match items.last_mut() {
                Some((last, count)) if *last == v => *count += 1,
                _ => items.push((v, 1)),
            }
        }
        items
    }

    /// Plays a move on `items`, checking it is legal; returns the sorted resulting position.
    fn play(
        graph: &Digraph,
        items: &[(u32, u64)],
        (item_index, from, to): (usize, u32, u32),
    ) -> Vec<u32> {
        let (vertex, count) = items[item_index];
        assert_eq!(vertex, from, "the move starts on its item's vertex");
        assert!(count > 0, "the move takes a token that exists");
        assert!(
            graph.successors(from).contains(&to),
            "{from} -> {to} is an edge"
        );
        let mut position: Vec<u32> = Vec::new();
        for (i, &(v, count)) in items.iter().enumerate() {
            let count = if i == item_index { count - 1 } else { count };
            position.extend(std::iter::repeat_n(v, count as usize));
        }
        position.push(to);
        position.sort_unstable();
        position
    }

    /// Checks properties A, B, C, the `K` sets and the counters (see the module docs).
    fn check_gamma_properties(graph: &Digraph, table: &LoopyTable) {
        let n = graph.vertex_count();
        assert_eq!(table.values().len(), n as usize);
        for u in 0..n {
            let followers = graph.successors(u);
            let mut finite: Vec<u64> = followers.iter().filter_map(|&w| table.value(w)).collect();
            finite.sort_unstable();
            finite.dedup();
            let mex = finite.iter().zip(0..).take_while(|&(&v, i)| v == i).count() as u64;
            match table.value(u) {
                Some(a) => {
                    assert_eq!(mex, a, "A: γ({u}) is the mex of its finite followers");
                    assert!(table.counter(u) < u64::from(n));
                    assert!(table.infinite_followers(u).is_empty());
                    for &v in followers {
                        if table.value(v).is_some_and(|b| b < a) {
                            continue;
                        }
                        assert!(
                            graph.successors(v).iter().any(|&w| {
                                table.value(w) == Some(a) && table.counter(w) < table.counter(u)
                            }),
                            "B: {u} -> {v} is reversible to value {a} with a smaller counter"
                        );
                    }
                }
                None => {
                    assert_eq!(table.counter(u), INFINITE);
                    assert_eq!(table.infinite_followers(u), finite, "K of {u}");
                    assert!(
                        followers.iter().any(|&v| {
                            table.value(v).is_none() && !table.has_follower_value(v, mex)
                        }),
                        "C: {u} has an irreversible infinite follower for value {mex}"
                    );
                }
            }
        }
        let mut finite_by_counter: Vec<u32> =
            (0..n).filter(|&v| table.value(v).is_some()).collect();
        finite_by_counter.sort_unstable_by_key(|&v| table.counter(v));
        for pair in finite_by_counter.windows(2) {
            assert!(
                table.counter(pair[0]) < table.counter(pair[1]),
                "counters are distinct"
            );
            assert!(
                table.value(pair[0]) <= table.value(pair[1]),
                "counters follow values"
            );
        }
    }

    /// Compares evaluations and moves with the retrograde analysis of all positions of 1, 2
    /// and 3 tokens, and checks that the winning strategy ends every play.
    fn check_against_retrograde(graph: &Digraph) {
        let table = generalized_grundy(graph);
        check_gamma_properties(graph, &table);
        for tokens in 1..=3 {
            let game = ProductGame::solve(graph, tokens);
            let mut strategy = vec![None; game.positions.len()];
            for (state, position) in game.positions.iter().enumerate() {
                let expected = game.outcomes[state];
                let nim_sum = position
                    .iter()
                    .filter_map(|&v| table.value(v))
                    .fold(0, |x, value| x ^ value);
                let items = grouped(position);
                assert_eq!(
                    evaluate_sum(&table, &items),
                    (expected, nim_sum),
                    "{position:?}"
                );
                // The same position as single tokens in another order, and an empty item.
                let singles: Vec<(u32, u64)> = std::iter::once((position[0], 0))
                    .chain(position.iter().rev().map(|&v| (v, 1)))
                    .collect();
                assert_eq!(evaluate_sum(&table, &singles), (expected, nim_sum));
                for items in [&items, &singles] {
                    let chosen = loopy_move(graph, &table, items);
                    let Some(chosen) = chosen else {
                        assert_eq!(expected, Outcome::Lose, "{position:?} has a move");
                        continue;
                    };
                    let next = game.index[&play(graph, items, chosen)];
                    let wanted = match expected {
                        Outcome::Win => Outcome::Lose,
                        Outcome::Draw => Outcome::Draw,
                        Outcome::Lose => panic!("{position:?} is lost but got {chosen:?}"),
                    };
                    assert_eq!(game.outcomes[next], wanted, "{position:?} -> {chosen:?}");
                    if expected == Outcome::Win && items == &grouped(position) {
                        strategy[state] = Some(next);
                    }
                }
            }
            assert_strategy_terminates(&game, &strategy);
        }
    }

    /// The winner plays `strategy[s]` from every WIN state `s`, the loser any move. Every play
    /// ends iff the graph "WIN state -> state after the winner's move and any reply" has no
    /// cycle: Kahn's algorithm must remove every WIN state.
    fn assert_strategy_terminates(game: &ProductGame, strategy: &[Option<usize>]) {
        let replies =
            |state: usize| -> &[usize] { strategy[state].map_or(&[], |next| &game.moves[next]) };
        let wins: Vec<usize> = (0..strategy.len())
            .filter(|&s| strategy[s].is_some())
            .collect();
        let mut indegree = vec![0usize; strategy.len()];
        for &state in &wins {
            for &reply in replies(state) {
                assert!(
                    strategy[reply].is_some(),
                    "every reply to a winning move is WIN again"
                );
                indegree[reply] += 1;
            }
        }
        let mut free: Vec<usize> = wins.iter().copied().filter(|&s| indegree[s] == 0).collect();
        let mut removed = 0;
        while let Some(state) = free.pop() {
            removed += 1;
            for &reply in replies(state) {
                indegree[reply] -= 1;
                if indegree[reply] == 0 {
                    free.push(reply);
                }
            }
        }
        assert_eq!(
            removed,
            wins.len(),
            "the winning strategy can be made to cycle"
        );
    }

    fn small_graph() -> impl Strategy<Value = Digraph> {
        (1u32..=8)
            .prop_flat_map(|n| {
                (
                    Just(n),
                    prop::collection::vec((0..n, 0..n), 0..=3 * n as usize),
                )
            })
            .prop_map(|(n, edges)| graph(n, &edges))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn agrees_with_retrograde_analysis(g in small_graph()) {
            check_against_retrograde(&g);
        }

        #[test]
        fn acyclic_graphs_match_the_grundy_table(
            n in 1u32..=40,
            raw in prop::collection::vec((any::<u32>(), any::<u32>()), 0..160),
        ) {
            // Edges from larger to smaller indices: acyclic, with multi-edges.
            let edges: Vec<(u32, u32)> = raw
                .iter()
                .map(|&(a, b)| (a % n, b % n))
                .filter(|&(a, b)| a != b)
                .map(|(a, b)| (a.max(b), a.min(b)))
                .collect();
            let g = graph(n, &edges);
            let table = generalized_grundy(&g);
            let expected = grundy_table(&g, &successors_first_order(&g).unwrap());
            prop_assert_eq!(table.values(), &expected[..]);
            check_gamma_properties(&g, &table);
        }
    }

    #[test]
    fn two_cycle_draws() {
        let g = graph(2, &[(0, 1), (1, 0)]);
        let table = generalized_grundy(&g);
        assert_eq!(table.values(), &[INFINITE, INFINITE]);
        assert_eq!(table.infinite_followers(0), &[] as &[u64]);
        assert_eq!(evaluate_sum(&table, &[(0, 1)]), (Outcome::Draw, 0));
        assert_eq!(loopy_move(&g, &table, &[(0, 1)]), Some((0, 0, 1)));
        check_against_retrograde(&g);
    }

    #[test]
    fn lone_self_loop_draws() {
        let g = graph(1, &[(0, 0)]);
        let table = generalized_grundy(&g);
        assert_eq!(table.value(0), None);
        assert_eq!(table.counter(0), INFINITE);
        assert_eq!(loopy_move(&g, &table, &[(0, 1)]), Some((0, 0, 0)));
        check_against_retrograde(&g);
    }

    #[test]
    fn self_loop_with_an_exit_is_infinite_not_one() {
        // 0 -> {0, 1}: one token wins by moving to 1, but γ(0) cannot be 1: two tokens on 0
        // would then cancel, while in fact neither player wants to leave the loop first.
        let g = graph(2, &[(0, 0), (0, 1)]);
        let table = generalized_grundy(&g);
        assert_eq!(table.values(), &[INFINITE, 0]);
        assert_eq!(table.infinite_followers(0), &[0]);
        assert_eq!(evaluate_sum(&table, &[(0, 1)]), (Outcome::Win, 0));
        assert_eq!(loopy_move(&g, &table, &[(0, 1)]), Some((0, 0, 1)));
        assert_eq!(evaluate_sum(&table, &[(0, 2)]).0, Outcome::Draw);
        assert_eq!(loopy_move(&g, &table, &[(0, 2)]), Some((0, 0, 0)));
        assert_eq!(evaluate_sum(&table, &[(1, 1), (0, 1)]).0, Outcome::Win);
        assert_eq!(loopy_move(&g, &table, &[(1, 1), (0, 1)]), Some((1, 0, 1)));
        check_against_retrograde(&g);
    }

    #[test]
    fn reversible_cycle_is_finite_and_the_counter_picks_the_exit() {
        // 0 <-> 1 -> 2: γ = [0, 1, 0] despite the cycle; labelled 2, then 0, then 1.
        let g = graph(3, &[(0, 1), (1, 0), (1, 2)]);
        let table = generalized_grundy(&g);
        assert_eq!(table.values(), &[0, 1, 0]);
        assert_eq!([0, 1, 2].map(|v| table.counter(v)), [1, 2, 0]);
        // Tokens on 0 and 1: moving 1 -> 0 would also leave nim-sum 0, but lets the opponent
        // raise 0 -> 1 forever; 1 -> 2 has the smaller counter and makes progress.
        assert_eq!(evaluate_sum(&table, &[(0, 1), (1, 1)]), (Outcome::Win, 1));
        assert_eq!(loopy_move(&g, &table, &[(0, 1), (1, 1)]), Some((1, 1, 2)));
        check_against_retrograde(&g);
    }

    #[test]
    fn counts_are_token_multiplicities() {
        let g = graph(4, &[(0, 0), (0, 1), (2, 1), (3, 3)]);
        let table = generalized_grundy(&g);
        assert_eq!(table.values(), &[INFINITE, 0, 1, INFINITE]);
        // Empty items are ignored, even counts of a finite vertex cancel.
        assert_eq!(evaluate_sum(&table, &[(3, 0), (2, 4)]), (Outcome::Lose, 0));
        assert_eq!(loopy_move(&g, &table, &[(3, 0), (2, 4)]), None);
        assert_eq!(evaluate_sum(&table, &[(2, u64::MAX)]), (Outcome::Win, 1));
        // One infinite token: WIN iff the others' nim-sum is in K = {0}.
        assert_eq!(evaluate_sum(&table, &[(0, 1), (2, 2)]).0, Outcome::Win);
        assert_eq!(evaluate_sum(&table, &[(0, 1), (2, 1)]).0, Outcome::Draw);
        // Many tokens on an infinite vertex are many infinite tokens, never cancelling.
        assert_eq!(evaluate_sum(&table, &[(0, u64::MAX)]).0, Outcome::Draw);
        assert_eq!(evaluate_sum(&table, &[(3, 2)]).0, Outcome::Draw);
        // From a draw with two infinite tokens, leaving the loop would hand over a win.
        assert_eq!(loopy_move(&g, &table, &[(0, 2)]), Some((0, 0, 0)));
    }

    /// A deterministic xorshift generator: tests stay reproducible without a dependency.
    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    fn random_graph(n: u32, edge_count: usize, mut seed: u64) -> Digraph {
        let mut vertex = || (xorshift(&mut seed) % u64::from(n)) as u32;
        let edges: Vec<(u32, u32)> = (0..edge_count).map(|_| (vertex(), vertex())).collect();
        graph(n, &edges)
    }

    #[test]
    fn large_random_cyclic_graph() {
        let (n, edge_count) = (100_000, 1_000_000);
        let g = random_graph(n, edge_count, 0x9E37_79B9_7F4A_7C15);
        let table = generalized_grundy(&g);
        check_gamma_properties(&g, &table);
        // values, counters, K offsets, and K sets no larger than the edge count.
        assert!(table.heap_bytes() <= 16 * (n as usize + 1) + 8 * edge_count);
    }

    #[test]
    fn large_sparse_graph_mixes_finite_and_infinite_values() {
        // Three edges per vertex: cycles everywhere, yet many finite values over several stages.
        let g = random_graph(100_000, 300_000, 0x2545_F491_4F6C_DD1D);
        let table = generalized_grundy(&g);
        check_gamma_properties(&g, &table);
        assert!(table.values().contains(&INFINITE));
        assert!(table.values().iter().any(|&v| (2..INFINITE).contains(&v)));
    }

    /// Vertex `i < k` moves to every `j < i`, and the top vertex also to itself: the values
    /// are `0..k-1` one stage each, and every stage revisits the remaining out-edges, so the
    /// labelling costs about `k^3 / 2` edge visits (out-edges of the unlabelled vertices,
    /// in-edges of the answered ones) for `k^2 / 2` edges.
    fn tournament_with_a_loop(k: u32) -> Digraph {
        let mut edges: Vec<(u32, u32)> = (0..k).flat_map(|i| (0..i).map(move |j| (i, j))).collect();
        edges.push((k - 1, k - 1));
        graph(k, &edges)
    }

    #[test]
    fn work_budget_stops_a_cubic_labelling() {
        let k = 300;
        let g = tournament_with_a_loop(k);
        let table = generalized_grundy(&g);
        check_gamma_properties(&g, &table);
        assert_eq!(table.value(k - 2), Some(u64::from(k - 2)));
        let budget = 1_000_000;
        let error = generalized_grundy_within(&g, budget).unwrap_err();
        assert_eq!((error.budget, error.vertex_count), (budget, k));
        // Stopped part-way, at most one stage (3E edge visits) past the budget.
        assert!(error.work > budget);
        assert!(error.work <= budget + 3 * g.edge_count(), "{error:?}");
        assert!((1..u64::from(k) - 1).contains(&error.stage), "{error:?}");
        assert_eq!(
            u64::from(error.labelled),
            error.stage,
            "one vertex per stage"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "the cyclic labelling stopped in stage {0} (finite values 0..{0} given to {0} of \
                 {k} vertices) after {1} edge visits, over the budget of {budget}",
                error.stage, error.work
            )
        );
        // k^3 / 2 = 13.5 million: 20 million is enough, and gives the same table.
        assert_eq!(generalized_grundy_within(&g, 20_000_000), Ok(table));
    }

    #[test]
    fn long_cycle_does_not_recurse() {
        let n = 1_000_000u32;
        let edges: Vec<(u32, u32)> = (0..n).map(|v| (v, (v + 1) % n)).collect();
        let table = generalized_grundy(&graph(n, &edges));
        assert!(table.values().iter().all(|&v| v == INFINITE));
    }
}
