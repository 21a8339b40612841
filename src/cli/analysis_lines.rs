//! `grundy analyse` output: one JSON object per query, one per line (JSON Lines), in input
//! order. Chess:
//! `{"case":1,"query":1,"tokens":[3,1],"outcome":"WIN","nim_sum":1,"remoteness":3,
//! "moves":[{"from":3,"to":5,"outcome":"WIN","remoteness":2},...]}`; addsub:
//! `{"game":1,"round":1,"odd_vertices":[0,2],"outcome":"WIN","nim_sum":3,
//! "moves":[{"vertex":0,"odd_targets":[1],"pair_target":1,"pair_count":0}]}`.
//! `remoteness` is absent for a DRAW and over the budget (then `"remoteness_unknown":
//! "over_budget"`), `moves_omitted` present when the cap left moves out.

use crate::proto::{self, AnalysedMove, Outcome, RemotenessUnknown};

/// One analysed move of token sliding, as the columns or a verdict give it.
pub(super) struct SlidingMove {
    pub(super) from: u32,
    pub(super) to: u32,
    pub(super) outcome: i32,
    pub(super) remoteness: Option<u32>,
    pub(super) over_budget: bool,
}

/// A query's analysis, whichever form it came in.
pub(super) struct AnalysedQuery<'a, M> {
    /// 1-based test case (or game) number, and query (or round) number within it.
    pub(super) case: u64,
    pub(super) query: u64,
    /// The position: the tokens (chess), the vertices of odd value (addsub).
    pub(super) position: &'a [u32],
    pub(super) outcome: i32,
    pub(super) nim_sum: u64,
    pub(super) remoteness: Option<u32>,
    pub(super) unknown: RemotenessUnknown,
    pub(super) moves: M,
    pub(super) moves_omitted: u64,
}

fn outcome_name(outcome: i32) -> &'static str {
    match Outcome::try_from(outcome) {
        Ok(Outcome::Win) => "WIN",
        Ok(Outcome::Lose) => "LOSE",
        Ok(Outcome::Draw) => "DRAW",
        _ => "UNKNOWN",
    }
}

