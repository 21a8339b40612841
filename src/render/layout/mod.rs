//! A layered ("Sugiyama") layout, the passes of Graphviz `dot` (Gansner, Koutsofios, North and
//! Vo, "A technique for drawing directed graphs", 1993) in simpler forms:
//!
//! 1. cycle breaking: back edges of an iterative depth-first search are reversed (from a few
//!    orders of roots), or the edges against the greedy order of Eades, Lin and Smyth; on an
//!    acyclic graph nothing is reversed;
//! 2. layering: first the longest path from each vertex to a sink, so every edge points down
//!    (reversed edges point up); then each vertex in turn moves to the layer, between its
//!    neighbours, that shortens its edges most, until no move helps; of the cycle breakings,
//!    the one whose edges are shortest in total wins;
//! 3. ordering (dot's `mincross`): edges spanning several layers get one dummy point per layer
//!    crossed; from several starting orders (depth-first, breadth-first from the top and from
//!    the bottom, input order), down and up sweeps sort each layer by the weighted median of
//!    its neighbours in the previous one, each sweep followed by swaps of neighbouring points
//!    while a swap removes crossings ("transpose"); the best starts get a longer run and the
//!    order with the fewest crossings wins; a work budget bounds the time on big graphs;
//! 4. coordinates: each point moves towards the weighted mean of its neighbours (long edges
//!    weigh most, as in dot, so that they run straight), with the minimum
//!    separation kept by averaging a left-to-right and a right-to-left placement.
//!
//! One file per job: `layering` (1 and 2), `ordering` (3), `coordinates` (4); this file
//! puts them together and adds the dummy points.
//!
//! The caller bounds the graph ([`super::drawing::MAX_SVG_VERTICES`]); dummy points are capped too, so
//! a graph with many long edges is drawn with straight edges rather than slowly.

mod coordinates;
mod layering;
mod ordering;

use coordinates::coordinates;
use layering::layering;
use ordering::order_rows;

use crate::engine::Digraph;

/// Dummy points allowed in total; past this, long edges are drawn straight.
const MAX_DUMMIES: usize = 20_000;
/// The width of a dummy point.
const DUMMY_WIDTH: f64 = 8.0;

/// Where everything goes: x in pixels (centre), y as a row index from the top.
#[derive(Debug)]
pub(super) struct Layout {
    /// Centre x of each vertex.
    pub x: Vec<f64>,
    /// Row of each vertex (0 = top).
    pub row: Vec<u32>,
    /// Number of rows.
    pub rows: u32,
    /// One route per distinct edge between two different vertices (self-loops are not routed).
    pub edges: Vec<Route>,
    /// Width of the drawing (vertex boxes included, no margins).
    pub width: f64,
}

/// The path of one edge `from -> to`: the intermediate points, in the edge's direction.
#[derive(Debug)]
pub(super) struct Route {
    pub from: u32,
    pub to: u32,
    /// (x, row) of each dummy point crossed, from `from` towards `to`.
    pub points: Vec<(f64, u32)>,
}

/// A DAG edge of the layering: `upper` is above `lower`.
pub(super) struct LayerEdge {
    upper: u32,
    lower: u32,
    /// The graph's edge runs `lower -> upper` (a reversed back edge).
    reversed: bool,
}

impl Layout {
    /// Lays out `graph`, whose vertex `v` is `widths[v]` pixels wide.
    pub fn of(graph: &Digraph, widths: &[f64]) -> Self {
        let n = graph.vertex_count() as usize;
        let (edges, layer) = layering(graph);
        let rows = layer.iter().copied().max().unwrap_or(0) + 1;
        let row_of = |v: u32| rows - 1 - layer[v as usize];

        // Points: the vertices, then the dummies; each with its row and its neighbours in the
        // rows above and below.
        let mut point_row: Vec<u32> = (0..n as u32).map(row_of).collect();
        let mut point_width: Vec<f64> = widths.to_vec();
        let mut up: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut down: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut chains: Vec<Vec<u32>> = Vec::with_capacity(edges.len());
        let mut dummies = 0usize;
        for edge in &edges {
            let (top, bottom) = (row_of(edge.upper), row_of(edge.lower));
            let mut chain = Vec::new();
            let mut previous = edge.upper;
            if dummies + (bottom - top - 1) as usize <= MAX_DUMMIES {
                for row in top + 1..bottom {
                    let dummy = point_row.len() as u32;
                    point_row.push(row);
                    point_width.push(DUMMY_WIDTH);
                    up.push(vec![previous]);
                    down.push(Vec::new());
                    down[previous as usize].push(dummy);
                    chain.push(dummy);
                    previous = dummy;
                    dummies += 1;
                }
            }
            // A long edge past the cap is drawn straight and left out of the ordering (its
            // ends are not on neighbouring rows).
            if row_of(edge.lower) == point_row[previous as usize] + 1 {
                down[previous as usize].push(edge.lower);
                up[edge.lower as usize].push(previous);
            }
            chains.push(chain);
        }

        let order = order_rows(&point_row, rows as usize, &up, &down);
        let (x, width) = coordinates(n, &order, &up, &down, &point_width);

        let routes = edges
            .iter()
            .zip(chains)
            .map(|(edge, chain)| {
                let mut points: Vec<(f64, u32)> = chain
                    .iter()
                    .map(|&d| (x[d as usize], point_row[d as usize]))
                    .collect();
                let (from, to) = if edge.reversed {
                    points.reverse();
                    (edge.lower, edge.upper)
                } else {
                    (edge.upper, edge.lower)
                };
                Route { from, to, points }
            })
            .collect();
        Self {
            x: x[..n].to_vec(),
            row: point_row[..n].to_vec(),
            rows,
            edges: routes,
            width,
        }
    }
}
