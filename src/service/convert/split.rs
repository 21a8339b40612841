//! Responses cut to fit the message size limit: the verdicts of one batch may be more bytes
//! than `max_message_bytes` (with `explain`, or with large nim-sums), and a client with the
//! same limit refuses a larger message. [`fit_response`] splits them over several messages,
//! in order; every verdict keeps its query id, so the client sees the same sequence.

use prost::Message;
use prost::encoding::encoded_len_varint;

use crate::proto::{EvaluateResponse, PackedQueryError, PackedVerdicts};

/// Bytes kept free in each message for what the accounting below does not count: the
/// fields of `PackedVerdicts` besides its elements (first id, the packed arrays' tags and
/// lengths) and the sub-message's own tag and length. At most 1 + 10 + 2 * (1 + 5) + 1 + 5.
const FRAME_SLACK: usize = 64;

/// Appends `response` to `out` as one message when it fits in `max_bytes`, else as several,
/// each under `max_bytes` (a single verdict larger than that alone goes in a message of its
/// own). The full verdicts come first, then the packed ones, as in the original.
pub(crate) fn fit_response(
    response: EvaluateResponse,
    max_bytes: usize,
    out: &mut Vec<EvaluateResponse>,
) {
    let budget = max_bytes.saturating_sub(FRAME_SLACK).max(1);
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
    for verdict in verdicts {
        let cost = field_cost(verdict.encoded_len());
        part.make_room(cost, budget, out);
        part.size += cost;
        part.message.verdicts.push(verdict);
    }
    if let Some(packed) = packed_verdicts {
        split_packed(packed, budget, &mut part, out);
    }
    part.finish(out);
}

/// A cheap upper bound of the encoded size of a response of packed verdicts only (the common
/// case: no `explain`, no malformed queries), without the pass over every nim-sum that
/// `encoded_len` makes; `None` for other responses. An outcome takes one byte, a nim-sum at
/// most ten.
fn size_bound(response: &EvaluateResponse) -> Option<usize> {
    let packed = response.packed_verdicts.as_ref()?;
    if !response.verdicts.is_empty() || !packed.errors.is_empty() || response.graph.is_some() {
        return None;
    }
    Some(FRAME_SLACK + packed.outcomes.len() * 11)
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

/// Bytes a length-delimited field of `len` bytes takes: tag, length, contents.
fn field_cost(len: usize) -> usize {
    1 + encoded_len_varint(len as u64) + len
}

/// Splits packed verdicts into runs of consecutive queries, each run in the part being
/// filled (after its full verdicts) or in a message of its own.
fn split_packed(
    packed: PackedVerdicts,
    budget: usize,
    part: &mut Part,
    out: &mut Vec<EvaluateResponse>,
) {
    let PackedVerdicts {
        first_query_id,
        outcomes,
        nim_sums,
        errors,
    } = packed;
    let mut errors = errors.into_iter().peekable();
    let mut run = Run::default();
    for (index, &nim_sum) in nim_sums.iter().enumerate() {
        // An outcome is one byte (values 0 to 3), a nim-sum a varint.
        let mut cost = 1 + encoded_len_varint(nim_sum);
        let mut own_errors = Vec::new();
        while let Some(error) = errors.next_if(|e| e.index as usize == index) {
            cost += field_cost(error.encoded_len());
            own_errors.push(error);
        }
        if part.size + run.size + cost > budget && (part.used || !run.is_empty(index)) {
            run.flush(first_query_id, &outcomes, &nim_sums, index, part);
            let full = std::mem::replace(part, Part::new(EvaluateResponse::default()));
            full.finish(out);
        }
        part.used = true;
        run.size += cost;
        run.errors.extend(own_errors);
    }
    run.flush(first_query_id, &outcomes, &nim_sums, nim_sums.len(), part);
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

    /// Puts queries `start..end` into `part` as its packed verdicts (indexes of errors
    /// rebased to the run), and starts the next run at `end`.
    fn flush(
        &mut self,
        first_query_id: u64,
        outcomes: &[i32],
        nim_sums: &[u64],
        end: usize,
        part: &mut Part,
    ) {
        if self.is_empty(end) {
            return;
        }
        let start = self.start;
        let errors = std::mem::take(&mut self.errors)
            .into_iter()
            .map(|mut error| {
                error.index -= start as u32;
                error
            })
            .collect();
        part.message.packed_verdicts = Some(PackedVerdicts {
            first_query_id: first_query_id + start as u64,
            outcomes: outcomes[start..end].to_vec(),
            nim_sums: nim_sums[start..end].to_vec(),
            errors,
        });
        part.size += self.size;
        *self = Self {
            start: end,
            ..Self::default()
        };
    }
}

/// Verdicts in the order a client reads them from a sequence of responses: full verdicts,
/// then the packed ones expanded (for the tests).
#[cfg(test)]
fn flatten(responses: &[EvaluateResponse]) -> Vec<(u64, i32, u64, bool)> {
    let mut all = Vec::new();
    for response in responses {
        for v in &response.verdicts {
            all.push((v.query_id, v.outcome, v.nim_sum, v.error.is_some()));
        }
        if let Some(p) = &response.packed_verdicts {
            for i in 0..p.outcomes.len() {
                let failed = p.errors.iter().any(|e| e.index as usize == i);
                let id = p.first_query_id + i as u64;
                all.push((id, p.outcomes[i], p.nim_sums[i], failed));
            }
        }
    }
    all
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
