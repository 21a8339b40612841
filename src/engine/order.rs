//! Topological order by Kahn's algorithm, and the cycle that prevents one (named by an
//! iterative depth-first search).

use super::graph::Digraph;
use super::interrupt::{CHECK_INTERVAL, Cancelled, Interrupt, Poller};
use super::prefetch::{prefetch, prefetch_list};

/// A directed cycle: `vertices[0] -> vertices[1] -> ... -> vertices[last] -> vertices[0]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// The vertices along the cycle, each followed by an edge to the next.
    pub vertices: Vec<u32>,
}

impl std::fmt::Display for Cycle {
    /// `3 -> 5 -> 3`; cycles longer than 16 vertices are abbreviated in the middle.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const SHOWN: usize = 16;
        let vs = &self.vertices;
        let write_run = |run: &[u32], f: &mut std::fmt::Formatter<'_>| -> std::fmt::Result {
            for v in run {
                write!(f, "{v} -> ")?;
            }
            Ok(())
        };
        if vs.len() <= SHOWN {
            write_run(vs, f)?;
        } else {
            write_run(&vs[..SHOWN / 2], f)?;
            write!(f, "... ({} more) ... -> ", vs.len() - SHOWN)?;
            write_run(&vs[vs.len() - SHOWN / 2..], f)?;
        }
        write!(f, "{}", vs[0])
    }
}

const UNSEEN: u8 = 0;
const ON_STACK: u8 = 1;
const DONE: u8 = 2;

/// Returns the vertices in an order where every vertex comes after all of its successors
/// (a reverse topological order), or a cycle if there is none.
///
/// Kahn's algorithm: in-degrees by one sequential pass over the targets, then a queue of
/// vertices whose predecessors are all placed. The queue is the order itself, so besides the
/// result only the in-degree array is allocated (4 bytes per vertex), and successive queue
/// entries are independent, so the processor overlaps their cache misses (a depth-first
/// search would wait for each one). O(V + E), no recursion. If some vertex is never placed,
/// the graph has a cycle, and a depth-first search names one.
pub fn successors_first_order(graph: &Digraph) -> Result<Vec<u32>, Cycle> {
    acyclic_order(graph)
        .ok_or_else(|| find_cycle(graph).expect("Kahn's algorithm stalls only on a cycle"))
}

/// [`successors_first_order`] without naming a cycle: `None` when the graph has one.
pub fn acyclic_order(graph: &Digraph) -> Option<Vec<u32>> {
    acyclic_order_interruptible(graph, &Interrupt::new())
        .expect("nothing else holds this interrupt")
}

/// [`acyclic_order`], stopping with [`Cancelled`] once `interrupt` is raised (read every
/// [`super::interrupt::CHECK_INTERVAL`] edge visits).
///
/// Kahn's algorithm as in [`acyclic_order_plain`], tuned for graphs larger than the caches:
/// - in-degrees are counted in one byte per vertex when no vertex has 256 predecessors or
///   more (4x less memory for the random increments and decrements; recounted in `u32`
///   otherwise);
/// - the CSR offsets of a vertex's successors are prefetched when its list is read, and a
///   successor's adjacency list (every line of it, up to four) the moment it joins the queue
///   (through its offsets, `offsets[w]` and `offsets[w + 1]`), and again two queue entries before
///   it is read when more than 16 entries wait: a list prefetched that long ago may have left the
///   cache. A shorter queue gets no second prefetch, its lists having been asked for a moment ago.
///   Deep graphs keep a short queue (the benchmark DAG of 10^6 vertices has 362,167 levels, 2.8
///   vertices wide on average), where the second prefetch cost more than it saved; wide ones a long
///   one. In alternated runs of the loop after the count, on the benchmark DAG and on a wide one of
///   the same size (rounds of 4,096 vertices): 60.7-61.0 and 69.4-70.0 ms this way, 65.1-65.9 and
///   69.9-70.4 ms with the second prefetch always, 62.1-62.6 and 87.8-90.6 ms with none;
/// - while the queue is short, a successor's adjacency list is also prefetched when its
///   in-degree comes down to one: it joins the queue when its last predecessor is read, often
///   a round or two later, and its list is then on its way or in cache instead of a miss that
///   the next round waits for (the order on the benchmark DAG: 77.5-78.1 ms instead of
///   80.6-82.1 ms, in alternated runs, when it was first measured; see `place_successors`).
pub fn acyclic_order_interruptible(
    graph: &Digraph,
    interrupt: &Interrupt,
) -> Result<Option<Vec<u32>>, Cancelled> {
    let mut poller = interrupt.poller();
    match count_in_degrees::<u8>(graph, &mut poller)? {
        Some(in_degree) => kahn(graph, in_degree, &mut poller),
        None => {
            let in_degree = count_in_degrees::<u32>(graph, &mut poller)?
                .expect("u32 counts cannot overflow: at most u32::MAX edges");
            kahn(graph, in_degree, &mut poller)
        }
    }
}

