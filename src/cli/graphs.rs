//! A test case's graph from the parser's events, in the CSR form of `grundy.v1.Graph`, with
//! the label that names it in messages: the one conversion every command uses.

use crate::engine::Digraph;
use crate::judge::Location;
use crate::proto;

/// A test case's graph as read from the input.
pub(super) struct InputGraph {
    /// "test case 3 (line 17)", "game 2 (line 9)".
    pub(super) label: String,
    pub(super) graph: proto::Graph,
}

/// Test case `case` of a chess input, whose graph starts at `location`.
pub(super) fn chess_graph(
    case: u64,
    location: Location,
    vertex_count: u32,
    out_degrees: Vec<u32>,
    targets: Vec<u32>,
) -> InputGraph {
    InputGraph {
        label: case_label("test case", case, location),
        graph: proto::Graph {
            vertex_count,
            out_degrees,
            targets,
            split_counts: Vec::new(),
            fixed_targets: Vec::new(),
        },
    }
}

/// Game `game` of an addsub input, whose graph starts at `location`.
pub(super) fn addsub_graph(
    game: u64,
    location: Location,
    vertex_count: u32,
    edges: &[(u32, u32)],
    split_counts: Vec<u32>,
) -> InputGraph {
    InputGraph {
        label: case_label("game", game, location),
        graph: graph_from_edges(vertex_count, edges, split_counts),
    }
}

fn case_label(kind: &str, number: u64, location: Location) -> String {
    format!("{kind} {number} (line {})", location.line)
}

/// Wire graph from an edge list (validated by the parser: endpoints in range), in the CSR
/// form the engine builds.
pub(super) fn graph_from_edges(
    vertex_count: u32,
    edges: &[(u32, u32)],
    split_counts: Vec<u32>,
) -> proto::Graph {
    let (offsets, targets) = Digraph::from_edges(vertex_count, edges)
        .expect("the parser checks the vertex count, the edge count and the endpoints")
        .into_parts();
    proto::Graph {
        vertex_count,
        out_degrees: offsets.windows(2).map(|pair| pair[1] - pair[0]).collect(),
        targets,
        split_counts,
        fixed_targets: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphs_from_edges_are_csr() {
        let graph = graph_from_edges(4, &[(2, 1), (0, 3), (2, 3), (0, 1)], vec![1; 4]);
        assert_eq!(graph.out_degrees, vec![2, 0, 2, 0]);
        assert_eq!(graph.targets, vec![3, 1, 1, 3]);
    }
}
