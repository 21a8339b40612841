//! The DOT writer, for Graphviz (`dot -Tsvg`, or `sfdp` for large graphs): the same labels,
//! colours, tokens, highlighted move and legend as the SVG.
//!
//! Tokens are a third line of the vertex's label (`● 2`), not an `xlabel`: Graphviz drops
//! external labels that would overlap something, which on most graphs is most of them. The
//! legend is one plain node with an HTML-like table (Graphviz places it as a disconnected
//! node, usually top left).

use std::fmt::Write;

use super::drawing::{Drawing, Value};
use super::palette;
use crate::engine::Outcome;

/// Writes `drawing` as a DOT digraph. Multi-edges are written as often as they occur.
pub(super) fn write(drawing: &Drawing) -> String {
    let graph = &drawing.graph;
    let n = graph.vertex_count();
    let mut dot = String::with_capacity(256 + 96 * n as usize + 16 * graph.edge_count() as usize);
    dot.push_str("digraph grundy {\n");
    if let Some(caption) = &drawing.caption {
        let _ = writeln!(dot, "  label=\"{}\";\n  labelloc=t;", quote(caption));
    }
    dot.push_str(
        "  node [shape=box, style=\"rounded,filled\", fontname=\"DejaVu Sans\"];\n  \
         edge [color=\"#555555\"];\n",
    );
    for v in 0..n {
        let outcome = drawing.outcome(v);
        let tokens = drawing.tokens_on(v);
        let mut label = format!(
            "{}\\n{}",
            quote(&drawing.id_label(v)),
            quote(&drawing.values[v as usize].label())
        );
        if tokens > 0 {
            let _ = write!(label, "\\n● {tokens}");
        }
        let _ = write!(
            dot,
            "  {v} [label=\"{label}\", fillcolor=\"{}\", fontcolor=\"{}\", tooltip=\"{}\"",
            palette::fill(outcome),
            palette::text(outcome),
            palette::name(outcome)
        );
        if tokens > 0 {
            dot.push_str(", penwidth=3");
        }
        if drawing.is_partial(v) {
            dot.push_str(", style=\"rounded,filled,dashed\"");
        }
        dot.push_str("];\n");
    }
    for v in 0..n {
        for &w in graph.successors(v) {
            if drawing.is_highlighted(v, w) {
                let _ = writeln!(
                    dot,
                    "  {v} -> {w} [color=\"{}\", penwidth=3];",
                    palette::HIGHLIGHT
                );
            } else if drawing.is_last_move(v, w) {
                let _ = writeln!(
                    dot,
                    "  {v} -> {w} [color=\"{}\", penwidth=3, style=dashed];",
                    palette::LAST_MOVE
                );
            } else {
                let _ = writeln!(dot, "  {v} -> {w};");
            }
        }
    }
    if drawing.legend {
        write_legend(&mut dot, drawing);
    }
    dot.push_str("}\n");
    dot
}

/// The legend: a plain node holding a table of swatches and explanations.
fn write_legend(dot: &mut String, drawing: &Drawing) {
    let row = |dot: &mut String, colour: &str, swatch: &str, text: &str| {
        let _ = writeln!(
            dot,
            "    <tr><td bgcolor=\"{colour}\">{}</td><td align=\"left\">{}</td></tr>",
            html(swatch),
            html(text)
        );
    };
    dot.push_str(
        "  legend [shape=plaintext, style=\"\", fontsize=11, label=<\n    \
         <table border=\"0\" cellborder=\"1\" cellspacing=\"0\" cellpadding=\"3\">\n",
    );
    for outcome in [Outcome::Lose, Outcome::Win, Outcome::Draw] {
        row(
            dot,
            palette::fill(outcome),
            palette::name(outcome),
            drawing.outcome_legend(outcome),
        );
    }
    row(dot, "#FFFFFF", "2 (second line)", drawing.value_legend());
    if drawing
        .values
        .iter()
        .any(|v| matches!(v, Value::Infinite(_)))
    {
        row(
            dot,
            "#FFFFFF",
            "∞(K)",
            "play can go on for ever from here; K: the values of its finite moves",
        );
    }
    if drawing.split_counts.is_some() {
        row(
            dot,
            "#FFFFFF",
            "K=2",
            "a move takes 1 from the vertex and adds 1 to 2 out-neighbours",
        );
    }
    if drawing.tokens.iter().any(|&t| t > 0) {
        let what = if drawing.split_counts.is_some() {
            "the value of the vertex (only its parity matters)"
        } else {
            "tokens on the vertex"
        };
        row(dot, "#FFFFFF", "● 2 (third line)", what);
    }
    if drawing.highlight.is_some() {
        row(
            dot,
            palette::HIGHLIGHT,
            "→",
            "the server's move (winning, or keeping the draw)",
        );
    }
    if drawing.last_move.is_some() {
        row(dot, palette::LAST_MOVE, "⇢", "the last move played");
    }
    dot.push_str("    </table>>];\n");
}

/// Escapes text for an HTML-like DOT label.
fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Escapes text for a double-quoted DOT string.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