/// An in-degree counter: `u8` when every count fits, else `u32`.
trait InDegree: Copy + Default + Eq + Into<u64> {
    /// Adds one, wrapping to zero on overflow.
    fn increment(&mut self);
    /// Subtracts one, returning how many are left.
    fn decrement(&mut self) -> u32;
}

macro_rules! in_degree {
    ($t:ty) => {
        impl InDegree for $t {
            #[inline(always)]
            fn increment(&mut self) {
                *self = self.wrapping_add(1);
            }

            #[inline(always)]
            fn decrement(&mut self) -> u32 {
                *self -= 1;
                u32::from(*self)
            }
        }
    };
}

in_degree!(u8);
in_degree!(u32);

/// In-degrees by one sequential pass over the targets; `None` if one overflows `D`.
///
/// An overflow is found afterwards, not at each increment: a count that wrapped lost 2^8
/// for a `u8` each time (a `u32` cannot wrap: there are fewer than 2^32 edges), so the
/// counts add up to the edge count exactly when none wrapped. The pass over the counts is
/// sequential and short, while a check at each increment waited for the count it had just
/// written: 12.1-12.7 ms against 8.6-8.9 ms for the count alone on the benchmark DAG (10^6
/// vertices, 10^7 edges).
fn count_in_degrees<D: InDegree>(
    graph: &Digraph,
    poller: &mut Poller<'_>,
) -> Result<Option<Vec<D>>, Cancelled> {
    let mut in_degree = vec![D::default(); graph.vertex_count() as usize];
    for chunk in graph.targets().chunks(CHECK_INTERVAL as usize) {
        for &w in chunk {
            in_degree[w as usize].increment();
        }
        poller.tick(CHECK_INTERVAL)?;
    }
    let counted: u64 = in_degree.iter().map(|&count| count.into()).sum();
    Ok((counted == graph.edge_count()).then_some(in_degree))
}

/// Kahn's algorithm over counted in-degrees, with the prefetches of
/// [`acyclic_order_interruptible`].
fn kahn<D: InDegree>(
    graph: &Digraph,
    mut in_degree: Vec<D>,
    poller: &mut Poller<'_>,
) -> Result<Option<Vec<u32>>, Cancelled> {
    /// How many queue entries ahead an adjacency list is prefetched again.
    const LOOKAHEAD: usize = 2;
    /// A queue of more entries than this is long: its lists are prefetched again shortly
    /// before they are read, and not when a vertex is left with one predecessor.
    const LONG_QUEUE: usize = 16;
    let n = graph.vertex_count() as usize;
    let offsets = graph.offsets();
    let targets = graph.targets();
    // The queue is the order: `order[..tail]` placed, `order[..head]` read. Each vertex is
    // placed once at most (its in-degree reaches zero once), so `tail` stays within `n`.
    let mut order = vec![0u32; n];
    let mut tail = 0;
    for v in 0..n as u32 {
        if in_degree[v as usize] == D::default() {
            order[tail] = v;
            tail += 1;
        }
    }
    let mut head = 0;
    while head < tail {
        let long_queue = tail - head > LONG_QUEUE;
        if long_queue {
            prefetch_list(offsets, targets, order[head + LOOKAHEAD] as usize);
        }
        let vertex = order[head];
        head += 1;
        let successors = graph.successors(vertex);
        place_successors(
            (offsets, targets),
            successors,
            !long_queue,
            |w| in_degree[w as usize].decrement(),
            |w| {
                order[tail] = w;
                tail += 1;
            },
        );
        poller.tick(successors.len() as u64 + 1)?;
    }
    if tail < n {
        return Ok(None);
    }
    order.reverse();
    Ok(Some(order))
}