/// Appends `value` in decimal. (The lines are written byte by byte, not with `write!`,
/// whose formatting machinery took a fifth of `grundy analyse`'s instructions.)
fn number(out: &mut Vec<u8>, value: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Appends `,"key":` (without the comma for the first key of an object).
fn key(out: &mut Vec<u8>, name: &str, first: bool) {
    if !first {
        out.push(b',');
    }
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

fn write_list(out: &mut Vec<u8>, values: &[u32]) {
    out.push(b'[');
    for (index, value) in values.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        number(out, *value);
    }
    out.push(b']');
}

/// Appends `,"outcome":"WIN"` (or LOSE, DRAW).
fn write_outcome(out: &mut Vec<u8>, outcome: i32) {
    key(out, "outcome", false);
    out.push(b'"');
    out.extend_from_slice(outcome_name(outcome).as_bytes());
    out.push(b'"');
}

/// Appends the remoteness, or why it is absent when that is the budget.
fn write_remoteness(out: &mut Vec<u8>, remoteness: Option<u32>, over_budget: bool) {
    if let Some(remoteness) = remoteness {
        key(out, "remoteness", false);
        number(out, remoteness);
    } else if over_budget {
        out.extend_from_slice(b",\"remoteness_unknown\":\"over_budget\"");
    }
}

/// Writes the common head of a line: its numbers, position, outcome and nim-sum.
fn write_head<M>(query: &AnalysedQuery<'_, M>, names: [&str; 3], out: &mut Vec<u8>) {
    let [case, number_name, position] = names;
    out.push(b'{');
    key(out, case, true);
    number(out, query.case);
    key(out, number_name, false);
    number(out, query.query);
    key(out, position, false);
    write_list(out, query.position);
    write_outcome(out, query.outcome);
    key(out, "nim_sum", false);
    number(out, query.nim_sum);
}

fn write_tail<M>(query: &AnalysedQuery<'_, M>, out: &mut Vec<u8>) {
    out.push(b']');
    if query.moves_omitted > 0 {
        key(out, "moves_omitted", false);
        number(out, query.moves_omitted);
    }
    out.extend_from_slice(b"}\n");
}

/// A chess line.
pub(super) fn write_sliding(
    query: AnalysedQuery<'_, impl Iterator<Item = SlidingMove>>,
    out: &mut Vec<u8>,
) {
    write_head(&query, ["case", "query", "tokens"], out);
    let over_budget = query.unknown == RemotenessUnknown::OverBudget;
    write_remoteness(out, query.remoteness, over_budget);
    out.extend_from_slice(b",\"moves\":[");
    let mut query = query;
    let mut first = true;
    for analysed in query.moves.by_ref() {
        if !first {
            out.push(b',');
        }
        first = false;
        out.push(b'{');
        key(out, "from", true);
        number(out, analysed.from);
        key(out, "to", false);
        number(out, analysed.to);
        write_outcome(out, analysed.outcome);
        write_remoteness(out, analysed.remoteness, analysed.over_budget);
        out.push(b'}');
    }
    write_tail(&query, out);
}

/// An addsub line: one winning move per vertex that has one.
pub(super) fn write_split(query: AnalysedQuery<'_, &[AnalysedMove]>, out: &mut Vec<u8>) {
    write_head(&query, ["game", "round", "odd_vertices"], out);
    out.extend_from_slice(b",\"moves\":[");
    let mut first = true;
    for analysed in query.moves {
        let Some(proto::r#move::Kind::Split(split)) =
            analysed.r#move.as_ref().and_then(|m| m.kind.as_ref())
        else {
            continue;
        };
        if !first {
            out.push(b',');
        }
        first = false;
        out.push(b'{');
        key(out, "vertex", true);
        number(out, split.vertex);
        key(out, "odd_targets", false);
        write_list(out, &split.odd_targets);
        key(out, "pair_target", false);
        number(out, split.pair_target);
        key(out, "pair_count", false);
        number(out, split.pair_count);
        out.push(b'}');
    }
    write_tail(&query, out);
}

/// The moves of a full verdict on token sliding.
pub(super) fn verdict_moves(verdict: &proto::Verdict) -> impl Iterator<Item = SlidingMove> + '_ {
    verdict.moves.iter().filter_map(|analysed| {
        let Some(proto::r#move::Kind::Token(token)) =
            analysed.r#move.as_ref().and_then(|m| m.kind.as_ref())
        else {
            return None;
        };
        Some(SlidingMove {
            from: token.source_vertex,
            to: token.target_vertex,
            outcome: analysed.outcome,
            remoteness: analysed.remoteness,
            over_budget: analysed.over_budget,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chess_line_has_the_documented_keys() {
        let moves = vec![
            SlidingMove {
                from: 3,
                to: 5,
                outcome: Outcome::Win.into(),
                remoteness: Some(2),
                over_budget: false,
            },
            SlidingMove {
                from: 1,
                to: 2,
                outcome: Outcome::Lose.into(),
                remoteness: None,
                over_budget: true,
            },
        ];
        let mut out = Vec::new();
        write_sliding(
            AnalysedQuery {
                case: 1,
                query: 2,
                position: &[3, 1],
                outcome: Outcome::Win.into(),
                nim_sum: 1,
                remoteness: Some(3),
                unknown: RemotenessUnknown::Unspecified,
                moves: moves.into_iter(),
                moves_omitted: 4,
            },
            &mut out,
        );
        let line = String::from_utf8(out).unwrap();
        assert_eq!(
            line,
            "{\"case\":1,\"query\":2,\"tokens\":[3,1],\"outcome\":\"WIN\",\"nim_sum\":1,\
             \"remoteness\":3,\"moves\":[{\"from\":3,\"to\":5,\"outcome\":\"WIN\",\
             \"remoteness\":2},{\"from\":1,\"to\":2,\"outcome\":\"LOSE\",\
             \"remoteness_unknown\":\"over_budget\"}],\"moves_omitted\":4}\n"
        );
        let parsed: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(parsed["moves"][0]["to"], 5);
    }
}
