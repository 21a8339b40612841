//! The play convention of a request (`EvaluateStart.play_convention`,
//! `GetValuesRequest.play_convention`) in engine form, and the games it applies to.

use crate::engine::{Analysis, MisereOverBudget, PlayConvention};
use crate::proto;
use crate::service::error::ServiceError;

/// The convention of the request field `field` (UNSPECIFIED is normal play); a number the
/// enum does not know is INVALID_ARGUMENT naming the field.
pub(crate) fn play_convention(value: i32, field: &str) -> Result<PlayConvention, ServiceError> {
    match proto::PlayConvention::try_from(value) {
        Ok(proto::PlayConvention::Unspecified | proto::PlayConvention::Normal) => {
            Ok(PlayConvention::Normal)
        }
        Ok(proto::PlayConvention::Misere) => Ok(PlayConvention::Misere),
        Err(_) => Err(ServiceError::protocol(
            field,
            format!("{field}: unknown play convention {value}"),
        )),
    }
}

/// Refuses a convention the game has no answer under: misère play of the
/// Addition-Subtraction game (split counts), INVALID_ARGUMENT naming the field, the
/// convention and the game.
pub(crate) fn check_game(
    analysis: &Analysis,
    convention: PlayConvention,
    field: &str,
) -> Result<(), ServiceError> {
    if convention == PlayConvention::Misere && analysis.game().split_counts().is_some() {
        return Err(ServiceError::protocol(
            field,
            format!(
                "{field}: PLAY_CONVENTION_MISERE is not supported for the Addition-Subtraction \
                 game (a graph with split counts): only token sliding is played misère"
            ),
        ));
    }
    Ok(())
}

/// The in-band error of a query whose misère search ran over its budgets: `field` names the
/// position, the message the budget and how to raise it.
pub(crate) fn over_budget_error(field: &str, over: &MisereOverBudget) -> proto::QueryError {
    proto::QueryError {
        field: field.to_string(),
        message: format!(
            "{over}; raise it with --position-budget (grundy judge or analyse) or \
             analysis.position_budget, up to the server's --analysis-position-budget"
        ),
    }
}

/// The misère outcome of one token, for `VertexValue.outcome` (UNSPECIFIED under normal
/// play, where the field is not set).
pub(crate) fn one_token_outcome(convention: PlayConvention, remoteness: u32) -> proto::Outcome {
    match convention {
        PlayConvention::Normal => proto::Outcome::Unspecified,
        PlayConvention::Misere => {
            super::outcome::outcome_to_proto(convention.outcome_of_remoteness(remoteness))
        }
    }
}
