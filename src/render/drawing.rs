//! The input of a picture ([`Drawing`]): the graph, the values, the position and the moves to
//! mark; its validation, the size limit of an SVG and the per-vertex questions the writers ask.

use crate::engine::{Digraph, Outcome};

/// Most vertices drawn as SVG: beyond this a layered drawing is no longer readable.
pub const MAX_SVG_VERTICES: u32 = 300;
/// Most edges drawn as SVG (the layout's dummy points grow with edges times layers).
pub const MAX_SVG_EDGES: u64 = 3000;

/// The value of one vertex, as `GetValues` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A nimber.
    Finite(u64),
    /// `∞(K)`: K are the finite values among the vertex's followers, increasing.
    Infinite(Vec<u64>),
    /// Misère play: the outcome of one token on the vertex and its remoteness (none for a
    /// DRAW), which no nimber gives.
    Misere {
        /// The outcome of one token.
        outcome: Outcome,
        /// Its remoteness.
        remoteness: Option<u32>,
    },
}

impl Value {
    /// The outcome of a single token on a vertex of this value: a nimber wins iff it is not
    /// 0; `∞(K)` wins iff 0 is in K (move to a finite 0), and otherwise draws.
    pub fn single_token_outcome(&self) -> Outcome {
        match self {
            Self::Finite(value) => Outcome::of_nim_sum(*value),
            Self::Infinite(followers) if followers.first() == Some(&0) => Outcome::Win,
            Self::Infinite(_) => Outcome::Draw,
            Self::Misere { outcome, .. } => *outcome,
        }
    }

    /// The label drawn under the vertex id: `3`, or `∞(0,2)` (long K sets shortened); under
    /// misère play the outcome's letter and the remoteness, `W2`, `L3` or `D`.
    pub fn label(&self) -> String {
        const SHOWN: usize = 4;
        match self {
            Self::Finite(value) => value.to_string(),
            Self::Misere {
                outcome,
                remoteness,
            } => {
                let letter = match outcome {
                    Outcome::Win => "W",
                    Outcome::Lose => "L",
                    Outcome::Draw => "D",
                };
                format!(
                    "{letter}{}",
                    remoteness.map_or(String::new(), |r| r.to_string())
                )
            }
            Self::Infinite(followers) => {
                let mut label = String::from("∞(");
                for (i, value) in followers.iter().take(SHOWN).enumerate() {
                    if i > 0 {
                        label.push(',');
                    }
                    label.push_str(&value.to_string());
                }
                if followers.len() > SHOWN {
                    label.push_str(",…");
                }
                label.push(')');
                label
            }
        }
    }
}

/// A move to draw: from one vertex to one or more (one for token sliding, the odd picks of
/// an Addition-Subtraction move).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Highlight {
    /// The vertex moved from.
    pub from: u32,
    /// The vertices moved to (each an out-neighbour of `from`).
    pub to: Vec<u32>,
}

/// Everything a picture shows.
#[derive(Debug, Clone)]
pub struct Drawing {
    /// The graph.
    pub graph: Digraph,
    /// Split counts `K_v` (Addition-Subtraction), drawn in the labels; `None` for token sliding.
    pub split_counts: Option<Vec<u32>>,
    /// The value of every vertex.
    pub values: Vec<Value>,
    /// Tokens per vertex (or, for the Addition-Subtraction game, the value of each vertex;
    /// only parity matters there but the number is shown as given). Empty: no position.
    pub tokens: Vec<u64>,
    /// A move to highlight (the server's winning or draw-keeping move).
    pub highlight: Option<Highlight>,
    /// The move that led to the position, drawn dashed (the playground's last move).
    pub last_move: Option<Highlight>,
    /// A caption line above the picture (test case, verdict, nim-sum).
    pub caption: Option<String>,
    /// The id drawn for each vertex, when the graph is a part of a bigger one (the
    /// playground's view around the position); `None`: the vertex's index.
    pub ids: Option<Vec<u32>>,
    /// Vertices with moves that are not drawn (they leave the part shown): dashed outline.
    pub partial: Vec<bool>,
    /// Whether the SVG carries its legend (the playground explains the board beside it, so
    /// it asks for the caption alone and keeps the drawing narrow).
    pub legend: bool,
}

/// Why a drawing cannot be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RenderError {
    /// Too many vertices or edges for a readable SVG.
    #[error(
        "the graph has {vertices} vertices and {edges} edges: too large to draw readably as SVG \
         (at most {MAX_SVG_VERTICES} vertices and {MAX_SVG_EDGES} edges); use --format dot \
         and Graphviz (e.g. `sfdp -Tsvg`) instead"
    )]
    TooLarge {
        /// Vertices of the graph.
        vertices: u32,
        /// Edges of the graph.
        edges: u64,
    },
    /// A field of the input does not fit the graph.
    #[error("{field}: {message}")]
    Invalid {
        /// The offending field, with index where there is one (e.g. `values`, `highlight.to[1]`).
        field: String,
        /// What is wrong.
        message: String,
    },
}

