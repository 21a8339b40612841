//! Layering: which row each vertex goes to. Back edges of a depth-first search are reversed
//! (cycle breaking), then every vertex gets the longest path down to a sink as its layer, and
//! vertices move, one at a time, to the layer between their neighbours that shortens their
//! edges most.

use super::LayerEdge;
use crate::engine::Digraph;

/// Rounds of the layer-shortening pass.
const LAYER_ROUNDS: usize = 32;

/// The DAG edges and the layer of every vertex (0 = bottom). On a cyclic graph, which edges
/// are reversed depends on where the depth-first searches start; a few orders of roots are
/// tried (index order, sources first, reverse index order), and the greedy order of Eades,
/// Lin and Smyth (edges against it reversed), and the layering with the
/// shortest edges in total wins, fewer reversed edges breaking ties.
pub(super) fn layering(graph: &Digraph) -> (Vec<LayerEdge>, Vec<u32>) {
    let n = graph.vertex_count();
    let mut in_degree = vec![0u32; n as usize];
    for v in 0..n {
        for &w in graph.successors(v) {
            in_degree[w as usize] += 1;
        }
    }
    let index: Vec<u32> = (0..n).collect();
    let mut sources_first = index.clone();
    sources_first.sort_by_key(|&v| {
        (
            in_degree[v as usize],
            std::cmp::Reverse(graph.successors(v).len()),
        )
    });
    let reverse: Vec<u32> = (0..n).rev().collect();
    // (total span, reversed edges), the edges, the layers.
    type Layered = ((u64, usize), Vec<LayerEdge>, Vec<u32>);
    let mut best: Option<Layered> = None;
    let candidates = [
        layer_edges(graph, &index),
        feedback_order_edges(graph),
        layer_edges(graph, &sources_first),
        layer_edges(graph, &reverse),
    ];
    for edges in candidates {
        let mut layer = longest_path_layers(n as usize, &edges);
        shorten_edges(&mut layer, &edges);
        let span: u64 = edges
            .iter()
            .map(|e| u64::from(layer[e.upper as usize] - layer[e.lower as usize]))
            .sum();
        let cost = (span, edges.iter().filter(|e| e.reversed).count());
        if best.as_ref().is_none_or(|(least, _, _)| cost < *least) {
            best = Some((cost, edges, layer));
        }
        if !graph_has_cycle(&best.as_ref().unwrap().1) {
            break;
        }
    }
    let (_, edges, layer) = best.unwrap_or_default();
    (edges, layer)
}

/// The distinct edges between different vertices, those against the greedy linear order of
/// Eades, Lin and Smyth ("A fast and effective heuristic for the feedback arc set problem",
/// 1993) reversed: sinks go to the end, sources to the front, and otherwise the vertex with
/// the most edges out less edges in goes next. Quadratic time in the vertices (the caller
/// bounds them), linear memory.
fn feedback_order_edges(graph: &Digraph) -> Vec<LayerEdge> {
    let n = graph.vertex_count() as usize;
    let distinct = |v: u32| {
        let successors = graph.successors(v);
        successors
            .iter()
            .enumerate()
            .filter(move |&(i, &w)| w != v && !successors[..i].contains(&w))
            .map(|(_, &w)| w)
    };
    let mut out_degree = vec![0i64; n];
    let mut in_degree = vec![0i64; n];
    let mut predecessors: Vec<Vec<u32>> = vec![Vec::new(); n];
    for v in 0..n as u32 {
        for w in distinct(v) {
            out_degree[v as usize] += 1;
            in_degree[w as usize] += 1;
            predecessors[w as usize].push(v);
        }
    }
    let mut removed = vec![false; n];
    let (mut front, mut back) = (Vec::with_capacity(n), Vec::new());
    let remove = |v: u32, removed: &mut [bool], out_degree: &mut [i64], in_degree: &mut [i64]| {
        removed[v as usize] = true;
        for w in distinct(v) {
            in_degree[w as usize] -= 1;
        }
        for &u in &predecessors[v as usize] {
            out_degree[u as usize] -= 1;
        }
    };
    for _ in 0..n {
        let live = (0..n as u32).filter(|&v| !removed[v as usize]);
        let next = live
            .clone()
            .find(|&v| out_degree[v as usize] == 0)
            .map(|v| (v, false))
            .or_else(|| {
                live.clone()
                    .find(|&v| in_degree[v as usize] == 0)
                    .map(|v| (v, true))
            })
            .or_else(|| {
                live.max_by_key(|&v| {
                    (
                        out_degree[v as usize] - in_degree[v as usize],
                        std::cmp::Reverse(v),
                    )
                })
                .map(|v| (v, true))
            });
        let Some((v, to_front)) = next else { break };
        remove(v, &mut removed, &mut out_degree, &mut in_degree);
        if to_front {
            front.push(v);
        } else {
            back.push(v);
        }
    }
    front.extend(back.into_iter().rev());
    let mut position = vec![0usize; n];
    for (i, &v) in front.iter().enumerate() {
        position[v as usize] = i;
    }
    let mut edges = Vec::new();
    for v in 0..n as u32 {
        for w in distinct(v) {
            let reversed = position[w as usize] < position[v as usize];
            let (upper, lower) = if reversed { (w, v) } else { (v, w) };
            edges.push(LayerEdge {
                upper,
                lower,
                reversed,
            });
        }
    }
    edges
}

/// Whether the search reversed an edge (so the graph had a cycle and other roots may do
/// better).
fn graph_has_cycle(edges: &[LayerEdge]) -> bool {
    edges.iter().any(|e| e.reversed)
}

/// The distinct edges between different vertices, back edges of an iterative depth-first
/// search (from `roots` in turn) reversed so that the result is acyclic.
fn layer_edges(graph: &Digraph, roots: &[u32]) -> Vec<LayerEdge> {
    const NEW: u8 = 0;
    const ON_STACK: u8 = 1;
    const DONE: u8 = 2;
    let n = graph.vertex_count();
    let mut state = vec![NEW; n as usize];
    let mut edges = Vec::new();
    let mut stack: Vec<(u32, usize)> = Vec::new();
    for &root in roots {
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
