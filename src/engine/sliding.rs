//! Grundy values of token sliding on an acyclic graph: `g(v) = mex { g(w) : w in succ(v) }`.

use super::graph::Digraph;

/// How many vertices ahead the table pass touches adjacency lists.
const LOOKAHEAD: usize = 16;

/// Computes `g(v)` for every vertex, visiting vertices in `order` (successors first, as
/// returned by [`super::order::successors_first_order`]).
///
/// O(V + E) time. The mex uses one scratch array of `max_out_degree + 1` stamps: a slot holds
/// the vertex that last marked it, so nothing is cleared between vertices. `g(v) <= outdeg(v)`,
/// so successor values above the degree are skipped.
pub fn grundy_table(graph: &Digraph, order: &[u32]) -> Vec<u64> {
    let mut values = vec![0u64; graph.vertex_count() as usize];
    let mut stamps = vec![u32::MAX; graph.max_out_degree() as usize + 1];
    let offsets = graph.offsets();
    let targets = graph.targets();
    for (position, &vertex) in order.iter().enumerate() {
        // Touch the adjacency list a few vertices ahead: the load does not feed this
        // iteration, so its cache miss overlaps with the work here (the order visits
        // adjacency lists at random, and waiting for each miss in turn dominates).
        if let Some(&ahead) = order.get(position + LOOKAHEAD) {
            let start = offsets[ahead as usize] as usize;
            std::hint::black_box(targets.get(start).copied());
        }
        let successors = graph.successors(vertex);
        for &w in successors {
            let value = values[w as usize];
            if value <= successors.len() as u64 {
                stamps[value as usize] = vertex;
            }
        }
        let mut mex = 0;
        while stamps[mex] == vertex {
            mex += 1;
        }
        values[vertex as usize] = mex as u64;
    }
    values
}

#[cfg(test)]
mod tests {
    use super::super::order::successors_first_order;
    use super::*;

    fn table(n: u32, edges: &[(u32, u32)]) -> Vec<u64> {
        let g = Digraph::from_edges(n, edges).unwrap();
        grundy_table(&g, &successors_first_order(&g).unwrap())
    }

    #[test]
    fn sample_graph_values() {
        // GAMES.md sample, test case 1: 0 -> {1, 2}, 2 -> {3}.
        assert_eq!(table(4, &[(0, 1), (0, 2), (2, 3)]), vec![2, 0, 1, 0]);
    }

    #[test]
    fn multi_edges_and_large_successor_values() {
        // 3 -> 2 -> 1 -> 0 chain gives 1,0,1,0 pattern; a fan over the chain gives a mex of 2.
        assert_eq!(
            table(5, &[(1, 0), (2, 1), (3, 2), (4, 0), (4, 0), (4, 1)]),
            vec![0, 1, 0, 1, 2]
        );
    }

    #[test]
    fn chain_of_a_million() {
        let n = 1_000_000u32;
        let edges: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
        let values = table(n, &edges);
        assert_eq!(values[n as usize - 1], 0);
        assert_eq!(values[0], u64::from((n - 1) % 2));
    }
}