impl Drawing {
    /// Checks that every per-vertex list has one entry per vertex and the highlighted move
    /// follows edges of the graph.
    pub fn validate(&self) -> Result<(), RenderError> {
        let n = self.graph.vertex_count() as usize;
        let length = |field: &str, got: usize, allow_empty: bool| {
            if got == n || (allow_empty && got == 0) {
                Ok(())
            } else {
                Err(invalid(
                    field,
                    format!("has {got} entries, expected {n} (one per vertex)"),
                ))
            }
        };
        length("values", self.values.len(), false)?;
        length("tokens", self.tokens.len(), true)?;
        if let Some(split_counts) = &self.split_counts {
            length("split_counts", split_counts.len(), false)?;
        }
        if let Some(ids) = &self.ids {
            length("ids", ids.len(), false)?;
        }
        length("partial", self.partial.len(), true)?;
        for (field, highlight) in [
            ("highlight", &self.highlight),
            ("last_move", &self.last_move),
        ] {
            let Some(highlight) = highlight else { continue };
            if highlight.from as usize >= n {
                let message = format!(
                    "vertex {} is out of range (vertex_count {n})",
                    highlight.from
                );
                return Err(invalid(&format!("{field}.from"), message));
            }
            let successors = self.graph.successors(highlight.from);
            for (i, to) in highlight.to.iter().enumerate() {
                if !successors.contains(to) {
                    let message = format!("{to} is not an out-neighbour of {}", highlight.from);
                    return Err(invalid(&format!("{field}.to[{i}]"), message));
                }
            }
        }
        Ok(())
    }

    /// The outcome of a single token on `vertex`.
    pub(super) fn outcome(&self, vertex: u32) -> Outcome {
        self.values[vertex as usize].single_token_outcome()
    }

    /// The id of a vertex as drawn (its index, or its id in the bigger graph).
    pub(super) fn id(&self, vertex: u32) -> u32 {
        self.ids.as_ref().map_or(vertex, |ids| ids[vertex as usize])
    }

    /// The id line of a vertex's label: `3`, or `3 K=2` with split counts.
    pub(super) fn id_label(&self, vertex: u32) -> String {
        let id = self.id(vertex);
        match &self.split_counts {
            Some(split_counts) => format!("{id}  K={}", split_counts[vertex as usize]),
            None => id.to_string(),
        }
    }

    /// Whether some moves from `vertex` are not drawn.
    pub(super) fn is_partial(&self, vertex: u32) -> bool {
        self.partial.get(vertex as usize).copied().unwrap_or(false)
    }

    /// The legend of an outcome's colour (under misère play a LOSE vertex has no value 0).
    pub(super) fn outcome_legend(&self, outcome: Outcome) -> &'static str {
        match (self.is_misere(), outcome) {
            (true, Outcome::Lose) => "lose: a single token here loses for the player to move",
            _ => super::palette::legend(outcome),
        }
    }

    /// The legend of a vertex's second line, without its example (`2`).
    pub(super) fn value_legend(&self) -> &'static str {
        if self.is_misere() {
            "misère play: W, L or D, the outcome of a single token here, and its remoteness"
        } else if self.split_counts.is_some() {
            "the nim-value of one unit of value on the vertex"
        } else {
            "the nim-value of a token here; a position's nim-sum xors them"
        }
    }

    /// Whether the values are misère outcomes.
    fn is_misere(&self) -> bool {
        self.values
            .iter()
            .any(|v| matches!(v, Value::Misere { .. }))
    }

    /// Whether any vertex has the value `∞(K)`.
    pub(super) fn has_infinite(&self) -> bool {
        self.values.iter().any(|v| matches!(v, Value::Infinite(_)))
    }

    /// Tokens (or the value) on `vertex`; 0 without a position.
    pub(super) fn tokens_on(&self, vertex: u32) -> u64 {
        self.tokens.get(vertex as usize).copied().unwrap_or(0)
    }

    /// Whether `from -> to` is part of the highlighted move.
    pub(super) fn is_highlighted(&self, from: u32, to: u32) -> bool {
        self.highlight
            .as_ref()
            .is_some_and(|h| h.from == from && h.to.contains(&to))
    }

    /// Whether `from -> to` is part of the last move.
    pub(super) fn is_last_move(&self, from: u32, to: u32) -> bool {
        self.last_move
            .as_ref()
            .is_some_and(|h| h.from == from && h.to.contains(&to))
    }
}

fn invalid(field: &str, message: String) -> RenderError {
    RenderError::Invalid {
        field: field.to_string(),
        message,
    }
}
