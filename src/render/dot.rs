//! The DOT writer, for Graphviz (`dot -Tsvg`, or `sfdp` for large graphs): the same labels,
//! colours, tokens and highlighted move as the SVG.

use std::fmt::Write;

use super::{Drawing, palette};

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
        let label = format!(
            "{}\\n{}",
            quote(&drawing.id_label(v)),
            quote(&drawing.values[v as usize].label())
        );
        let _ = write!(
            dot,
            "  {v} [label=\"{label}\", fillcolor=\"{}\", fontcolor=\"{}\", tooltip=\"{}\"",
            palette::fill(outcome),
            palette::text(outcome),
            palette::name(outcome)
        );
        let tokens = drawing.tokens_on(v);
        if tokens > 0 {
            let _ = write!(dot, ", penwidth=3, xlabel=\"●{tokens}\"");
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
            } else {
                let _ = writeln!(dot, "  {v} -> {w};");
            }
        }
    }
    dot.push_str("}\n");
    dot
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
