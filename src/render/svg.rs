//! The SVG writer: a legend on top, then the edges and the vertices of the layered layout.
//!
//! Every vertex is a `<g class="vertex">` carrying `data-vertex`, `data-value`,
//! `data-outcome` and `data-tokens`, so that tests and the browser page can read the picture
//! back without parsing labels.

use std::fmt::Write;

use super::drawing::Drawing;
use super::layout::Layout;
use super::palette;
use crate::engine::Outcome;

const MARGIN: f64 = 20.0;
const NODE_HEIGHT: f64 = 40.0;
const ROW_PITCH: f64 = 96.0;
const LEGEND_LINE: f64 = 20.0;
/// Extra room right of a vertex with a self-loop.
const LOOP_ROOM: f64 = 30.0;
/// Sideways bulge of each edge of a 2-cycle, so the two do not overlap.
const TWIN_BULGE: f64 = 16.0;
const FONT: &str = "font-family=\"DejaVu Sans, Verdana, sans-serif\"";

/// Writes the picture of `drawing` laid out by `layout`.
pub(super) fn write(drawing: &Drawing) -> String {
    let graph = &drawing.graph;
    let n = graph.vertex_count();
    let widths: Vec<f64> = (0..n).map(|v| box_width(drawing, v)).collect();
    let room: Vec<f64> = (0..n)
        .map(|v| {
            widths[v as usize]
                + if has_self_loop(drawing, v) {
                    LOOP_ROOM
                } else {
                    0.0
                }
        })
        .collect();
    let layout = Layout::of(graph, &room);
    // Layout x is the centre of the box plus its loop room; the box sits on the left of it.
    let centre = |v: u32| {
        let loop_room = room[v as usize] - widths[v as usize];
        MARGIN + layout.x[v as usize] - loop_room / 2.0
    };

    let legend = legend_lines(drawing);
    let top = MARGIN + LEGEND_LINE * legend.len() as f64 + 24.0 + NODE_HEIGHT / 2.0;
    let row_y = |row: u32| top + f64::from(row) * ROW_PITCH;
    let legend_width = legend
        .iter()
        .map(|(_, text)| 40.0 + 7.6 * text.chars().count() as f64)
        .fold(0.0, f64::max);
    let width = (layout.width + 2.0 * MARGIN)
        .max(legend_width + 2.0 * MARGIN)
        .ceil();
    let height = (row_y(layout.rows - 1) + NODE_HEIGHT / 2.0 + MARGIN).ceil();

    let mut svg = String::with_capacity(1024 + 400 * n as usize);
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" {FONT} role=\"img\">"
    );
    let _ = writeln!(
        svg,
        "<title>{}</title>",
        escape(drawing.caption.as_deref().unwrap_or("game graph"))
    );
    write_defs(&mut svg);
    let _ = writeln!(
        svg,
        "<rect width=\"100%\" height=\"100%\" fill=\"#FFFFFF\"/>"
    );
    write_legend(&mut svg, &legend);

    let position = |v: u32| (centre(v), row_y(layout.row[v as usize]));
    svg.push_str("<g class=\"edges\" fill=\"none\">\n");
    // The last move over ordinary edges, the highlighted move on top of everything.
    let style_of = |from: u32, to: u32| {
        if drawing.is_highlighted(from, to) {
            EdgeStyle::Move
        } else if drawing.is_last_move(from, to) {
            EdgeStyle::Last
        } else {
            EdgeStyle::Plain
        }
    };
    for style in [EdgeStyle::Plain, EdgeStyle::Last, EdgeStyle::Move] {
        for route in &layout.edges {
            if style_of(route.from, route.to) != style {
                continue;
            }
            let points: Vec<(f64, f64)> = route
                .points
                .iter()
                .map(|&(x, row)| (MARGIN + x, row_y(row)))
                .collect();
            let twin = graph.successors(route.to).contains(&route.from);
            let end = |v: u32| {
                let (x, y) = position(v);
                (x, y, widths[v as usize])
            };
            let path = edge_path([end(route.from), end(route.to)], &points, twin);
            write_edge(&mut svg, drawing, route.from, route.to, &path, style);
        }
        for v in (0..n).filter(|&v| has_self_loop(drawing, v)) {
            if style_of(v, v) == style {
                let (x, y) = position(v);
                let right = x + widths[v as usize] / 2.0;
                let path = format!(
                    "M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
                    right,
                    y - 8.0,
                    right + LOOP_ROOM,
                    y - 30.0,
                    right + LOOP_ROOM,
                    y + 30.0,
                    right + 1.0,
                    y + 8.0
                );
                write_edge(&mut svg, drawing, v, v, &path, style);
            }
        }
    }
    svg.push_str("</g>\n<g class=\"vertices\">\n");
    for v in 0..n {
        write_vertex(&mut svg, drawing, v, position(v), widths[v as usize]);
    }
    svg.push_str("</g>\n</svg>\n");
    svg
}

