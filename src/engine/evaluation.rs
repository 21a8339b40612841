//! Positions on an analysed game: their verdict ([`Evaluation`]), a winning move ([`Move`]),
//! and the analysis of a position with every move (remoteness, best first).

use std::collections::HashMap;

use super::analysis::{Analysis, Table};
use super::convention::PlayConvention;
use super::interrupt::{Cancelled, Interrupt};
use super::outcome::Outcome;
use super::remoteness::{AnalysisOptions, PositionAnalysis, Remoteness};
use super::{loopy, position, remoteness, split, sum_search};

/// A position item referred to a vertex that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("vertex {vertex} is out of range (vertex_count {vertex_count})")]
pub struct VertexOutOfRange {
    /// Index of the item in the position.
    pub index: usize,
    /// The vertex named by the item.
    pub vertex: u32,
    /// The graph's vertex count: valid vertices are `0..vertex_count`.
    pub vertex_count: u32,
}

/// A move from a position, as returned by [`Analysis::best_move`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Move {
    /// Token sliding: move one unit of item `item_index` from `from` to its successor `to`.
    Slide {
        /// Index of the moved item in the position.
        item_index: usize,
        /// The vertex the unit leaves.
        from: u32,
        /// The successor of `from` the unit moves to.
        to: u32,
    },
    /// Addition-Subtraction: take one unit from `vertex` (the vertex of item `item_index`) and
    /// add one unit to each of `odd_targets` plus `2 * pair_count` units to `pair_target`.
    /// `odd_targets` are distinct successors in increasing order, and
    /// `odd_targets.len() + 2 * pair_count == K_vertex`.
    Split {
        /// Index of the moved item in the position.
        item_index: usize,
        /// The vertex the unit leaves.
        vertex: u32,
        /// Successors that get one unit each.
        odd_targets: Vec<u32>,
        /// The successor that gets the `2 * pair_count` padding units, if any.
        pair_target: Option<u32>,
        /// Pairs of units added to `pair_target`.
        pair_count: u32,
    },
}

/// Split picks already found for one [`Analysis`], by `(vertex, target value)`: see
/// [`Analysis::best_move_memo`]. Holds at most [`MoveMemo::MAX_ENTRIES`] entries, and starts
/// over when full. Use one memo with one analysis only.
#[derive(Debug, Default)]
pub struct MoveMemo {
    split_picks: HashMap<(u32, u64), Option<split::SplitPicks>>,
}

impl MoveMemo {
    /// Bound on the entries: each holds at most `K` successors of its vertex.
    pub const MAX_ENTRIES: usize = 4096;

    fn split_picks(
        &mut self,
        vertex: u32,
        target: u64,
        find: impl FnOnce() -> Option<split::SplitPicks>,
    ) -> Option<split::SplitPicks> {
        if let Some(picks) = self.split_picks.get(&(vertex, target)) {
            return picks.clone();
        }
        if self.split_picks.len() >= Self::MAX_ENTRIES {
            self.split_picks.clear();
        }
        let picks = find();
        self.split_picks.insert((vertex, target), picks.clone());
        picks
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.split_picks.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.split_picks.is_empty()
    }
}

/// The verdict on one position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evaluation {
    /// The outcome for the player to move.
    pub outcome: Outcome,
    /// Xor of the finite values of the position's units.
    pub nim_sum: u64,
}

