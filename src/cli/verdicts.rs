//! A test case's verdicts turned into judge lines (or the JSON lines of `analyse`), checked
//! to arrive in query order.

use super::analysis_lines::{AnalysedQuery, verdict_moves, write_sliding, write_split};
use super::args::{JudgeFormat, Report};
use super::error::RunError;
use super::output::{VerdictError, append_chess_lines, format_outcome, format_verdict};
use super::query_log::QueryLog;
use crate::proto::{Outcome, PackedVerdicts, Verdict};

/// Turns a case's verdicts into judge lines, checking that they arrive in query order.
pub(super) struct JudgeLines<'a> {
    /// The case, for messages.
    pub(super) label: &'a str,
    /// 1-based test case (or game) number.
    number: u64,
    format: JudgeFormat,
    explain: bool,
    /// The queries' positions, for a JSON report (`analyse`).
    log: Option<QueryLog>,
    /// Verdicts so far: the id the next one must carry.
    pub(super) received: u64,
}

impl<'a> JudgeLines<'a> {
    pub(super) fn new(label: &'a str, number: u64, format: JudgeFormat, report: Report) -> Self {
        Self {
            label,
            number,
            format,
            explain: report.explain(),
            log: report.shows_analysis().then(QueryLog::default),
            received: 0,
        }
    }

    /// Where the sending half records the queries' positions (a JSON report only).
    pub(super) fn query_log(&self) -> Option<QueryLog> {
        self.log.clone()
    }

    /// Appends a line per verdict of the per-query form (`--explain`, or rejected queries).
    pub(super) fn append_verdicts(
        &mut self,
        verdicts: &[Verdict],
        text: &mut Vec<u8>,
    ) -> Result<(), RunError> {
        for verdict in verdicts {
            self.expect_id(verdict.query_id)?;
            self.received += 1;
            if let Some(log) = &self.log {
                if let Some(error) = &verdict.error {
                    return Err(self.failure(format!(
                        "query rejected: {}: {}",
                        error.field, error.message
                    )));
                }
                let (number, query) = (self.number, self.received);
                let format = self.format;
                log.take(1, |position| match format {
                    JudgeFormat::Chess => write_sliding(
                        analysed(number, query, position, verdict, verdict_moves(verdict)),
                        text,
                    ),
                    JudgeFormat::Addsub => write_split(
                        analysed(number, query, position, verdict, &verdict.moves[..]),
                        text,
                    ),
                });
                continue;
            }
            format_verdict(self.format, self.explain, self.received, verdict, text)
                .map_err(|error| self.failure(error))?;
        }
        Ok(())
    }

    /// Appends a line per outcome of the packed (columnar) form.
    pub(super) fn append_packed(
        &mut self,
        packed: &PackedVerdicts,
        text: &mut Vec<u8>,
    ) -> Result<(), RunError> {
        self.expect_id(packed.first_query_id)?;
        if let Some(error) = packed.errors.first().and_then(|e| e.error.as_ref()) {
            return Err(RunError::Failure(format!(
                "{}: query rejected: {}: {}",
                self.label, error.field, error.message
            )));
        }
        if self.log.is_some() && !packed.outcomes.is_empty() {
            // A server answers analysed queries in full verdicts; only one older than the
            // client put them in columns, which it no longer reads.
            return Err(self.failure(
                "the server answered analysed queries in packed columns (a grundy-server older \
                 than this client): upgrade the server",
            ));
        }
        if self.format == JudgeFormat::Chess {
            let appended = append_chess_lines(&packed.outcomes, text);
            self.received +=
                appended.map_or_else(|index| index + 1, |()| packed.outcomes.len()) as u64;
            return appended.map_err(|_| {
                self.failure(VerdictError::NoOutcome {
                    round: self.received,
                })
            });
        }
        for &outcome in &packed.outcomes {
            self.received += 1;
            let outcome = Outcome::try_from(outcome).unwrap_or(Outcome::Unspecified);
            format_outcome(self.format, self.received, outcome, text)
                .map_err(|error| self.failure(error))?;
            text.push(b'\n');
        }
        Ok(())
    }

    fn expect_id(&self, id: u64) -> Result<(), RunError> {
        if id == self.received {
            return Ok(());
        }
        Err(RunError::Failure(format!(
            "{}: verdict for query {id} arrived where query {} was expected",
            self.label, self.received
        )))
    }

    fn failure(&self, error: impl std::fmt::Display) -> RunError {
        RunError::Failure(format!("{}: {error}", self.label))
    }
}

/// The analysis of query `query` of case `case` at `position`, from its full verdict.
fn analysed<'p, M>(
    case: u64,
    query: u64,
    position: &'p [u32],
    verdict: &Verdict,
    moves: M,
) -> AnalysedQuery<'p, M> {
    AnalysedQuery {
        case,
        query,
        position,
        outcome: verdict.outcome,
        nim_sum: verdict.nim_sum,
        remoteness: verdict.remoteness,
        unknown: verdict.remoteness_unknown(),
        moves,
        moves_omitted: verdict.moves_omitted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_out_of_order_fail_the_case() {
        let report = Report::Judge {
            explain: false,
            misere: None,
        };
        let mut lines = JudgeLines::new("test case 3 (line 9)", 3, JudgeFormat::Chess, report);
        let mut text = Vec::new();
        let packed = PackedVerdicts {
            first_query_id: 0,
            outcomes: vec![Outcome::Win as i32, Outcome::Lose as i32],
            ..PackedVerdicts::default()
        };
        lines.append_packed(&packed, &mut text).unwrap();
        assert_eq!(text, b"WIN\nLOSE\n");
        let late = PackedVerdicts {
            first_query_id: 3,
            ..PackedVerdicts::default()
        };
        let error = lines.append_packed(&late, &mut text).unwrap_err();
        assert_eq!(
            error.to_string(),
            "test case 3 (line 9): verdict for query 3 arrived where query 2 was expected"
        );
    }
}
