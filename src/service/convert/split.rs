//! Responses cut to fit the message size limit: the verdicts of one batch may be more bytes
//! than `max_message_bytes` (with `explain`, or with large nim-sums), and a client with the
//! same limit refuses a larger message. [`fit_response`] splits them over several messages,
//! in order; every verdict keeps its query id, so the client sees the same sequence. The
//! reverse, packed verdicts joined into one message ([`append_packed`], for the hand-off of
//! early verdicts), is here too: every packed column is named in these two places.

use std::ops::Range;

use prost::Message;

use crate::proto::{EvaluateResponse, PackedQueryError, PackedVerdicts, Verdict};
use crate::wire::size;

/// Appends `response` to `out` as one message when it fits in `max_bytes`, else as several,
/// each under `max_bytes` (a single verdict larger than that alone goes in a message of its
/// own). The full verdicts come first, then the packed ones, as in the original.
pub(crate) fn fit_response(
    response: EvaluateResponse,
    max_bytes: usize,
    out: &mut Vec<EvaluateResponse>,
) {
    let budget = max_bytes.saturating_sub(size::PACKED_VERDICTS_FRAME).max(1);
    if size_bound(&response).is_some_and(|bound| bound <= budget)
        || response.encoded_len() <= budget
    {
        out.push(response);
        return;
    }
    let EvaluateResponse {
        verdicts,
        graph,
        packed_verdicts,
    } = response;
    let mut part = Part::new(EvaluateResponse {
        graph,
        ..Default::default()
    });
    for mut verdict in verdicts {
        let mut cost = size::verdict_field_len(&verdict);
        if cost > budget {
            cost = fit_moves(&mut verdict, budget);
        }
        part.make_room(cost, budget, out);
        part.size += cost;
        part.message.verdicts.push(verdict);
    }
    if let Some(packed) = packed_verdicts {
        split_packed(packed, budget, &mut part, out);
    }
    part.finish(out);
}

/// Cuts the listed moves of a verdict larger than `budget` from its end (the worst ones;
/// counted in `moves_omitted`, as those left out by `max_moves` are) until it fits, so that
/// no message exceeds the limit, compressed or not; returns its size then. The best move
/// stays whenever the verdict fits with it: a verdict without moves is some tens of bytes.
fn fit_moves(verdict: &mut Verdict, budget: usize) -> usize {
    let mut cost = size::verdict_field_len(verdict);
    // One move at a time from the end would be quadratic in the moves: halve the excess's
    // share instead, then step.
    while cost > budget && !verdict.moves.is_empty() {
        let per_move = cost.div_ceil(verdict.moves.len() + 1).max(1);
        let excess = (cost - budget)
            .div_ceil(per_move)
            .clamp(1, verdict.moves.len());
        let kept = verdict.moves.len() - excess;
        verdict.moves_omitted = verdict.moves_omitted.saturating_add(excess as u64);
        verdict.moves.truncate(kept);
        cost = size::verdict_field_len(verdict);
    }
    cost
}

/// A cheap upper bound of the encoded size of a response of packed verdicts only (the common
/// case: no `explain`, no analysis, no malformed queries), without the pass over every
/// nim-sum that `encoded_len` makes; `None` for other responses.
fn size_bound(response: &EvaluateResponse) -> Option<usize> {
    let packed = response.packed_verdicts.as_ref()?;
    let plain = response.verdicts.is_empty()
        && response.graph.is_none()
        && packed.errors.is_empty()
        && packed.move_counts.is_empty()
        && packed.remotenesses.is_empty();
    plain.then(|| size::packed_verdicts_bound(packed.outcomes.len()))
}

/// The message being filled, with its size so far.
struct Part {
    message: EvaluateResponse,
    size: usize,
    /// Whether it holds any verdict yet (an empty part is never sent for lack of room).
    used: bool,
}

