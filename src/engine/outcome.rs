//! The outcome of a position: WIN, LOSE or DRAW for the player to move.

/// The outcome of a position for the player to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The player to move wins.
    Win,
    /// The player to move loses.
    Lose,
    /// Neither player can force a win: play goes on forever (cyclic graphs only).
    Draw,
}

impl Outcome {
    /// The outcome of a sum of finite values: the player to move loses iff the xor is 0.
    pub fn of_nim_sum(nim_sum: u64) -> Self {
        if nim_sum == 0 { Self::Lose } else { Self::Win }
    }
}
