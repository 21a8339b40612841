//! Responses cut to fit the message size limit: the verdicts of one batch may be more bytes
//! than `max_message_bytes` (with `explain`, or with large nim-sums), and a client with the
//! same limit refuses a larger message. [`fit_response`] splits them over several messages,
//! in order; every verdict keeps its query id, so the client sees the same sequence. A
//! verdict too large for a message on its own loses its worst moves (counted as omitted).

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
    let budget = budget(max_bytes);
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

/// The bytes a message's verdicts may take under the message limit `max_bytes` (the rest is
/// room for the frame of packed verdicts).
pub(crate) fn budget(max_bytes: usize) -> usize {
    max_bytes.saturating_sub(size::PACKED_VERDICTS_FRAME).max(1)
}

/// Cuts the listed moves of a verdict larger than `budget` from its end (the worst ones;
/// counted in `moves_omitted`, as those left out by `max_moves` are) until it fits, so that
/// no message exceeds the limit, compressed or not; returns its size then. The best move
/// stays whenever the verdict fits with it: a verdict without moves is some tens of bytes.
pub(crate) fn fit_moves(verdict: &mut Verdict, budget: usize) -> usize {
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
    let plain =
        response.verdicts.is_empty() && response.graph.is_none() && packed.errors.is_empty();
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
    for index in 0..packed.outcomes.len() {
        let mut cost = size::packed_verdict_len(&packed, index);
        let mut own_errors = Vec::new();
        while let Some(error) = errors.next_if(|e| e.index as usize == index) {
            cost += size::packed_error_len(&error);
            own_errors.push(error);
        }
        if part.size + run.size + cost > budget && (part.used || !run.is_empty(index)) {
            run.flush(&packed, index, part);
            let full = std::mem::replace(part, Part::new(EvaluateResponse::default()));
            full.finish(out);
        }
        part.used = true;
        run.size += cost;
        run.errors.extend(own_errors);
    }
    run.flush(&packed, packed.outcomes.len(), part);
}

/// The packed verdicts of the part being filled: queries `start..` of the original.
#[derive(Default)]
struct Run {
    start: usize,
    size: usize,
    errors: Vec<PackedQueryError>,
}

impl Run {
    fn is_empty(&self, end: usize) -> bool {
        self.start == end
    }

    /// Puts queries `start..end` into `part` as its packed verdicts, and starts the next run
    /// there.
    fn flush(&mut self, packed: &PackedVerdicts, end: usize, part: &mut Part) {
        if self.is_empty(end) {
            return;
        }
        let errors = std::mem::take(&mut self.errors);
        part.message.packed_verdicts = Some(slice_packed(packed, self.start..end, errors));
        part.size += self.size;
        *self = Self {
            start: end,
            ..Self::default()
        };
    }
}

/// Queries `queries` of `packed` as a message of their own, with `errors` (their
/// malformed-query entries) rebased. Every field is named: a field added to the proto must be
/// split here too. The analysis columns are deprecated and never written (analysed queries
/// are answered in full verdicts).
fn slice_packed(
    packed: &PackedVerdicts,
    queries: Range<usize>,
    errors: Vec<PackedQueryError>,
) -> PackedVerdicts {
    #[allow(deprecated)]
    let PackedVerdicts {
        first_query_id,
        outcomes,
        nim_sums,
        errors: _,
        remotenesses: _,
        over_budget: _,
        move_counts: _,
        move_sources: _,
        move_targets: _,
        move_outcomes: _,
        move_remotenesses: _,
        move_over_budget: _,
        moves_omitted: _,
    } = packed;
    let start = queries.start as u32;
    PackedVerdicts {
        first_query_id: first_query_id.wrapping_add(queries.start as u64),
        outcomes: outcomes[queries.clone()].to_vec(),
        nim_sums: nim_sums[queries].to_vec(),
        errors: errors
            .into_iter()
            .map(|mut error| {
                error.index -= start;
                error
            })
            .collect(),
        ..Default::default()
    }
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
            });
        }
        if let Some(p) = &response.packed_verdicts {
            for i in 0..p.outcomes.len() {
                all.push(FlatVerdict {
                    id: p.first_query_id + i as u64,
                    outcome: p.outcomes[i],
                    nim_sum: p.nim_sums[i],
                    failed: p.errors.iter().any(|e| e.index as usize == i),
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