impl Part {
    fn new(message: EvaluateResponse) -> Self {
        Self {
            size: message.encoded_len(),
            used: message.graph.is_some(),
            message,
        }
    }

    /// Sends the part on when `cost` more bytes would not fit and it holds something.
    fn make_room(&mut self, cost: usize, budget: usize, out: &mut Vec<EvaluateResponse>) {
        if self.size + cost > budget && (self.used || !self.message.verdicts.is_empty()) {
            let full = std::mem::replace(self, Self::new(EvaluateResponse::default()));
            full.finish(out);
        }
        self.used = true;
    }

    fn finish(self, out: &mut Vec<EvaluateResponse>) {
        if self.used || !self.message.verdicts.is_empty() {
            out.push(self.message);
        }
    }
}

/// Splits packed verdicts into runs of consecutive queries, each run in the part being
/// filled (after its full verdicts) or in a message of its own.
fn split_packed(
    mut packed: PackedVerdicts,
    budget: usize,
    part: &mut Part,
    out: &mut Vec<EvaluateResponse>,
) {
    let mut errors = std::mem::take(&mut packed.errors).into_iter().peekable();
    let mut run = Run::default();
    let mut next_move = 0;
    for index in 0..packed.outcomes.len() {
        let moves = packed.move_counts.get(index).map_or(0, |&n| n as usize);
        let mut cost = size::packed_verdict_len(&packed, index, moves);
        let mut own_errors = Vec::new();
        while let Some(error) = errors.next_if(|e| e.index as usize == index) {
            cost += size::packed_error_len(&error);
            own_errors.push(error);
        }
        if part.size + run.size + cost > budget && (part.used || !run.is_empty(index)) {
            run.flush(&packed, index, next_move, part);
            let full = std::mem::replace(part, Part::new(EvaluateResponse::default()));
            full.finish(out);
        }
        part.used = true;
        run.size += cost;
        run.errors.extend(own_errors);
        next_move += moves;
    }
    run.flush(&packed, packed.outcomes.len(), next_move, part);
}

/// The packed verdicts of the part being filled: queries `start..` of the original, and
/// their moves `first_move..` of its move columns.
#[derive(Default)]
struct Run {
    start: usize,
    first_move: usize,
    size: usize,
    errors: Vec<PackedQueryError>,
}

impl Run {
    fn is_empty(&self, end: usize) -> bool {
        self.start == end
    }

    /// Puts queries `start..end` (moves `first_move..end_move`) into `part` as its packed
    /// verdicts, and starts the next run there.
    fn flush(&mut self, packed: &PackedVerdicts, end: usize, end_move: usize, part: &mut Part) {
        if self.is_empty(end) {
            return;
        }
        let errors = std::mem::take(&mut self.errors);
        part.message.packed_verdicts = Some(slice_packed(
            packed,
            self.start..end,
            self.first_move..end_move,
            errors,
        ));
        part.size += self.size;
        *self = Self {
            start: end,
            first_move: end_move,
            ..Self::default()
        };
    }
}

/// Moves the packed verdicts of `from` to the end of `into` (whose ids they carry on), every
/// index rebased, and `from`'s ids on past them; its columns keep their capacity. Every field
/// is named: a field added to the proto must be carried here too.
pub(super) fn append_packed(into: &mut PackedVerdicts, from: &mut PackedVerdicts) {
    let queries = into.outcomes.len() as u32;
    let moves = into.move_sources.len() as u32;
    let PackedVerdicts {
        first_query_id,
        outcomes,
        nim_sums,
        errors,
        remotenesses,
        over_budget,
        move_counts,
        move_sources,
        move_targets,
        move_outcomes,
        move_remotenesses,
        move_over_budget,
        moves_omitted,
    } = from;
    debug_assert_eq!(
        into.first_query_id.wrapping_add(u64::from(queries)),
        *first_query_id
    );
    *first_query_id = first_query_id.wrapping_add(outcomes.len() as u64);
    into.outcomes.append(outcomes);
    into.nim_sums.append(nim_sums);
    into.errors.extend(errors.drain(..).map(|mut error| {
        error.index += queries;
        error
    }));
    into.remotenesses.append(remotenesses);
    into.over_budget
        .extend(over_budget.drain(..).map(|index| index + queries));
    into.move_counts.append(move_counts);
    into.move_sources.append(move_sources);
    into.move_targets.append(move_targets);
    into.move_outcomes.append(move_outcomes);
    into.move_remotenesses.append(move_remotenesses);
    into.move_over_budget
        .extend(move_over_budget.drain(..).map(|index| index + moves));
    into.moves_omitted.append(moves_omitted);
}