impl Analysis {
    /// A winning move of the Addition-Subtraction game: a unit at `v` whose value has the
    /// nim-sum's top bit moves to an option worth `g(v) ^ nim_sum` (below `g(v)`, so it is an
    /// option by the mex), realised by the vertex's own method.
    fn split_move(
        &self,
        table: &split::SplitTable,
        items: &[(u32, u64)],
        nim_sum: u64,
        memo: &mut MoveMemo,
    ) -> Option<Move> {
        let split_counts = self.game.split_counts.as_deref()?;
        let (item_index, vertex, target) =
            items
                .iter()
                .enumerate()
                .find_map(|(item_index, &(vertex, count))| {
                    let value = table.values[vertex as usize];
                    let target = value ^ nim_sum;
                    (count & 1 == 1 && target < value).then_some((item_index, vertex, target))
                })?;
        let picks = memo.split_picks(vertex, target, || {
            split::find_split_picks(&self.game.graph, split_counts, table, vertex, target)
        })?;
        Some(Move::Split {
            item_index,
            vertex,
            odd_targets: picks.odd_targets,
            pair_target: picks.pair_target,
            pair_count: picks.pair_count,
        })
    }

    /// On a game with split counts, one winning move from each vertex of the position from
    /// which one exists (each vertex with a unit and an out-edge whose move can bring the
    /// nim-sum to 0), by increasing vertex, at most `max_moves` of them; and how many more
    /// vertices have one. Empty for other games and for LOSE positions. Each vertex costs one
    /// search of its picks (memoised in `memo`), never a listing of all of them.
    pub fn winning_split_moves(
        &self,
        items: &[(u32, u64)],
        evaluation: &Evaluation,
        memo: &mut MoveMemo,
        max_moves: u32,
    ) -> (Vec<Move>, u64) {
        let (Table::Split(table), Some(split_counts)) =
            (&self.table, self.game.split_counts.as_deref())
        else {
            return (Vec::new(), 0);
        };
        if evaluation.outcome != Outcome::Win {
            return (Vec::new(), 0);
        }
        let mut vertices: Vec<(u32, usize)> = items
            .iter()
            .enumerate()
            .filter(|&(_, &(vertex, count))| count > 0 && self.game.graph.out_degree(vertex) > 0)
            .map(|(item_index, &(vertex, _))| (vertex, item_index))
            .collect();
        vertices.sort_unstable();
        vertices.dedup_by_key(|&mut (vertex, _)| vertex);
        let mut moves = Vec::new();
        let mut omitted = 0;
        for (vertex, item_index) in vertices {
            // Moving a unit off `vertex` flips its parity (its value leaves or joins the
            // xor); the picks must make up the rest.
            let target = table.values[vertex as usize] ^ evaluation.nim_sum;
            let Some(picks) = memo.split_picks(vertex, target, || {
                split::find_split_picks(&self.game.graph, split_counts, table, vertex, target)
            }) else {
                continue;
            };
            if moves.len() >= max_moves as usize {
                omitted += 1;
                continue;
            }
            moves.push(Move::Split {
                item_index,
                vertex,
                odd_targets: picks.odd_targets,
                pair_target: picks.pair_target,
                pair_count: picks.pair_count,
            });
        }
        (moves, omitted)
    }

    /// Evaluates a position given as `(vertex, count)` items: `count` units on `vertex`.
    /// Token lists are items with count 1; dense value vectors are `(v, values[v])`.
    pub fn evaluate(&self, items: &[(u32, u64)]) -> Result<Evaluation, VertexOutOfRange> {
        self.evaluate_units(items.iter().copied())
    }

    /// Evaluates a position given as a token list (one unit per entry): the same as
    /// [`Analysis::evaluate`] with count-1 items, without building them.
    pub fn evaluate_tokens(&self, tokens: &[u32]) -> Result<Evaluation, VertexOutOfRange> {
        self.evaluate_units(tokens.iter().map(|&vertex| (vertex, 1)))
    }