/// One step of Kahn's algorithm: decrements the in-degree of each of `successors`
/// (`decrement` returns how many predecessors it has left) and `place`s those that reach zero,
/// with the prefetches of [`acyclic_order_interruptible`].
/// - Every successor's CSR offset is prefetched before any in-degree is known: the one that
///   reaches zero reads its offsets at once (to prefetch its list), and that miss then
///   overlaps with the others and with the decrements instead of starting after them.
/// - The adjacency list (`graph` is `(offsets, targets)`) of a successor that reaches zero is
///   prefetched. With `one_left`, so is that of a successor left with one predecessor: its last
///   one often comes a round or two later, and the list is then on its way or in cache. The
///   order asks for it while its queue is short: a long queue (a wide graph) reads that list
///   much later, by which time the early prefetch has been wasted, and prefetches it again
///   shortly before. On a wide DAG of 10^6 vertices (rounds of 4,096), the table took
///   84.2-87.0 ms without this prefetch on a long queue against 89.3-95.2 ms with it, in
///   alternated runs; on the deep benchmark DAG, whose queue is short, the order took 65.5-67.4
///   ms against 64.4-66.6 ms, within the noise.
#[inline(always)]
fn place_successors(
    (offsets, targets): (&[u32], &[u32]),
    successors: &[u32],
    one_left: bool,
    mut decrement: impl FnMut(u32) -> u32,
    mut place: impl FnMut(u32),
) {
    for &w in successors {
        prefetch(offsets, w as usize);
    }
    if !one_left {
        for &w in successors {
            if decrement(w) == 0 {
                prefetch_list(offsets, targets, w as usize);
                place(w);
            }
        }
        return;
    }
    for &w in successors {
        match decrement(w) {
            0 => {
                prefetch_list(offsets, targets, w as usize);
                place(w);
            }
            1 => prefetch_list(offsets, targets, w as usize),
            _ => {}
        }
    }
}

/// The plain Kahn's algorithm (`u32` in-degrees, no prefetch): the reference that
/// [`acyclic_order`] is tested and benchmarked against.
pub fn acyclic_order_plain(graph: &Digraph) -> Option<Vec<u32>> {
    let n = graph.vertex_count() as usize;
    let mut in_degree = vec![0u32; n];
    for &w in graph.targets() {
        in_degree[w as usize] += 1;
    }
    let mut order: Vec<u32> = Vec::with_capacity(n);
    order.extend((0..n as u32).filter(|&v| in_degree[v as usize] == 0));
    let mut head = 0;
    while head < order.len() {
        let vertex = order[head];
        head += 1;
        for &w in graph.successors(vertex) {
            let remaining = &mut in_degree[w as usize];
            *remaining -= 1;
            if *remaining == 0 {
                order.push(w);
            }
        }
    }
    if order.len() < n {
        return None;
    }
    order.reverse();
    Some(order)
}

