//! A layered ("Sugiyama") layout, the passes of Graphviz `dot` (Gansner, Koutsofios, North and
//! Vo, "A technique for drawing directed graphs", 1993) in simpler forms:
//!
//! 1. cycle breaking: an iterative depth-first search reverses its back edges, which leaves
//!    a DAG (on an acyclic graph nothing is reversed);
//! 2. layering: first the longest path from each vertex to a sink, so every edge points down
//!    (reversed edges point up); then each vertex in turn moves to the layer, between its
//!    neighbours, that shortens its edges most (a sink hangs just below its lowest parent
//!    instead of sitting on the bottom row), until no move helps;
//! 3. ordering: edges spanning several layers get one dummy point per layer crossed, then
//!    alternating down and up sweeps sort each layer by the weighted median of its
//!    neighbours in the previous one, each sweep followed by swaps of neighbouring points
//!    while a swap removes crossings ("transpose"); from two starting orders (input order and
//!    depth-first order), the order with the fewest crossings wins;
//! 4. coordinates: each point moves towards the weighted mean of its neighbours (long edges
//!    weigh most, as in dot, so that they run straight), with the minimum
//!    separation kept by averaging a left-to-right and a right-to-left placement.
//!
//! The caller bounds the graph ([`super::drawing::MAX_SVG_VERTICES`]); dummy points are capped too, so
//! a graph with many long edges is drawn with straight edges rather than slowly.

use crate::engine::Digraph;

/// Dummy points allowed in total; past this, long edges are drawn straight.
const MAX_DUMMIES: usize = 20_000;
/// Down-and-up sweeps of the median ordering, per starting order.
const SWEEPS: usize = 24;
/// Rounds of the layer-shortening pass.
const LAYER_ROUNDS: usize = 32;
/// Passes of the coordinate refinement.
const REFINEMENTS: usize = 8;
/// Horizontal gap between neighbouring points, and the width of a dummy point.
const GAP: f64 = 18.0;
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
struct LayerEdge {
    upper: u32,
    lower: u32,
    /// The graph's edge runs `lower -> upper` (a reversed back edge).
    reversed: bool,
}

impl Layout {
    /// Lays out `graph`, whose vertex `v` is `widths[v]` pixels wide.
    pub fn of(graph: &Digraph, widths: &[f64]) -> Self {
        let n = graph.vertex_count() as usize;
        let edges = layer_edges(graph);
        let mut layer = longest_path_layers(n, &edges);
        shorten_edges(&mut layer, &edges);
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
            down[previous as usize].push(edge.lower);
            up[edge.lower as usize].push(previous);
            chains.push(chain);
        }