fn has_self_loop(drawing: &Drawing, v: u32) -> bool {
    drawing.graph.successors(v).contains(&v)
}

/// Box width: enough for the longer of the two label lines.
fn box_width(drawing: &Drawing, v: u32) -> f64 {
    let id = drawing.id_label(v).chars().count();
    let value = drawing.values[v as usize].label().chars().count();
    (8.0 * id.max(value) as f64 + 18.0).max(44.0)
}

/// How an edge is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EdgeStyle {
    Plain,
    /// The move that led to the position.
    Last,
    /// The highlighted (server's) move.
    Move,
}

fn write_defs(svg: &mut String) {
    svg.push_str("<defs>\n");
    for (id, colour) in [
        ("grundy-arrow", palette::EDGE),
        ("grundy-arrow-move", palette::HIGHLIGHT),
        ("grundy-arrow-last", palette::LAST_MOVE),
    ] {
        let _ = writeln!(
            svg,
            "<marker id=\"{id}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" \
             markerHeight=\"7\" markerUnits=\"userSpaceOnUse\" orient=\"auto\">\
             <path d=\"M0,0 L10,5 L0,10 z\" fill=\"{colour}\"/></marker>"
        );
    }
    svg.push_str("</defs>\n");
}

/// (swatch, text) lines: the three outcomes, then tokens and the move when shown.
fn legend_lines(drawing: &Drawing) -> Vec<(Swatch, String)> {
    let mut lines = Vec::new();
    if let Some(caption) = &drawing.caption {
        lines.push((Swatch::Caption, caption.clone()));
    }
    if !drawing.legend {
        return lines;
    }
    for outcome in [Outcome::Lose, Outcome::Win, Outcome::Draw] {
        lines.push((
            Swatch::Outcome(outcome),
            drawing.outcome_legend(outcome).to_string(),
        ));
    }
    let value = format!("2 (second line): {}", drawing.value_legend());
    lines.push((Swatch::None, value));
    if drawing.has_infinite() {
        lines.push((
            Swatch::None,
            "∞(K): play can go on for ever from here; K: the values of its finite moves".into(),
        ));
    }
    if drawing.split_counts.is_some() {
        lines.push((
            Swatch::None,
            "K=2 (first line): a move takes 1 from the vertex and adds 1 to 2 out-neighbours"
                .into(),
        ));
    }
    if drawing.partial.iter().any(|&p| p) {
        lines.push((
            Swatch::Partial,
            "a vertex with moves out of the part drawn".into(),
        ));
    }
    if drawing.tokens.iter().any(|&t| t > 0) {
        let what = if drawing.split_counts.is_some() {
            "the value of a vertex (only its parity matters)"
        } else {
            "tokens on a vertex"
        };
        lines.push((Swatch::Token, what.to_string()));
    }
    if drawing.highlight.is_some() {
        lines.push((
            Swatch::Move,
            "the server's move (winning, or keeping the draw)".into(),
        ));
    }
    if drawing.last_move.is_some() {
        lines.push((Swatch::Last, "the last move played".into()));
    }
    lines
}

#[derive(Clone, Copy)]
enum Swatch {
    /// The caption, in bold.
    Caption,
    /// A line of explanation, without a swatch.
    None,
    Outcome(Outcome),
    Token,
    Move,
    Last,
    Partial,
}