/// Finds a directed cycle, if the graph has one.
///
/// Iterative DFS with an explicit stack of `(vertex, next edge)`: O(V + E) time, 5 bytes per
/// vertex at most, no recursion (a chain of millions of vertices is fine). Used to name a
/// cycle, not for orders: its dependent random accesses (each step waits for the previous
/// vertex's adjacency) make it several times slower than Kahn's algorithm on large graphs.
pub fn find_cycle(graph: &Digraph) -> Option<Cycle> {
    let n = graph.vertex_count() as usize;
    let offsets = graph.offsets();
    let targets = graph.targets();
    let mut state = vec![UNSEEN; n];
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for root in 0..n as u32 {
        if state[root as usize] != UNSEEN {
            continue;
        }
        state[root as usize] = ON_STACK;
        stack.push((root, offsets[root as usize]));
        while let Some(&mut (vertex, ref mut cursor)) = stack.last_mut() {
            let end = offsets[vertex as usize + 1];
            let mut child = None;
            while *cursor < end {
                let w = targets[*cursor as usize];
                *cursor += 1;
                match state[w as usize] {
                    UNSEEN => {
                        child = Some(w);
                        break;
                    }
                    ON_STACK => return Some(cycle_through(&stack, w)),
                    _ => {}
                }
            }
            match child {
                Some(w) => {
                    state[w as usize] = ON_STACK;
                    stack.push((w, offsets[w as usize]));
                }
                None => {
                    state[vertex as usize] = DONE;
                    stack.pop();
                }
            }
        }
    }
    None
}

/// The DFS stack holds a path; an edge from its top back to `entry` closes a cycle.
fn cycle_through(stack: &[(u32, u32)], entry: u32) -> Cycle {
    let start = stack
        .iter()
        .position(|&(v, _)| v == entry)
        .expect("an ON_STACK vertex is on the stack");
    Cycle {
        vertices: stack[start..].iter().map(|&(v, _)| v).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: u32, edges: &[(u32, u32)]) -> Digraph {
        Digraph::from_edges(n, edges).unwrap()
    }

    /// Asserts that `order` lists every vertex of `g` once, each after all its successors.
    fn assert_successors_first(g: &Digraph, order: &[u32]) {
        let mut position = vec![usize::MAX; g.vertex_count() as usize];
        for (i, &v) in order.iter().enumerate() {
            assert_eq!(position[v as usize], usize::MAX, "{v} listed twice");
            position[v as usize] = i;
        }
        for v in 0..g.vertex_count() {
            for &w in g.successors(v) {
                assert!(position[w as usize] < position[v as usize], "{v} -> {w}");
            }
        }
    }

    #[test]
    fn order_puts_successors_first() {
        let g = graph(5, &[(0, 1), (0, 2), (2, 1), (1, 3), (4, 0)]);
        assert_successors_first(&g, &successors_first_order(&g).unwrap());
    }

    #[test]
    fn in_degrees_that_wrap_a_byte_are_counted_again_wider() {
        // Vertex 0 has 512 predecessors and vertex 1 has 256: both counts wrap a byte to
        // exactly zero, which must not make either a source.
        let edges: Vec<(u32, u32)> = (2..514)
            .flat_map(|v| {
                [(v, 0), (v, 1)]
                    .into_iter()
                    .take(if v < 258 { 2 } else { 1 })
            })
            .collect();
        let g = graph(514, &edges);
        assert_successors_first(&g, &successors_first_order(&g).unwrap());
    }

    #[test]
    fn reports_a_real_cycle() {
        let g = graph(6, &[(0, 1), (1, 2), (2, 3), (3, 1), (4, 5)]);
        let cycle = find_cycle(&g).unwrap();
        assert_eq!(cycle.vertices, vec![1, 2, 3]);
        assert_eq!(cycle.to_string(), "1 -> 2 -> 3 -> 1");
        let self_loop = graph(2, &[(0, 1), (1, 1)]);
        assert_eq!(find_cycle(&self_loop).unwrap().vertices, vec![1]);
    }

    #[test]
    fn long_cycle_display_is_abbreviated() {
        let cycle = Cycle {
            vertices: (0..100).collect(),
        };
        let text = cycle.to_string();
        assert!(text.starts_with("0 -> 1 -> "));
        assert!(text.contains("... (84 more) ..."));
        assert!(text.ends_with("98 -> 99 -> 0"));
    }

    #[test]
    fn deep_chain_does_not_recurse() {
        let n = 1_000_000u32;
        let edges: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
        let order = successors_first_order(&graph(n, &edges)).unwrap();
        assert_eq!(order[0], n - 1);
        assert_eq!(order[n as usize - 1], 0);
    }
}
