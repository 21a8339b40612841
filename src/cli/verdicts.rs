//! A test case's verdicts turned into judge lines, checked to arrive in query order.

use super::args::JudgeFormat;
use super::error::RunError;
use super::output::{format_outcome, format_verdict};
use crate::proto::{Outcome, PackedVerdicts, Verdict};

/// Turns a case's verdicts into judge lines, checking that they arrive in query order.
pub(super) struct JudgeLines<'a> {
    /// The case, for messages.
    pub(super) label: &'a str,
    pub(super) format: JudgeFormat,
    pub(super) explain: bool,
    /// Verdicts so far: the id the next one must carry.
    pub(super) received: u64,
}

impl JudgeLines<'_> {
    /// Appends a line per verdict of the per-query form (`--explain`, or rejected queries).
    pub(super) fn append_verdicts(
        &mut self,
        verdicts: &[Verdict],
        text: &mut Vec<u8>,
    ) -> Result<(), RunError> {
        for verdict in verdicts {
            self.expect_id(verdict.query_id)?;
            self.received += 1;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_out_of_order_fail_the_case() {
        let mut lines = JudgeLines {
            label: "test case 3 (line 9)",
            format: JudgeFormat::Chess,
            explain: false,
            received: 0,
        };
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