    /// The nim-sums of many token positions at once, appended to `nim_sums`: position `i` is
    /// the next `counts[i]` entries of `vertices` (a packed batch). The outcome of each is
    /// [`Outcome::of_nim_sum`], as from [`Analysis::evaluate_tokens`].
    ///
    /// Only for tables of finite values (acyclic token sliding, split counts) whose every
    /// vertex is in range, checked once for the whole batch, so that each position is a plain
    /// xor loop. Otherwise (a cyclic graph, a vertex out of range, `counts` not adding up to
    /// `vertices.len()`) it returns `None` and leaves `nim_sums` as it was: the caller then
    /// evaluates the positions one by one, which names what is wrong.
    pub fn nim_sums_of_token_lists(
        &self,
        counts: &[u32],
        vertices: &[u32],
        nim_sums: &mut Vec<u64>,
    ) -> Option<()> {
        let (Table::Acyclic(values) | Table::Split(split::SplitTable { values, .. })) = &self.table
        else {
            return None;
        };
        let values = values.as_slice();
        // Compares folded into one flag (a vectorised pass), not a search that stops early.
        let vertex_count = values.len().min(u32::MAX as usize) as u32;
        let out_of_range = vertices
            .iter()
            .fold(false, |out, &vertex| out | (vertex >= vertex_count));
        let total: u64 = counts.iter().map(|&count| u64::from(count)).sum();
        if total != vertices.len() as u64 || out_of_range {
            return None;
        }
        // No branch on each position's length (a mix of lengths mispredicts one a position):
        // the running xor of the values, a chunk of tokens at a time, and each position's
        // nim-sum the xor of the running values at its two ends, written into the answers'
        // slots (a push read the vector's length and capacity back from memory after every
        // store: 2-4% of this function).
        const CHUNK: usize = 1024;
        let mut running_at = [0u64; CHUNK + 1];
        let first_new = nim_sums.len();
        nim_sums.resize(first_new + counts.len(), 0);
        let mut answers = nim_sums[first_new..].iter_mut().zip(counts);
        let Some((mut answer, &first)) = answers.next() else {
            return Some(());
        };
        // The position being answered ends at token `end`; the running xor where it starts.
        let mut end = first as usize;
        let mut at_start = 0;
        let mut running = 0;
        for (index, chunk) in vertices.chunks(CHUNK).enumerate() {
            let base = index * CHUNK;
            running_at[0] = running;
            for (slot, &vertex) in running_at[1..].iter_mut().zip(chunk) {
                // No bounds check per token (it cost 9-11% of this function, criterion's
                // `acyclic_100k_queries_packed`): every vertex was checked above.
                debug_assert!((vertex as usize) < values.len());
                // SAFETY: `out_of_range` is false, so every entry of `vertices` is below
                // `vertex_count`, which is at most `values.len()`; neither slice has changed
                // since (both are shared borrows).
                running ^= unsafe { *values.get_unchecked(vertex as usize) };
                *slot = running;
            }
            let chunk_end = base + chunk.len();
            while end <= chunk_end {
                let at_end = running_at[end - base];
                *answer = at_start ^ at_end;
                at_start = at_end;
                match answers.next() {
                    Some((next, &length)) => {
                        answer = next;
                        end += length as usize;
                    }
                    None => return Some(()),
                }
            }
        }
        // No tokens at all: every position is empty (the answers are zero already).
        Some(())
    }

    /// The one evaluation path: checks each vertex and folds it in, in one pass and without
    /// allocating. Reports the first out-of-range vertex.
    fn evaluate_units(
        &self,
        units: impl Iterator<Item = (u32, u64)>,
    ) -> Result<Evaluation, VertexOutOfRange> {
        let vertex_count = self.game.graph.vertex_count();
        let out_of_range = |index, vertex| VertexOutOfRange {
            index,
            vertex,
            vertex_count,
        };
        match &self.table {
            Table::Acyclic(values) | Table::Split(split::SplitTable { values, .. }) => {
                let mut nim_sum = 0;
                for (index, (vertex, count)) in units.enumerate() {
                    let value = values
                        .get(vertex as usize)
                        .ok_or_else(|| out_of_range(index, vertex))?;
                    if count & 1 == 1 {
                        nim_sum ^= value;
                    }
                }
                Ok(Evaluation {
                    outcome: Outcome::of_nim_sum(nim_sum),
                    nim_sum,
                })
            }
            Table::Loopy(table) => {
                let mut summary = loopy::SumSummary::default();
                for (index, (vertex, count)) in units.enumerate() {
                    if vertex >= vertex_count {
                        return Err(out_of_range(index, vertex));
                    }
                    summary.add(table, vertex, count);
                }
                Ok(Evaluation {
                    outcome: summary.outcome(table),
                    nim_sum: summary.nim_sum,
                })
            }
        }
    }