fn write_legend(svg: &mut String, lines: &[(Swatch, String)]) {
    svg.push_str("<g class=\"legend\" font-size=\"13\">\n");
    for (i, (swatch, text)) in lines.iter().enumerate() {
        let y = MARGIN + LEGEND_LINE * i as f64;
        let text_x = MARGIN + 26.0;
        match swatch {
            Swatch::Caption => {
                let _ = writeln!(
                    svg,
                    "<text class=\"caption\" x=\"{MARGIN}\" y=\"{:.1}\" font-weight=\"bold\">{}</text>",
                    y + 12.0,
                    escape(text)
                );
                continue;
            }
            Swatch::None => {}
            Swatch::Last => {
                let _ = writeln!(
                    svg,
                    "<path d=\"M{MARGIN},{:.1} h18\" stroke=\"{}\" stroke-width=\"3\" \
                     stroke-dasharray=\"5 3\" marker-end=\"url(#grundy-arrow-last)\"/>",
                    y + 7.0,
                    palette::LAST_MOVE
                );
            }
            Swatch::Partial => {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{MARGIN}\" y=\"{y:.1}\" width=\"18\" height=\"14\" rx=\"3\" \
                     fill=\"#FFFFFF\" stroke=\"#000000\" stroke-dasharray=\"3 2\"/>"
                );
            }
            Swatch::Outcome(outcome) => {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{MARGIN}\" y=\"{y:.1}\" width=\"18\" height=\"14\" rx=\"3\" fill=\"{}\"/>",
                    palette::fill(*outcome)
                );
            }
            Swatch::Token => {
                let _ = writeln!(
                    svg,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"7\" fill=\"#000000\"/>",
                    MARGIN + 9.0,
                    y + 7.0
                );
            }
            Swatch::Move => {
                let _ = writeln!(
                    svg,
                    "<path d=\"M{MARGIN},{:.1} h18\" stroke=\"{}\" stroke-width=\"3.5\" \
                     marker-end=\"url(#grundy-arrow-move)\"/>",
                    y + 7.0,
                    palette::HIGHLIGHT
                );
            }
        }
        let _ = writeln!(
            svg,
            "<text x=\"{text_x}\" y=\"{:.1}\">{}</text>",
            y + 12.0,
            escape(text)
        );
    }
    svg.push_str("</g>\n");
}

/// A path from box `from` through `points` to box `to`, leaving and entering each box on
/// the side facing the next point; the two edges of a 2-cycle bulge to opposite sides.
fn edge_path(ends: [(f64, f64, f64); 2], points: &[(f64, f64)], twin: bool) -> String {
    let half = NODE_HEIGHT / 2.0;
    let [(fx, fy, from_width), (tx, ty, to_width)] = ends;
    let first = points.first().copied().unwrap_or((tx, ty));
    let last = points.last().copied().unwrap_or((fx, fy));
    // Edges leave and enter a box spread along its side, towards where they go, so that
    // several edges at one box stay apart.
    let spread = |x: f64, towards: f64, width: f64| {
        let room = (width / 2.0 - 8.0).max(0.0);
        x + ((towards - x) * 0.25).clamp(-room, room)
    };
    let start = (
        spread(fx, first.0, from_width),
        fy + half.copysign(first.1 - fy),
    );
    let end = (
        spread(tx, last.0, to_width),
        ty + half.copysign(last.1 - ty),
    );
    let mut all = Vec::with_capacity(points.len() + 2);
    all.push(start);
    all.extend_from_slice(points);
    all.push(end);
    let mut path = format!("M{:.1},{:.1}", start.0, start.1);
    if all.len() == 2 {
        if twin {
            // Bulge to the left of the direction of travel: the twin goes the other way.
            let (dx, dy) = (end.0 - start.0, end.1 - start.1);
            let length = dx.hypot(dy).max(1.0);
            let control = (
                (start.0 + end.0) / 2.0 + TWIN_BULGE * dy / length * 2.0,
                (start.1 + end.1) / 2.0 - TWIN_BULGE * dx / length * 2.0,
            );
            let _ = write!(
                path,
                " Q{:.1},{:.1} {:.1},{:.1}",
                control.0, control.1, end.0, end.1
            );
        } else {
            let _ = write!(path, " L{:.1},{:.1}", end.0, end.1);
        }
        return path;
    }
    // Smooth through the dummy points: straight to the first midpoint, then quadratic
    // curves with each dummy point as the control point.
    let lead = ((start.0 + all[1].0) / 2.0, (start.1 + all[1].1) / 2.0);
    let _ = write!(path, " L{:.1},{:.1}", lead.0, lead.1);
    for pair in all.windows(2).skip(1) {
        let (control, next) = (pair[0], pair[1]);
        let mid = ((control.0 + next.0) / 2.0, (control.1 + next.1) / 2.0);
        let _ = write!(
            path,
            " Q{:.1},{:.1} {:.1},{:.1}",
            control.0, control.1, mid.0, mid.1
        );
    }
    let _ = write!(path, " L{:.1},{:.1}", end.0, end.1);
    path
}