/// Queries `queries` of `packed` (their moves are `moves` of its move columns) as a message
/// of their own, with `errors` (their malformed-query entries) and every index rebased.
/// Every field is named: a field added to the proto must be split here too.
fn slice_packed(
    packed: &PackedVerdicts,
    queries: Range<usize>,
    moves: Range<usize>,
    errors: Vec<PackedQueryError>,
) -> PackedVerdicts {
    let PackedVerdicts {
        first_query_id,
        outcomes,
        nim_sums,
        errors: _,
        remotenesses,
        over_budget,
        move_counts,
        move_sources,
        move_targets,
        move_outcomes,
        move_remotenesses,
        move_over_budget,
        moves_omitted,
    } = packed;
    let start = queries.start as u32;
    PackedVerdicts {
        first_query_id: first_query_id.wrapping_add(queries.start as u64),
        outcomes: aligned(outcomes, &queries),
        nim_sums: aligned(nim_sums, &queries),
        errors: errors
            .into_iter()
            .map(|mut error| {
                error.index -= start;
                error
            })
            .collect(),
        remotenesses: aligned(remotenesses, &queries),
        over_budget: indexes_within(over_budget, &queries),
        move_counts: aligned(move_counts, &queries),
        move_sources: aligned(move_sources, &moves),
        move_targets: aligned(move_targets, &moves),
        move_outcomes: aligned(move_outcomes, &moves),
        move_remotenesses: aligned(move_remotenesses, &moves),
        move_over_budget: indexes_within(move_over_budget, &moves),
        moves_omitted: aligned(moves_omitted, &queries),
    }
}

/// `column[range]`, or nothing for a column the message leaves empty.
fn aligned<T: Clone>(column: &[T], range: &Range<usize>) -> Vec<T> {
    column
        .get(range.clone())
        .map_or_else(Vec::new, <[T]>::to_vec)
}

/// The entries of the increasing index list `list` that fall in `range`, rebased to it.
fn indexes_within(list: &[u32], range: &Range<usize>) -> Vec<u32> {
    let from = list.partition_point(|&i| (i as usize) < range.start);
    let to = list.partition_point(|&i| (i as usize) < range.end);
    list[from..to]
        .iter()
        .map(|&i| i - range.start as u32)
        .collect()
}

/// Verdicts in the order a client reads them from a sequence of responses: full verdicts,
/// then the packed ones expanded (for the tests).
#[cfg(test)]
fn flatten(responses: &[EvaluateResponse]) -> Vec<FlatVerdict> {
    let mut all = Vec::new();
    for response in responses {
        for v in &response.verdicts {
            all.push(FlatVerdict {
                id: v.query_id,
                outcome: v.outcome,
                nim_sum: v.nim_sum,
                failed: v.error.is_some(),
                ..Default::default()
            });
        }
        if let Some(p) = &response.packed_verdicts {
            let mut next_move = 0;
            for i in 0..p.outcomes.len() {
                let moves = p.move_counts.get(i).map_or(0, |&n| n as usize);
                let move_range = next_move..next_move + moves;
                next_move += moves;
                all.push(FlatVerdict {
                    id: p.first_query_id + i as u64,
                    outcome: p.outcomes[i],
                    nim_sum: p.nim_sums[i],
                    failed: p.errors.iter().any(|e| e.index as usize == i),
                    remoteness: p.remotenesses.get(i).copied(),
                    over_budget: p.over_budget.contains(&(i as u32)),
                    moves: move_range
                        .map(|m| {
                            let over = p.move_over_budget.contains(&(m as u32));
                            (
                                p.move_sources[m],
                                p.move_targets[m],
                                p.move_outcomes[m],
                                p.move_remotenesses[m],
                                over,
                            )
                        })
                        .collect(),
                    moves_omitted: p.moves_omitted.get(i).copied(),
                });
            }
        }
    }
    all
}

