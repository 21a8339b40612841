//! Grundy values of token sliding on an acyclic graph: `g(v) = mex { g(w) : w in succ(v) }`.

use super::graph::Digraph;
use super::interrupt::{Cancelled, Interrupt};
use super::prefetch::prefetch_ahead;

/// How many vertices ahead [`grundy_table`] touches adjacency lists.
const LOOKAHEAD: usize = 16;

/// The plain mex pass: `u64` values, one touch of the adjacency list 16 vertices ahead, a
/// stamp array for the mex. The reference that [`grundy_table_interruptible`] is tested and
/// benchmarked against. `order` lists successors first.
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

/// The table of [`grundy_table`], stopping with [`Cancelled`] once `interrupt` is raised
/// (read every [`super::interrupt::CHECK_INTERVAL`] edge visits). Same results, faster on
/// graphs larger than the caches:
/// - values are kept in the narrowest of `u8`, `u16`, `u32` that holds the largest out-degree
///   (`g(v) <= outdeg(v)`), widened to `u64` at the end: 10^6 vertices take 1 MB instead of
///   8 MB, which stays in a core's L2 cache while successors are read at random;
/// - vertices `16` ahead in `order` get their CSR offsets prefetched, vertices `8` ahead every
///   line of their adjacency list, up to four (their offsets are in cache by then);
/// - a vertex with fewer than 64 successors takes the mex of a 64-bit mask (no branch per
///   successor, no stamp array).
pub fn grundy_table_interruptible(
    graph: &Digraph,
    order: &[u32],
    interrupt: &Interrupt,
) -> Result<Vec<u64>, Cancelled> {
    let widest = graph.max_out_degree();
    if widest <= u32::from(u8::MAX) {
        narrow_table::<u8>(graph, order, interrupt)
    } else if widest <= u32::from(u16::MAX) {
        narrow_table::<u16>(graph, order, interrupt)
    } else {
        narrow_table::<u32>(graph, order, interrupt)
    }
}

/// A value cell narrower than `u64`, wide enough for every out-degree of the graph.
trait Narrow: Copy + Default + Into<u64> {
    /// `value` as a cell; it fits, being at most an out-degree.
    fn from_index(value: usize) -> Self;
}

macro_rules! narrow {
    ($t:ty) => {
        impl Narrow for $t {
            #[inline(always)]
            fn from_index(value: usize) -> Self {
                value as $t
            }
        }
    };
}

narrow!(u8);
narrow!(u16);
narrow!(u32);

/// [`grundy_table_interruptible`] with values in `V`.
fn narrow_table<V: Narrow>(
    graph: &Digraph,
    order: &[u32],
    interrupt: &Interrupt,
) -> Result<Vec<u64>, Cancelled> {
    let mut poller = interrupt.poller();
    let mut values = vec![V::default(); graph.vertex_count() as usize];
    let mut stamps = vec![u32::MAX; graph.max_out_degree() as usize + 1];
    let offsets = graph.offsets();
    let targets = graph.targets();
    for (position, &vertex) in order.iter().enumerate() {
        prefetch_ahead(order, position, offsets, targets);
        let successors = graph.successors(vertex);
        let mex = if successors.len() < 64 {
            // Every value that matters is below 64 (g <= outdeg); larger ones are masked out.
            let mut seen = 0u64;
            for &w in successors {
                let value: u64 = values[w as usize].into();
                seen |= (1u64 << (value & 63)) & u64::from(value < 64).wrapping_neg();
            }
            (!seen).trailing_zeros() as usize
        } else {
            for &w in successors {
                let value: u64 = values[w as usize].into();
                if value <= successors.len() as u64 {
                    stamps[value as usize] = vertex;
                }
            }
            let mut mex = 0;
            while stamps[mex] == vertex {
                mex += 1;
            }
            mex
        };
        values[vertex as usize] = V::from_index(mex);
        poller.tick(successors.len() as u64 + 1)?;
    }
    Ok(values.into_iter().map(Into::into).collect())
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
        // docs/games.md sample, test case 1: 0 -> {1, 2}, 2 -> {3}.
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
    fn the_narrow_cells_match_the_plain_pass() {
        for (n, fan) in [(3000u32, 5u32), (3000, 300), (600, 70_000)] {
            // Vertex v moves to up to `fan` pseudo-random smaller vertices: `u8` cells, then
            // `u16` cells, with masks (< 64 followers) and stamps.
            let edges: Vec<(u32, u32)> = (1..n)
                .flat_map(|v| (0..fan.min(v * 40)).map(move |i| (v, (v * 31 + i * 17) % v)))
                .collect();
            let graph = Digraph::from_edges(n, &edges).unwrap();
            let order = successors_first_order(&graph).unwrap();
            let narrow = grundy_table_interruptible(&graph, &order, &Interrupt::new()).unwrap();
            assert_eq!(narrow, grundy_table(&graph, &order));
        }
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
