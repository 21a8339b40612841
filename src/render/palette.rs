//! Colours of the Okabe-Ito palette, distinguishable with the common colour-vision
//! deficiencies; each outcome also has its own text in the legend and the tooltips.

use crate::engine::Outcome;

/// Fill of a vertex by the outcome of a single token there.
pub fn fill(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Lose => "#D55E00", // vermillion
        Outcome::Win => "#009E73",  // bluish green
        Outcome::Draw => "#56B4E9", // sky blue
    }
}

/// Text colour readable on [`fill`]: black on all three (white on the green is 3.4:1
/// and on the vermillion 3.9:1, below WCAG's 4.5:1; black is 6.2:1, 5.4:1 and 9.9:1).
pub fn text(_outcome: Outcome) -> &'static str {
    "#000000"
}

/// The highlighted move's colour (Okabe-Ito blue).
pub const HIGHLIGHT: &str = "#0072B2";
/// The last move's colour, drawn dashed (Okabe-Ito reddish purple).
pub const LAST_MOVE: &str = "#CC79A7";
/// Ordinary edges.
pub const EDGE: &str = "#555555";

/// How the legend names an outcome of a single token.
pub fn legend(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Lose => "lose: a single token here loses for the player to move (value 0)",
        Outcome::Win => "win: a single token here wins for the player to move",
        Outcome::Draw => "draw: with a single token here, neither player can force a win",
    }
}

/// Lowercase outcome name, for attributes and DOT comments.
pub fn name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Lose => "lose",
        Outcome::Win => "win",
        Outcome::Draw => "draw",
    }
}