/// One verdict as a client reads it, whichever form it came in (for the tests).
#[cfg(test)]
#[derive(Debug, Default, PartialEq)]
struct FlatVerdict {
    id: u64,
    outcome: i32,
    nim_sum: u64,
    failed: bool,
    remoteness: Option<u32>,
    over_budget: bool,
    moves: Vec<(u32, u32, i32, u32, bool)>,
    moves_omitted: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{GraphSummary, Move, QueryError, TokenMove, Verdict, r#move};

    fn verdict(id: u64) -> Verdict {
        Verdict {
            query_id: id,
            outcome: 1 + (id % 3) as i32,
            nim_sum: id * 7919,
            error: None,
            best_move: Some(Move {
                kind: Some(r#move::Kind::Token(TokenMove {
                    token_index: 0,
                    source_vertex: id as u32,
                    target_vertex: id as u32 + 1,
                })),
            }),
            ..Default::default()
        }
    }

    /// `packed(first, n)` with the analysis columns filled: query i has i % 4 moves.
    fn analysed(first: u64, n: usize) -> PackedVerdicts {
        let moves: usize = (0..n).map(|i| i % 4).sum();
        PackedVerdicts {
            remotenesses: (0..n as u32).map(|i| i % 50).collect(),
            over_budget: (0..n as u32).filter(|i| i % 7 == 3).collect(),
            move_counts: (0..n as u32).map(|i| i % 4).collect(),
            move_sources: (0..moves as u32).collect(),
            move_targets: (0..moves as u32).map(|m| m * 3 + 1).collect(),
            move_outcomes: (0..moves).map(|m| 1 + (m % 3) as i32).collect(),
            move_remotenesses: (0..moves as u32).map(|m| m % 9).collect(),
            move_over_budget: (0..moves as u32).filter(|m| m % 5 == 2).collect(),
            moves_omitted: (0..n as u64).map(|i| i % 2).collect(),
            ..packed(first, n)
        }
    }

    fn packed(first: u64, n: usize) -> PackedVerdicts {
        PackedVerdicts {
            first_query_id: first,
            outcomes: (0..n).map(|i| (i % 4) as i32).collect(),
            nim_sums: (0..n as u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .collect(),
            errors: (0..n)
                .filter(|i| i % 4 == 0)
                .map(|i| PackedQueryError {
                    index: i as u32,
                    error: Some(QueryError {
                        field: format!("packed_tokens.vertices[{i}]"),
                        message: "vertex out of range".into(),
                    }),
                })
                .collect(),
            ..Default::default()
        }
    }

    fn response(full: usize, packed_n: usize) -> EvaluateResponse {
        EvaluateResponse {
            verdicts: (0..full as u64).map(verdict).collect(),
            graph: None,
            packed_verdicts: (packed_n > 0).then(|| packed(full as u64, packed_n)),
        }
    }

    #[test]
    fn a_response_that_fits_is_left_alone() {
        let original = response(10, 10);
        let mut out = Vec::new();
        fit_response(original.clone(), 1 << 20, &mut out);
        assert_eq!(out, vec![original]);
    }

    /// A verdict larger than the limit on its own (256 analysed moves under 1 KiB) loses its
    /// worst moves, counted as omitted, instead of going over the limit (which a client that
    /// took it compressed refused only once it had inflated it).
    #[test]
    fn a_verdict_over_the_limit_alone_keeps_its_best_moves_that_fit() {
        use crate::proto::AnalysedMove;
        let mut big = verdict(1);
        big.moves = (0..256)
            .map(|i| AnalysedMove {
                r#move: verdict(i).best_move,
                outcome: 1,
                remoteness: Some(i as u32),
                over_budget: false,
            })
            .collect();
        big.moves_omitted = 3;
        let limit = 1024;
        let original = EvaluateResponse {
            verdicts: vec![verdict(0), big.clone(), verdict(2)],
            ..Default::default()
        };
        let mut out = Vec::new();
        fit_response(original, limit, &mut out);
        let sent: Vec<&Verdict> = out.iter().flat_map(|part| &part.verdicts).collect();
        assert_eq!(sent.len(), 3);
        for part in &out {
            assert!(part.encoded_len() <= limit, "{} bytes", part.encoded_len());
        }
        let cut = sent[1];
        assert!(!cut.moves.is_empty() && cut.moves.len() < 256);
        assert_eq!(
            cut.moves[..],
            big.moves[..cut.moves.len()],
            "the best kept, in order"
        );
        assert_eq!(cut.moves_omitted, 3 + 256 - cut.moves.len() as u64);
    }

    #[test]
    fn every_part_fits_and_the_verdicts_keep_their_order() {
        for (full, packed_n, limit) in [
            (5000, 0, 4096),
            (0, 20_000, 1000),
            (3000, 30_000, 10_000),
            (1, 1, 80),
            (0, 7, 65),
        ] {
            let original = response(full, packed_n);
            let mut out = Vec::new();
            fit_response(original.clone(), limit, &mut out);
            assert!(out.len() > 1, "{full}/{packed_n}/{limit}: not split");
            for part in &out {
                let single = part.verdicts.len()
                    + part
                        .packed_verdicts
                        .as_ref()
                        .map_or(0, |p| p.outcomes.len());
                assert!(
                    part.encoded_len() <= limit || single == 1,
                    "{full}/{packed_n}/{limit}: a part of {} bytes",
                    part.encoded_len()
                );
                assert!(single > 0, "an empty part");
            }
            assert_eq!(flatten(&out), flatten(&[original]));
        }
    }

    #[test]
    fn analysis_columns_are_split_with_their_queries() {
        for limit in [200, 1000, 5000] {
            let original = EvaluateResponse {
                packed_verdicts: Some(analysed(11, 3000)),
                ..Default::default()
            };
            let mut out = Vec::new();
            fit_response(original.clone(), limit, &mut out);
            assert!(out.len() > 1, "{limit}: not split");
            for part in &out {
                let queries = part
                    .packed_verdicts
                    .as_ref()
                    .map_or(0, |p| p.outcomes.len());
                assert!(part.encoded_len() <= limit || queries == 1, "{limit}");
            }
            assert_eq!(flatten(&out), flatten(&[original]));
        }
    }

    #[test]
    fn the_quick_bound_is_an_upper_bound() {
        let mut plain = packed(0, 5000);
        plain.errors.clear();
        plain.nim_sums = vec![u64::MAX; 5000];
        let response = EvaluateResponse {
            packed_verdicts: Some(plain),
            ..Default::default()
        };
        assert!(size_bound(&response).unwrap() >= response.encoded_len());
        assert_eq!(size_bound(&self::response(3, 3)), None);
    }

    #[test]
    fn the_summary_stays_in_the_first_part() {
        let mut original = response(2000, 0);
        original.graph = Some(GraphSummary {
            vertex_count: 4,
            ..Default::default()
        });
        let mut out = Vec::new();
        fit_response(original, 2048, &mut out);
        assert!(out[0].graph.is_some());
        assert!(out[1..].iter().all(|r| r.graph.is_none()));
    }
}