fn write_edge(
    svg: &mut String,
    drawing: &Drawing,
    from: u32,
    to: u32,
    path: &str,
    style: EdgeStyle,
) {
    let (class, colour, width, marker, dash) = match style {
        EdgeStyle::Move => (
            "edge move",
            palette::HIGHLIGHT,
            3.5,
            "grundy-arrow-move",
            "",
        ),
        EdgeStyle::Last => (
            "edge last",
            palette::LAST_MOVE,
            3.0,
            "grundy-arrow-last",
            " stroke-dasharray=\"6 4\"",
        ),
        EdgeStyle::Plain => ("edge", palette::EDGE, 1.4, "grundy-arrow", ""),
    };
    let (from, to) = (drawing.id(from), drawing.id(to));
    let _ = writeln!(
        svg,
        "<path class=\"{class}\" data-from=\"{from}\" data-to=\"{to}\" d=\"{path}\" \
         stroke=\"{colour}\" stroke-width=\"{width}\"{dash} marker-end=\"url(#{marker})\"/>"
    );
}

fn write_vertex(svg: &mut String, drawing: &Drawing, v: u32, (x, y): (f64, f64), width: f64) {
    let value = &drawing.values[v as usize];
    let outcome = drawing.outcome(v);
    let tokens = drawing.tokens_on(v);
    let value_label = value.label();
    let id = drawing.id(v);
    let partial = drawing.is_partial(v);
    let _ = writeln!(
        svg,
        "<g class=\"vertex\" data-vertex=\"{id}\" data-value=\"{}\" data-outcome=\"{}\" \
         data-tokens=\"{tokens}\"{}>",
        escape(&value_label),
        palette::name(outcome),
        if partial { " data-partial=\"1\"" } else { "" }
    );
    let _ = writeln!(
        svg,
        "<title>vertex {id}: value {}, {} with one token{}</title>",
        escape(&value_label),
        palette::name(outcome),
        if partial {
            "; some of its moves are not drawn"
        } else {
            ""
        }
    );
    let (stroke, stroke_width) = if tokens > 0 {
        ("#000000", 3.0)
    } else {
        ("#333333", 1.0)
    };
    let dash = if partial {
        " stroke-dasharray=\"5 3\""
    } else {
        ""
    };
    let _ = writeln!(
        svg,
        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{width:.1}\" height=\"{NODE_HEIGHT}\" rx=\"8\" \
         fill=\"{}\" stroke=\"{stroke}\" stroke-width=\"{stroke_width}\"{dash}/>",
        x - width / 2.0,
        y - NODE_HEIGHT / 2.0,
        palette::fill(outcome)
    );
    let text = palette::text(outcome);
    let _ = writeln!(
        svg,
        "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"13\" \
         font-weight=\"bold\" fill=\"{text}\">{}</text>",
        y - 3.0,
        escape(&drawing.id_label(v))
    );
    let _ = writeln!(
        svg,
        "<text class=\"value\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\" \
         fill=\"{text}\">{}</text>",
        y + 13.0,
        escape(&value_label)
    );
    if tokens > 0 {
        let (cx, cy) = (x - width / 2.0 + 2.0, y - NODE_HEIGHT / 2.0 + 2.0);
        let _ = writeln!(
            svg,
            "<circle class=\"token\" cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"10\" fill=\"#000000\"/>\
             <text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" \
             font-weight=\"bold\" fill=\"#FFFFFF\">{}</text>",
            cy + 4.0,
            if tokens > 99 {
                "99+".to_string()
            } else {
                tokens.to_string()
            }
        );
    }
    svg.push_str("</g>\n");
}

/// Escapes text for XML content and attribute values.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}
