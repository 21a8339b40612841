//! The position analysis of a stream (`EvaluateStart.analysis`) in protobuf form: the options
//! within the server's caps, and a verdict's remoteness and moves.

use crate::engine::{self, AnalysisOptions, MoveAnalysis, Outcome, PositionAnalysis, Remoteness};
use crate::proto;

use super::outcome::outcome_to_proto;

/// Most tokens a dense or sparse position may expand to for the analysis of token sliding
/// (a value counts its tokens one by one there, unlike for the outcome, where only parity
/// matters). Beyond, the remoteness is over any budget and no move is listed.
pub(crate) const MAX_ANALYSED_TOKENS: u64 = 1 << 16;

/// The server's caps on what one stream's analysis may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnalysisCaps {
    /// Most moves listed per verdict (`--analysis-max-moves`).
    pub max_moves: u32,
    /// Most positions one query's remoteness search may visit
    /// (`--analysis-position-budget`).
    pub position_budget: u64,
    /// Most work one query's remoteness search may do (`--analysis-work-budget`): what keeps
    /// a query under a second and a bounded memory whatever its width and the graph's
    /// out-degrees. Not asked by clients: the server's own.
    pub work_budget: u64,
}

/// Default [`AnalysisCaps::max_moves`].
pub const DEFAULT_ANALYSIS_MAX_MOVES: u32 = 256;

impl Default for AnalysisCaps {
    fn default() -> Self {
        Self {
            max_moves: DEFAULT_ANALYSIS_MAX_MOVES,
            position_budget: engine::DEFAULT_POSITION_BUDGET,
            work_budget: engine::DEFAULT_WORK_BUDGET,
        }
    }
}

/// The options of a stream that asked for the analysis, within `caps` (0 means the cap);
/// `None` when it did not ask.
pub(crate) fn stream_analysis(
    requested: Option<&proto::AnalysisOptions>,
    caps: &AnalysisCaps,
) -> Option<AnalysisOptions> {
    let requested = requested?;
    let within = |asked: u64, cap: u64| if asked == 0 { cap } else { asked.min(cap) };
    Some(AnalysisOptions {
        max_moves: within(u64::from(requested.max_moves), u64::from(caps.max_moves)) as u32,
        position_budget: within(requested.position_budget, caps.position_budget),
        work_budget: caps.work_budget,
    })
}

/// The remoteness of a verdict and why it is absent.
pub(crate) fn remoteness_fields(remoteness: Remoteness) -> (Option<u32>, proto::RemotenessUnknown) {
    use proto::RemotenessUnknown as Unknown;
    match remoteness {
        Remoteness::Known(moves) => match u32::try_from(moves) {
            Ok(moves) => (Some(moves), Unknown::Unspecified),
            // Never on graphs the server accepts (a remoteness is below the positions
            // searched), but a count that does not fit is not made up.
            Err(_) => (None, Unknown::OverBudget),
        },
        Remoteness::Draw => (None, Unknown::Draw),
        Remoteness::OverBudget { .. } => (None, Unknown::OverBudget),
        Remoteness::UnavailableForSplitCounts => (None, Unknown::NotComputed),
    }
}

/// Fills `verdict`'s analysis fields (and `best_move`) from the analysis of a token-sliding
/// position; `token_index(from)` names the token (or item) on vertex `from`.
pub(crate) fn fill_sliding(
    verdict: &mut proto::Verdict,
    analysed: &PositionAnalysis,
    token_index: impl Fn(u32) -> u32,
) {
    let (remoteness, unknown) = remoteness_fields(analysed.remoteness);
    verdict.remoteness = remoteness;
    verdict.remoteness_unknown = unknown.into();
    verdict.moves_omitted = analysed.moves_omitted;
    verdict.moves = analysed
        .moves
        .iter()
        .map(|analysed_move| {
            let (remoteness, unknown) = remoteness_fields(analysed_move.remoteness);
            proto::AnalysedMove {
                r#move: Some(token_move(token_index(analysed_move.from), analysed_move)),
                outcome: outcome_to_proto(analysed_move.outcome).into(),
                remoteness,
                over_budget: unknown == proto::RemotenessUnknown::OverBudget,
            }
        })
        .collect();
    // The best move is a winning or a draw-keeping one (as with `explain`).
    verdict.best_move = analysed
        .moves
        .first()
        .filter(|best| best.outcome != Outcome::Lose && analysed.outcome == best.outcome)
        .map(|best| token_move(token_index(best.from), best));
}

fn token_move(token_index: u32, analysed_move: &MoveAnalysis) -> proto::Move {
    proto::Move {
        kind: Some(proto::r#move::Kind::Token(proto::TokenMove {
            token_index,
            source_vertex: analysed_move.from,
            target_vertex: analysed_move.to,
        })),
    }
}

/// The analysis fields of a position whose tokens were too many to analyse
/// ([`MAX_ANALYSED_TOKENS`]).
pub(crate) fn fill_too_many_tokens(verdict: &mut proto::Verdict) {
    verdict.remoteness = None;
    verdict.remoteness_unknown = if verdict.outcome == i32::from(proto::Outcome::Draw) {
        proto::RemotenessUnknown::Draw
    } else {
        proto::RemotenessUnknown::OverBudget
    }
    .into();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_asks_within_the_servers_caps() {
        let caps = AnalysisCaps {
            max_moves: 10,
            position_budget: 1000,
            work_budget: 77,
        };
        assert_eq!(stream_analysis(None, &caps), None);
        let asked = |max_moves, position_budget| proto::AnalysisOptions {
            max_moves,
            position_budget,
        };
        let defaults = stream_analysis(Some(&asked(0, 0)), &caps).unwrap();
        assert_eq!((defaults.max_moves, defaults.position_budget), (10, 1000));
        let lower = stream_analysis(Some(&asked(3, 50)), &caps).unwrap();
        assert_eq!((lower.max_moves, lower.position_budget), (3, 50));
        let higher = stream_analysis(Some(&asked(99, 1 << 40)), &caps).unwrap();
        assert_eq!((higher.max_moves, higher.position_budget), (10, 1000));
    }

    #[test]
    fn an_absent_remoteness_says_why() {
        use proto::RemotenessUnknown as Unknown;
        assert_eq!(
            remoteness_fields(Remoteness::Known(4)),
            (Some(4), Unknown::Unspecified)
        );
        assert_eq!(remoteness_fields(Remoteness::Draw), (None, Unknown::Draw));
        let over = Remoteness::OverBudget {
            budget: 5,
            positions_explored: 6,
        };
        assert_eq!(remoteness_fields(over), (None, Unknown::OverBudget));
        assert_eq!(
            remoteness_fields(Remoteness::UnavailableForSplitCounts),
            (None, Unknown::NotComputed)
        );
    }
}
