//! The picture of a position: a graph, its values and a verdict drawn as `grundy render`
//! draws them. The CLI (values from `GetValues`, the verdict from `EvaluateBatch`) and the
//! picture URL of the JSON API (both from the registered graph's analysis) make their
//! drawings here, so that a picture fetched by URL is the one `grundy render` prints.

use crate::engine::remoteness::DRAW;
use crate::engine::{Analysis, Digraph, Interrupt, PlayConvention, VertexValue};
use crate::proto::{self, r#move::Kind};
use crate::render::{Drawing, Highlight, Value};

/// The drawing of `graph` (labelled `label`, e.g. `case 1`) with its `values`, and, given a
/// position, its tokens, verdict and the verdict's move highlighted; under misère play
/// (`misere`) the caption says so in place of the nim-sum, which decides nothing there.
pub(crate) fn position_drawing(
    label: &str,
    graph: Digraph,
    split_counts: Option<Vec<u32>>,
    values: Vec<Value>,
    position: Option<(&[u32], &proto::Verdict)>,
    misere: bool,
) -> Drawing {
    let mut caption = format!(
        "{label}: {} vertices, {} edges",
        graph.vertex_count(),
        graph.edge_count()
    );
    let mut tokens_per_vertex = Vec::new();
    let mut highlight = None;
    if let Some((tokens, verdict)) = position {
        tokens_per_vertex = vec![0u64; graph.vertex_count() as usize];
        for &v in tokens {
            if let Some(count) = tokens_per_vertex.get_mut(v as usize) {
                *count += 1;
            }
        }
        let outcome = proto::Outcome::try_from(verdict.outcome).unwrap_or_default();
        let listed: Vec<String> = tokens.iter().map(u32::to_string).collect();
        let (listed, outcome) = (
            listed.join(" "),
            outcome.as_str_name().trim_start_matches("OUTCOME_"),
        );
        caption = if misere {
            format!("{label}: tokens {listed}: {outcome} (misère)")
        } else {
            format!(
                "{label}: tokens {listed}: {outcome}, nim-sum {}",
                verdict.nim_sum
            )
        };
        highlight = verdict
            .best_move
            .as_ref()
            .and_then(|m| m.kind.as_ref())
            .map(move_highlight);
    }
    Drawing {
        graph,
        split_counts,
        values,
        tokens: tokens_per_vertex,
        highlight,
        last_move: None,
        caption: Some(caption),
        ids: None,
        partial: Vec::new(),
        legend: true,
    }
}

/// Every vertex's value of an analysis, as the drawing labels them: under misère play the
/// outcome and remoteness of one token (its table computed here if it is not yet; `None`
/// when `interrupt` was raised first, or for a game with split counts).
pub(crate) fn drawing_values(
    analysis: &Analysis,
    convention: PlayConvention,
    interrupt: &Interrupt,
) -> Option<Vec<Value>> {
    if convention == PlayConvention::Misere {
        let cells = analysis.remoteness_table_as(convention, interrupt).ok()??;
        let value = |&cell: &u32| Value::Misere {
            outcome: convention.outcome_of_remoteness(cell),
            remoteness: (cell != DRAW).then_some(cell),
        };
        return Some(cells.iter().map(value).collect());
    }
    let values = (0..analysis.game().graph().vertex_count())
        .map(|v| match analysis.vertex_value(v) {
            Some(VertexValue::Infinite { finite_followers }) => {
                Value::Infinite(finite_followers.to_vec())
            }
            Some(VertexValue::Finite(value)) => Value::Finite(value),
            // Every vertex below vertex_count has a value.
            None => Value::Finite(0),
        })
        .collect();
    Some(values)
}

/// The edges of a move, to highlight.
fn move_highlight(kind: &Kind) -> Highlight {
    match kind {
        Kind::Token(token) => Highlight {
            from: token.source_vertex,
            to: vec![token.target_vertex],
        },
        Kind::Split(split) => {
            let mut to = split.odd_targets.clone();
            if split.pair_count > 0 && !to.contains(&split.pair_target) {
                to.push(split.pair_target);
            }
            Highlight {
                from: split.vertex,
                to,
            }
        }
    }
}