    /// A winning move for a WIN position, a draw-keeping move for a DRAW position (when there
    /// is any move), None for LOSE. `items` must have passed [`Analysis::evaluate`], which
    /// produced `evaluation`. O(sum of out-degrees of the items), no pass over the graph, except
    /// on split-count games (see [`Analysis::best_move_memo`]) and for one token alone on an
    /// acyclic graph: its winning move is the fastest (to a follower of least remoteness), read
    /// from the remoteness table, which the first such call computes if
    /// [`Analysis::prepare_remoteness`] did not.
    pub fn best_move(&self, items: &[(u32, u64)], evaluation: &Evaluation) -> Option<Move> {
        self.best_move_memo(items, evaluation, &mut MoveMemo::default())
    }

    /// [`Analysis::best_move`], remembering in `memo` the split picks it finds. A split move
    /// reruns the method of its vertex (up to the per-vertex budget, 2^26 steps by default),
    /// so callers answering many positions of one game keep one memo for all of them.
    pub fn best_move_memo(
        &self,
        items: &[(u32, u64)],
        evaluation: &Evaluation,
        memo: &mut MoveMemo,
    ) -> Option<Move> {
        if evaluation.outcome == Outcome::Lose {
            return None;
        }
        let graph = &self.game.graph;
        let values = match &self.table {
            Table::Acyclic(values) => values,
            Table::Split(table) => return self.split_move(table, items, evaluation.nim_sum, memo),
            Table::Loopy(table) => {
                let (item_index, from, to) = loopy::loopy_move(graph, table, items)?;
                return Some(Move::Slide {
                    item_index,
                    from,
                    to,
                });
            }
        };
        let nim_sum = evaluation.nim_sum;
        // One token alone: of its winning moves, the fastest (the follower of least
        // remoteness, which the table holds). In a sum, the first winning move found.
        let mut present = items.iter().filter(|&&(_, count)| count > 0);
        let single = matches!((present.next(), present.next()), (Some(&(_, 1)), None));
        let fastest = if single {
            self.remoteness_cells()
        } else {
            None
        };
        items
            .iter()
            .enumerate()
            .filter(|&(_, &(_, count))| count > 0)
            .find_map(|(item_index, &(from, _))| {
                let wanted = values[from as usize] ^ nim_sum;
                if wanted >= values[from as usize] {
                    return None;
                }
                let mut winning = graph
                    .successors(from)
                    .iter()
                    .copied()
                    .filter(|&w| values[w as usize] == wanted);
                let to = match fastest {
                    Some(remoteness) => winning.min_by_key(|&w| remoteness[w as usize])?,
                    None => winning.next()?,
                };
                Some(Move::Slide {
                    item_index,
                    from,
                    to,
                })
            })
    }
}

/// Remoteness and position analysis (see [`remoteness`]).
impl Analysis {
    /// The remoteness of one token on `vertex`; `None` for a DRAW, a vertex out of range, or
    /// a game with split counts.
    pub fn remoteness(&self, vertex: u32) -> Option<u32> {
        let remoteness = *self.remoteness_cells()?.get(vertex as usize)?;
        (remoteness != remoteness::DRAW).then_some(remoteness)
    }

    /// The remoteness of one token on every vertex, [`remoteness::DRAW`] for draws; `None` for a game
    /// with split counts.
    ///
    /// These answers compute the table on first use if it is not ready (O(V + E), on the
    /// calling thread): see [`Analysis::prepare_remoteness`].
    pub fn remoteness_table(&self) -> Option<&[u32]> {
        self.remoteness_cells()
    }

