//! The play convention: who wins when the player to move has no move.

use super::outcome::Outcome;

/// The entry of a DRAW vertex in a remoteness table ([`super::Analysis::remoteness_table`]).
/// Real remotenesses are below the vertex count (a play of one token visits distinct
/// vertices), so never `u32::MAX`. Defined here, where remotenesses are read as outcomes.
pub const DRAW: u32 = u32::MAX;

/// Who wins when the player to move cannot move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PlayConvention {
    /// Normal play: the player who cannot move loses.
    #[default]
    Normal,
    /// Misère play: the player who cannot move wins.
    Misere,
}

impl PlayConvention {
    /// The outcome for the player to move of a position with no move.
    pub fn end_outcome(self) -> Outcome {
        match self {
            Self::Normal => Outcome::Lose,
            Self::Misere => Outcome::Win,
        }
    }

    /// The parity (0 even, 1 odd) of the remoteness of a LOSE position: a position without
    /// moves has remoteness 0, and each move flips the parity.
    pub(super) fn losing_parity(self) -> u32 {
        match self {
            Self::Normal => 0,
            Self::Misere => 1,
        }
    }

    /// The outcome of a position of remoteness `remoteness` ([`DRAW`]
    /// for a draw).
    pub fn outcome_of_remoteness(self, remoteness: u32) -> Outcome {
        if remoteness == DRAW {
            Outcome::Draw
        } else if remoteness & 1 == self.losing_parity() {
            Outcome::Lose
        } else {
            Outcome::Win
        }
    }
}
