//! Outcomes out: the engine's [`Outcome`] as `grundy.v1.Outcome`.

use crate::engine::Outcome;
use crate::proto;

/// The outcome as `grundy.v1` writes it.
pub(crate) fn outcome_to_proto(outcome: Outcome) -> proto::Outcome {
    match outcome {
        Outcome::Win => proto::Outcome::Win,
        Outcome::Lose => proto::Outcome::Lose,
        Outcome::Draw => proto::Outcome::Draw,
    }
}