        let mut order: Vec<Vec<u32>> = vec![Vec::new(); rows as usize];
        for (point, &row) in point_row.iter().enumerate() {
            order[row as usize].push(point as u32);
        }
        let depth_first = depth_first_rank(&up, &down);
        let mut alternative = order.clone();
        for row in &mut alternative {
            row.sort_by_key(|&p| depth_first[p as usize]);
        }
        let first = reduce_crossings(&mut order, &up, &down);
        let second = reduce_crossings(&mut alternative, &up, &down);
        if second < first {
            order = alternative;
        }
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

/// The distinct edges between different vertices, back edges of an iterative depth-first
/// search reversed so that the result is acyclic.
fn layer_edges(graph: &Digraph) -> Vec<LayerEdge> {
    const NEW: u8 = 0;
    const ON_STACK: u8 = 1;
    const DONE: u8 = 2;
    let n = graph.vertex_count();
    let mut state = vec![NEW; n as usize];
    let mut edges = Vec::new();
    let mut stack: Vec<(u32, usize)> = Vec::new();
    for root in 0..n {
        if state[root as usize] != NEW {
            continue;
        }
        state[root as usize] = ON_STACK;
        stack.push((root, 0));
        while let Some((vertex, next)) = stack.last_mut() {
            let successors = graph.successors(*vertex);
            let Some(&target) = successors.get(*next) else {
                state[*vertex as usize] = DONE;
                stack.pop();
                continue;
            };
            *next += 1;
            let from = *vertex;
            // Each distinct edge once: skip repeats of an earlier successor, and self-loops.
            let index = *next - 1;
            if target == from || successors[..index].contains(&target) {
                continue;
            }
            match state[target as usize] {
                ON_STACK => edges.push(LayerEdge {
                    upper: target,
                    lower: from,
                    reversed: true,
                }),
                seen => {
                    edges.push(LayerEdge {
                        upper: from,
                        lower: target,
                        reversed: false,
                    });
                    if seen == NEW {
                        state[target as usize] = ON_STACK;
                        stack.push((target, 0));
                    }
                }
            }
        }
    }
    edges
}

/// Layer of each vertex: the longest path down to a vertex with no lower neighbour, by
/// Kahn's algorithm on the reversed DAG (sinks first).
fn longest_path_layers(n: usize, edges: &[LayerEdge]) -> Vec<u32> {
    let mut lower_count = vec![0u32; n];
    let mut uppers: Vec<Vec<u32>> = vec![Vec::new(); n];
    for edge in edges {
        lower_count[edge.upper as usize] += 1;
        uppers[edge.lower as usize].push(edge.upper);
    }
    let mut layer = vec![0u32; n];
    let mut ready: Vec<u32> = (0..n as u32)
        .filter(|&v| lower_count[v as usize] == 0)
        .collect();
    while let Some(vertex) = ready.pop() {
        for &upper in &uppers[vertex as usize] {
            let upper = upper as usize;
            layer[upper] = layer[upper].max(layer[vertex as usize] + 1);
            lower_count[upper] -= 1;
            if lower_count[upper] == 0 {
                ready.push(upper as u32);
            }
        }
    }
    layer
}

/// Moves each vertex, in turn, to the layer between its neighbours that makes its edges
/// shortest in total: the cost is linear in the layer, so the best layer is the lowest
/// allowed one when the vertex has more edges down than up, the highest when more up.
/// Stops when a round moves nothing. `layer` counts from the bottom (0).
fn shorten_edges(layer: &mut [u32], edges: &[LayerEdge]) {
    let n = layer.len();
    let mut uppers: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut lowers: Vec<Vec<u32>> = vec![Vec::new(); n];
    for edge in edges {
        uppers[edge.lower as usize].push(edge.upper);
        lowers[edge.upper as usize].push(edge.lower);
    }
    for _ in 0..LAYER_ROUNDS {
        let mut moved = false;
        for v in 0..n {
            let (up, down) = (&uppers[v], &lowers[v]);
            if up.len() == down.len() {
                continue;
            }
            let lowest = down
                .iter()
                .map(|&w| layer[w as usize] + 1)
                .max()
                .unwrap_or(0);
            let best = if down.len() > up.len() {
                lowest
            } else {
                // More edges up than down, so at least one up: hang just below the lowest.
                up.iter()
                    .map(|&u| layer[u as usize] - 1)
                    .min()
                    .unwrap_or(lowest)
            };
            if best != layer[v] {
                layer[v] = best;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    let least = layer.iter().copied().min().unwrap_or(0);
    for l in layer.iter_mut() {
        *l -= least;
    }
}

/// A depth-first numbering of the points (vertices and dummies), from the top rows down:
/// children of one parent get neighbouring numbers, a good starting order for the sweeps.
fn depth_first_rank(up: &[Vec<u32>], down: &[Vec<u32>]) -> Vec<usize> {
    let points = up.len();
    let mut rank = vec![usize::MAX; points];
    let mut roots: Vec<u32> = (0..points as u32)
        .filter(|&p| up[p as usize].is_empty())
        .collect();
    roots.extend(0..points as u32);
    let mut next = 0usize;
    let mut stack: Vec<u32> = Vec::new();
    for root in roots {
        if rank[root as usize] != usize::MAX {
            continue;
        }
        stack.push(root);
        while let Some(p) = stack.pop() {
            if rank[p as usize] != usize::MAX {
                continue;
            }
            rank[p as usize] = next;
            next += 1;
            // Reversed, so that the first child is visited first.
            for &q in down[p as usize].iter().rev() {
                if rank[q as usize] == usize::MAX {
                    stack.push(q);
                }
            }
        }
    }
    rank
}

/// Median sweeps over the rows, each followed by transposition, keeping the order with the
/// fewest crossings; returns that number of crossings.
fn reduce_crossings(order: &mut [Vec<u32>], up: &[Vec<u32>], down: &[Vec<u32>]) -> u64 {
    let mut position = vec![0usize; up.len()];
    for row in order.iter() {
        for (i, &p) in row.iter().enumerate() {
            position[p as usize] = i;
        }
    }
    transpose(order, up, down, &mut position);
    let mut best = order.to_vec();
    let mut best_crossings = crossings(order, down, &position);
    for sweep in 0..SWEEPS {
        if best_crossings == 0 {
            break;
        }
        let downwards = sweep % 2 == 0;
        let rows: Vec<usize> = if downwards {
            (1..order.len()).collect()
        } else {
            (0..order.len().saturating_sub(1)).rev().collect()
        };
        for r in rows {
            let neighbours = if downwards { up } else { down };
            let mut keyed: Vec<(f64, usize, u32)> = order[r]
                .iter()
                .map(|&p| {
                    let mut at: Vec<usize> = neighbours[p as usize]
                        .iter()
                        .map(|&q| position[q as usize])
                        .collect();
                    let key = weighted_median(&mut at).unwrap_or(position[p as usize] as f64);
                    (key, position[p as usize], p)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (i, &(_, _, p)) in keyed.iter().enumerate() {
                order[r][i] = p;
                position[p as usize] = i;
            }
        }
        transpose(order, up, down, &mut position);
        let count = crossings(order, down, &position);
        if count < best_crossings {
            best_crossings = count;
            best = order.to_vec();
        }
    }
    order.clone_from_slice(&best);
    best_crossings
}

/// The median of the neighbours' positions, weighted towards the denser side when there is
/// an even number of them (as in dot); `None` without neighbours.
fn weighted_median(at: &mut [usize]) -> Option<f64> {
    at.sort_unstable();
    let m = at.len() / 2;
    match at.len() {
        0 => None,
        len if len % 2 == 1 => Some(at[m] as f64),
        2 => Some((at[0] + at[1]) as f64 / 2.0),
        len => {
            let left = (at[m - 1] - at[0]) as f64;
            let right = (at[len - 1] - at[m]) as f64;
            if left + right == 0.0 {
                Some((at[m - 1] + at[m]) as f64 / 2.0)
            } else {
                Some((at[m - 1] as f64 * right + at[m] as f64 * left) / (left + right))
            }
        }
    }
}

/// Swaps neighbouring points of a row while a swap removes crossings with the rows above
/// and below (a bounded number of passes per row).
fn transpose(order: &mut [Vec<u32>], up: &[Vec<u32>], down: &[Vec<u32>], position: &mut [usize]) {
    // Pairs (a of u, b of v) with a right of b: the crossings of u's and v's edges to one side.
    let crossed = |u: u32, v: u32, side: &[Vec<u32>], position: &[usize]| -> u64 {
        let mut count = 0;
        for &a in &side[u as usize] {
            for &b in &side[v as usize] {
                if position[a as usize] > position[b as usize] {
                    count += 1;
                }
            }
        }
        count
    };
    for _ in 0..8 {
        let mut improved = false;
        for row in order.iter_mut() {
            for i in 0..row.len().saturating_sub(1) {
                let (u, v) = (row[i], row[i + 1]);
                let now = crossed(u, v, up, position) + crossed(u, v, down, position);
                let swapped = crossed(v, u, up, position) + crossed(v, u, down, position);
                if swapped < now {
                    row.swap(i, i + 1);
                    position[u as usize] = i + 1;
                    position[v as usize] = i;
                    improved = true;
                }
            }
        }
        if !improved {
            break;
        }
    }
}

/// Edge crossings between consecutive rows: inversions among the segments sorted by their
/// upper end, counted with a Fenwick tree over the lower ends.
fn crossings(order: &[Vec<u32>], down: &[Vec<u32>], position: &[usize]) -> u64 {
    let mut total = 0u64;
    for pair in order.windows(2) {
        let mut segments: Vec<(usize, usize)> = Vec::new();
        for &p in &pair[0] {
            for &q in &down[p as usize] {
                segments.push((position[p as usize], position[q as usize]));
            }
        }
        segments.sort_unstable();
        let mut tree = vec![0u64; pair[1].len() + 1];
        for (seen, &(_, lower)) in segments.iter().enumerate() {
            // Segments seen so far ending strictly right of `lower` cross this one.
            let mut at_or_left = 0u64;
            let mut i = lower + 1;
            while i > 0 {
                at_or_left += tree[i];
                i &= i - 1;
            }
            total += seen as u64 - at_or_left;
            let mut i = lower + 1;
            while i < tree.len() {
                tree[i] += 1;
                i += i & i.wrapping_neg();
            }
        }
    }
    total
}

/// Centre x of every point, and the drawing's width.
fn coordinates(
    vertices: usize,
    order: &[Vec<u32>],
    up: &[Vec<u32>],
    down: &[Vec<u32>],
    width: &[f64],
) -> (Vec<f64>, f64) {
    let mut x = vec![0.0f64; width.len()];
    for row in order {
        let mut left = 0.0;
        for &p in row {
            x[p as usize] = left + width[p as usize] / 2.0;
            left += width[p as usize] + GAP;
        }
    }
    for pass in 0..REFINEMENTS {
        let rows: Vec<usize> = if pass % 2 == 0 {
            (0..order.len()).collect()
        } else {
            (0..order.len()).rev().collect()
        };
        for r in rows {
            let desired: Vec<f64> = order[r]
                .iter()
                .map(|&p| {
                    // dot's weights: long edges (dummy to dummy) pull hardest, so they
                    // run straight instead of weaving between the rows.
                    let weight = |q: u32| match (p as usize >= vertices, q as usize >= vertices) {
                        (true, true) => 8.0,
                        (false, false) => 1.0,
                        _ => 2.0,
                    };
                    let adjacent = up[p as usize].iter().chain(&down[p as usize]);
                    let (sum, total) = adjacent.fold((0.0, 0.0), |(s, t), &q| {
                        (s + weight(q) * x[q as usize], t + weight(q))
                    });
                    if total == 0.0 {
                        x[p as usize]
                    } else {
                        sum / total
                    }
                })
                .collect();
            place_row(&order[r], &desired, width, &mut x);
        }
    }
    let mut min = f64::INFINITY;
    let mut max = f64::NEG_INFINITY;
    for (p, &centre) in x.iter().enumerate() {
        min = min.min(centre - width[p] / 2.0);
        max = max.max(centre + width[p] / 2.0);
    }
    if !min.is_finite() {
        return (x, 0.0);
    }
    for centre in &mut x {
        *centre -= min;
    }
    (x, max - min)
}

/// Places one row as close to `desired` as the separation allows: the mean of a placement
/// pushed rightwards and one pushed leftwards, both of which keep every gap (so the mean does).
fn place_row(row: &[u32], desired: &[f64], width: &[f64], x: &mut [f64]) {
    let separation = |a: u32, b: u32| (width[a as usize] + width[b as usize]) / 2.0 + GAP;
    let mut rightwards = desired.to_vec();
    for i in 1..row.len() {
        let least = rightwards[i - 1] + separation(row[i - 1], row[i]);
        rightwards[i] = rightwards[i].max(least);
    }
    let mut leftwards = desired.to_vec();
    for i in (0..row.len().saturating_sub(1)).rev() {
        let most = leftwards[i + 1] - separation(row[i], row[i + 1]);
        leftwards[i] = leftwards[i].min(most);
    }
    for (i, &p) in row.iter().enumerate() {
        x[p as usize] = (rightwards[i] + leftwards[i]) / 2.0;
    }
}
