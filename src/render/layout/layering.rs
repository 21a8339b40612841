//! Layering: which row each vertex goes to. Back edges of a depth-first search are reversed
//! (cycle breaking), then every vertex gets the longest path down to a sink as its layer, and
//! vertices move, one at a time, to the layer between their neighbours that shortens their
//! edges most.

use super::LayerEdge;
use crate::engine::Digraph;

/// Rounds of the layer-shortening pass.
const LAYER_ROUNDS: usize = 32;

/// The distinct edges between different vertices, back edges of an iterative depth-first
/// search reversed so that the result is acyclic.
pub(super) fn layer_edges(graph: &Digraph) -> Vec<LayerEdge> {
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
pub(super) fn longest_path_layers(n: usize, edges: &[LayerEdge]) -> Vec<u32> {
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
pub(super) fn shorten_edges(layer: &mut [u32], edges: &[LayerEdge]) {
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
