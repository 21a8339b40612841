//! The misère verdicts of a stream (`EvaluateStart.play_convention`): every query a misère
//! analysis, within the stream's budgets, and an in-band error beyond them.

use crate::engine::{AnalysisOptions, MisereError};
use crate::proto;
use crate::service::convert::analysis::{self as analysed, MAX_ANALYSED_TOKENS};
use crate::service::convert::convention::over_budget_error;
use crate::service::convert::outcome::outcome_to_proto;
use crate::service::convert::position::{PositionForm, query_error};

use super::QueryEvaluator;

impl QueryEvaluator {
    /// The misère verdict on `self.position` (its vertices checked already): outcome, nim-sum
    /// 0, the best move with `explain`, the analysis when the stream asked; a search over
    /// its budgets (or a position of too many tokens to search) is an in-band error.
    pub(super) fn misere_verdict(&mut self, query_id: u64, form: PositionForm) -> proto::Verdict {
        let options = self.options.analysis.unwrap_or(AnalysisOptions {
            max_moves: u32::from(self.options.explain),
            ..self.options.misere_budgets
        });
        let field = form.position_field();
        let failed = |error: proto::QueryError| proto::Verdict {
            query_id,
            error: Some(error),
            ..Default::default()
        };
        if !self.fill_tokens() {
            return failed(query_error(
                field.into(),
                format!(
                    "a misère position is searched token by token: at most \
                     {MAX_ANALYSED_TOKENS} tokens"
                ),
            ));
        }
        let mut progress = super::flush_early(&mut self.early);
        let analysed = self.analysis.analyse_position_misere_interruptible(
            &self.tokens,
            &options,
            &self.interrupt,
            &mut progress,
        );
        let position = match analysed {
            // Cut short: the batch ends with CANCELLED.
            Err(_) => {
                return proto::Verdict {
                    query_id,
                    ..Default::default()
                };
            }
            Ok(Err(MisereError::OverBudget(over))) => {
                return failed(over_budget_error(field, &over));
            }
            Ok(Err(error)) => return failed(query_error(field.into(), error.to_string())),
            Ok(Ok(position)) => position,
        };
        let mut verdict = proto::Verdict {
            query_id,
            outcome: outcome_to_proto(position.outcome).into(),
            ..Default::default()
        };
        let items = &self.position;
        analysed::fill_sliding(&mut verdict, &position, |from| {
            let item = items
                .items
                .iter()
                .position(|&(vertex, count)| vertex == from && count > 0);
            items.token_index(form, item.unwrap_or(0))
        });
        if self.options.analysis.is_none() {
            // Only the best move (`explain`), found by the analysis.
            verdict.remoteness = None;
            verdict.remoteness_unknown = proto::RemotenessUnknown::Unspecified.into();
            verdict.moves.clear();
            verdict.moves_omitted = 0;
        }
        verdict
    }
}
