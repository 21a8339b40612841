//! Moves on a cyclic graph: the winning or draw-keeping move of a sum of tokens, and the
//! summary (nim-sum and infinite tokens) that decides a sum's outcome.

use super::LoopyTable;
use crate::engine::graph::Digraph;
use crate::engine::outcome::Outcome;

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
pub(in crate::engine) struct SumSummary {
    pub(in crate::engine) nim_sum: u64,
    /// Tokens on infinite vertices, capped at 3: two or more draw whatever their number, and
    /// one slide changes the count by at most one.
    infinite_tokens: usize,
    /// The vertices of the first `min(infinite_tokens, 2)` infinite tokens.
    infinite_vertices: [u32; 2],
}

impl SumSummary {
    pub(super) fn of(table: &LoopyTable, items: &[(u32, u64)]) -> Self {
        let mut summary = Self::default();
        for &(vertex, count) in items {
            summary.add(table, vertex, count);
        }
        summary
    }

    /// Adds `count` tokens on `vertex` (`< V`).
    pub(in crate::engine) fn add(&mut self, table: &LoopyTable, vertex: u32, count: u64) {
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

    pub(in crate::engine) fn outcome(&self, table: &LoopyTable) -> Outcome {
        match self.infinite_tokens {
            0 => Outcome::of_nim_sum(self.nim_sum),
            1 if table.has_follower_value(self.infinite_vertices[0], self.nim_sum) => Outcome::Win,
            _ => Outcome::Draw,
        }
    }

    /// The summary after one token slides from `from` to `to`.
    pub(in crate::engine) fn after_slide(&self, table: &LoopyTable, from: u32, to: u32) -> Self {
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