    /// Analyses the token-sliding position with one token on each entry of `tokens` (repeats
    /// allowed): outcome, nim-sum, remoteness, and every distinct move `(from, to)` with the
    /// outcome for its mover and the remoteness of where it leads, best first.
    ///
    /// One token is answered from the table. Several tokens are a sum whose remoteness is
    /// searched exactly over its positions, sharing one memo and
    /// [`AnalysisOptions::position_budget`] between the position and its moves; beyond the
    /// budget a remoteness is [`Remoteness::OverBudget`], while outcomes stay exact (they come
    /// from the table). For a game with split counts only the outcome and nim-sum are
    /// answered (see the module docs).
    pub fn analyse_position(
        &self,
        tokens: &[u32],
        options: &AnalysisOptions,
    ) -> Result<PositionAnalysis, VertexOutOfRange> {
        self.analyse_position_with(tokens, options, None, &mut || {})
    }

    /// [`Analysis::analyse_position`], stopping with [`Cancelled`] once `interrupt` is raised
    /// (read every 16K units of the search's work: tens of microseconds). `progress` is
    /// called on this thread at each of those reads, so only by a search that lasts: a caller
    /// holding earlier answers for someone can send them then, rather than after the search.
    pub fn analyse_position_interruptible(
        &self,
        tokens: &[u32],
        options: &AnalysisOptions,
        interrupt: &Interrupt,
        progress: &mut dyn FnMut(),
    ) -> Result<Result<PositionAnalysis, VertexOutOfRange>, Cancelled> {
        let analysis = self.analyse_position_with(tokens, options, Some(interrupt), progress);
        interrupt.check()?;
        Ok(analysis)
    }

    fn analyse_position_with(
        &self,
        tokens: &[u32],
        options: &AnalysisOptions,
        interrupt: Option<&Interrupt>,
        progress: &mut dyn FnMut(),
    ) -> Result<PositionAnalysis, VertexOutOfRange> {
        let evaluation = self.evaluate_tokens(tokens)?;
        let Some(table) = self.remoteness_cells() else {
            return Ok(PositionAnalysis {
                outcome: evaluation.outcome,
                nim_sum: evaluation.nim_sum,
                remoteness: Remoteness::UnavailableForSplitCounts,
                moves: Vec::new(),
                moves_omitted: 0,
                positions_searched: 0,
            });
        };
        let outcome = |position: &[u32]| {
            let tokens = position.iter().filter(|&&v| v != sum_search::SINK);
            self.evaluate_units(tokens.map(|&v| (v, 1)))
                .expect("positions hold vertices of the graph")
                .outcome
        };
        // The outcome after one slide, from what decides the position's own (computed once).
        let summary = match &self.table {
            Table::Loopy(table) => {
                let mut summary = loopy::SumSummary::default();
                for &vertex in tokens {
                    summary.add(table, vertex, 1);
                }
                Some((table, summary))
            }
            Table::Acyclic(_) | Table::Split(_) => None,
        };
        let values = self.values();
        let outcome_after_slide = |from: u32, to: u32| match &summary {
            Some((table, summary)) => summary.after_slide(table, from, to).outcome(table),
            None => Outcome::of_nim_sum(
                evaluation.nim_sum ^ values[from as usize] ^ values[to as usize],
            ),
        };
        let rules = sum_search::SumRules {
            graph: &self.game.graph,
            convention: PlayConvention::Normal,
            outcome: Some(&outcome),
            outcome_after_slide: Some(&outcome_after_slide),
        };
        Ok(position::analyse_sliding(
            &rules,
            table,
            tokens,
            (evaluation.outcome, evaluation.nim_sum),
            options,
            interrupt,
            progress,
        ))
    }
}
