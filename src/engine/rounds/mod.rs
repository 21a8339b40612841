//! The acyclic token-sliding table on several threads, Kahn round by Kahn round: the Grundy
//! value of every vertex, with its one-token remoteness or without (or the remoteness alone).
//!
//! Kahn's algorithm places the graph in rounds: round 0 holds the vertices without
//! predecessors, round k + 1 those whose last predecessor is in round k. No edge joins two
//! vertices of one round, so the vertices of a round can be placed in any order, and on any
//! thread; and every successor of a vertex is in a later round, so the values can be computed
//! round by round from the last round to the first, a round's vertices again in any order.
//!
//! A round of at least `wide_round` vertices is cut into chunks, about two per thread, and
//! the chunks into one share per thread; each thread claims the chunks of its own share one at
//! a time, then those left in the others' (a thread the machine does not run for a while
//! holds up one chunk, not its whole share of the round). A narrower round runs on the
//! calling thread alone (the benchmark DAG of 10^6 vertices has 362,167 rounds of 2.8
//! vertices on average: handing each one to other threads would cost more than the round).
//! The threads are started once per table, inside a [`std::thread::scope`] (no pool outlives
//! the call, and the caller decides how many threads one table may use); between wide rounds
//! they spin briefly, then park.
//!
//! A wide round is placed in two steps. First the threads read the successor lists of the
//! round's vertices and sort the successors by stripe (the vertices are cut into 16 ranges
//! per thread). Then each stripe is claimed by one thread, which decrements the in-degrees of
//! the stripe's successors and places those that reach zero; the stripes of a thread's share
//! are the same at every round, so their in-degrees stay in its cache. No in-degree is
//! written by two threads at once, so a decrement is a plain one (an atomic read-modify-write
//! costs about 1.4 plain ones on one thread of the development machine, and its cache line
//! travels between the cores at every decrement). The in-degrees are counted in one private
//! array per thread, then summed.
//!
//! The values are read and written in one table per thread (the calling thread's is the
//! result), and in a log in Kahn order. A round's vertices lie at random in the table, so in
//! one shared table nearly every cache line a thread read was last written by another core,
//! and moved between the cores' caches at every wide round: on a wide DAG, two threads
//! computed the values no faster than one. In the log a round's values fill consecutive
//! lines. A thread copies the values logged since its last copy into its own table before
//! its first chunk of a wide round (the calling thread also before a run of narrow rounds,
//! and once at the end), and reads only its own table. When a cell is a byte, the log and
//! the helpers' tables are arrays of the count, which have served their purpose by then;
//! wider cells take `threads` arrays of cells more (the log, and a table per helper), made
//! only when a round is wide. A graph without a wide round is valued on the calling thread
//! alone, in its own table: nothing is logged or copied.
//!
//! The shared arrays are atomics used with relaxed loads and stores, which compile to plain
//! ones. The start and the end of each step are the synchronisation points (release and
//! acquire). The results are those of the sequential pass: a vertex's value and remoteness
//! depend on its successors' only, not on the order within a round.

mod cell;
mod crew;
mod job;
mod steps;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, AtomicUsize};
use std::sync::{Mutex, OnceLock};
use std::thread;

use crate::engine::graph::Digraph;
use crate::engine::interrupt::{Cancelled, Interrupt};
use cell::Cell;
use crew::Crew;
use job::{Job, Task};
use steps::Shared;

/// Rounds of at least this many vertices are shared among the threads. A wide round's start
/// and end cost a few microseconds of wake-up; 1,024 vertices of out-degree 10 take some
/// 100 microseconds on one thread.
pub const WIDE_ROUND: usize = 1024;

/// Vertices of a wide round per chunk: the round cut into two chunks per thread, each of 256 to
/// 1,024 vertices (so more chunks in a wider round, fewer in a narrower one). A chunk restarts
/// the prefetches that run ahead of its loop, and is claimed with an atomic operation; a thread
/// the machine stops for a while holds up one chunk. On the wide DAG of the benchmarks (rounds
/// of 4,096 vertices) on 2 threads, chunks of 1,024 took the values in 50.3-51.1 ms against
/// 53.4-58.8 ms with chunks of 256 (medians of alternated runs).
fn chunk(vertices: usize, threads: usize) -> usize {
    vertices.div_ceil(2 * threads).clamp(256, 1024)
}

/// Stripes of in-degrees per thread (the chunks of the placing step).
const STRIPES_PER_THREAD: usize = 16;

/// Grundy values (widened to `u64`) and one-token remotenesses, one per vertex.
pub type Table = (Vec<u64>, Vec<u32>);

/// The Grundy values of an acyclic graph on `threads` threads, as
/// [`grundy_and_remoteness_on_threads`] computes them but without the remoteness: a value
/// takes one byte, so the table that successors are read from at random is a quarter of the
/// size (10^7 vertices: 10 MB, within the last-level cache, instead of 40 MB). `None` when
/// the graph has a cycle. Same conditions and fallback (then
/// [`super::sliding::grundy_table_interruptible`]).
pub fn grundy_on_threads(
    graph: &Digraph,
    threads: usize,
    wide_round: usize,
    interrupt: &Interrupt,
) -> Result<Option<Vec<u64>>, Cancelled> {
    on_threads(
        graph,
        (threads, wide_round),
        interrupt,
        |order| super::sliding::grundy_table_interruptible(graph, order, interrupt),
        |values: Vec<AtomicU8>| {
            let values = values.into_iter();
            values.map(|value| u64::from(value.into_inner())).collect()
        },
    )
}

/// The Grundy values and one-token remotenesses of an acyclic graph on `threads` threads,
/// the rounds of at least `wide_round` vertices shared among them; `None` when the graph has
/// a cycle. Stops with [`Cancelled`] once `interrupt` is raised (read on the calling thread,
/// between rounds and along the narrow ones).
///
/// Needs the packed cells of the sequential pass (out-degrees below 256, at most 2^24
/// vertices) and in-degrees below 256; otherwise, or with one thread, it is the sequential
/// pass ([`super::order::acyclic_order_interruptible`], then
/// [`super::sliding::grundy_and_remoteness_interruptible`]). When a round is wide, the
/// threads take `threads` arrays of `u32` cells more than the table: one to read from per
/// helper, and the cells in Kahn order that the threads copy from.
pub fn grundy_and_remoteness_on_threads(
    graph: &Digraph,
    threads: usize,
    wide_round: usize,
    interrupt: &Interrupt,
) -> Result<Option<Table>, Cancelled> {
    on_threads(
        graph,
        (threads, wide_round),
        interrupt,
        |order| super::sliding::grundy_and_remoteness_interruptible(graph, order, interrupt),
        |cells: Vec<AtomicU32>| {
            let cells: Vec<u32> = cells.into_iter().map(AtomicU32::into_inner).collect();
            let values = cells.iter().map(|&cell| u64::from(cell & 0xFF)).collect();
            let remoteness = cells.into_iter().map(|cell| cell >> 8).collect();
            (values, remoteness)
        },
    )
}

/// The one-token remotenesses alone of an acyclic graph on `threads` threads: the pass of
/// [`grundy_and_remoteness_on_threads`] (the values come along in the cells, and are dropped),
/// or, when the graph does not suit it, Kahn's order and
/// [`super::remoteness::acyclic_remoteness_interruptible`]. `None` when the graph has a cycle.
/// The same memory as that pass's, wide rounds included.
pub fn remoteness_on_threads(
    graph: &Digraph,
    threads: usize,
    wide_round: usize,
    interrupt: &Interrupt,
) -> Result<Option<Vec<u32>>, Cancelled> {
    on_threads(
        graph,
        (threads, wide_round),
        interrupt,
        |order| super::remoteness::acyclic_remoteness_interruptible(graph, order, interrupt),
        |cells: Vec<AtomicU32>| {
            let cells = cells.into_iter();
            cells.map(|cell| cell.into_inner() >> 8).collect()
        },
    )
}

/// The pass on threads (`(threads, wide_round)`, see [`place_and_value`]) into cells of type
/// `C`, its result read from them by `done`; or, when the graph does not suit it, Kahn's order
/// and `sequential` over it. `None` when the graph has a cycle.
fn on_threads<C: Cell, T>(
    graph: &Digraph,
    (threads, wide_round): (usize, usize),
    interrupt: &Interrupt,
    sequential: impl FnOnce(&[u32]) -> Result<T, Cancelled>,
    done: impl FnOnce(Vec<C>) -> T,
) -> Result<Option<T>, Cancelled> {
    match place_and_value::<C>(graph, threads, wide_round, interrupt)? {
        Placed::Unsuitable => match super::order::acyclic_order_interruptible(graph, interrupt)? {
            Some(order) => sequential(&order).map(Some),
            None => Ok(None),
        },
        Placed::Cyclic => Ok(None),
        Placed::Done(cells) => Ok(Some(done(cells))),
    }
}

/// How the threads' pass ended.
enum Placed<C> {
    /// The graph does not suit it (one thread, few vertices, a degree of 256 or more): the
    /// caller runs the sequential pass.
    Unsuitable,
    /// Kahn's algorithm stalled: the graph has a cycle.
    Cyclic,
    /// Every vertex placed and valued: the table's cells.
    Done(Vec<C>),
}

/// Kahn's rounds and the values from the last round to the first, on `threads` threads, into
/// cells of type `C` (with the remotenesses, or the values alone).
fn place_and_value<C: Cell>(
    graph: &Digraph,
    threads: usize,
    wide_round: usize,
    interrupt: &Interrupt,
) -> Result<Placed<C>, Cancelled> {
    let packable = graph.max_out_degree() <= u32::from(u8::MAX) && graph.vertex_count() <= 1 << 24;
    if threads <= 1 || !packable || (graph.vertex_count() as usize) < wide_round {
        return Ok(Placed::Unsuitable);
    }
    let mut poller = interrupt.poller();
    let n = graph.vertex_count() as usize;
    let atomics = |n: usize| (0..n).map(|_| AtomicU32::new(0)).collect::<Vec<_>>();
    let bytes = |n: usize| (0..n).map(|_| AtomicU8::new(0)).collect::<Vec<_>>();
    let shared = Shared {
        offsets: graph.offsets(),
        targets: graph.targets(),
        in_degree: bytes(n),
        counts: (1..threads).map(|_| bytes(n)).collect(),
        counted: AtomicU64::new(0),
        order: atomics(n),
        cells: (0..n).map(|_| C::new()).collect(),
        tail: AtomicUsize::new(0),
        work: AtomicU64::new(0),
        job: Job::new(threads),
        threads,
        stripes: STRIPES_PER_THREAD * threads,
        stripe_scale: (((STRIPES_PER_THREAD * threads) as u64) << 32) / n as u64,
        sorted: (0..threads * STRIPES_PER_THREAD * threads)
            .map(|_| Mutex::new(Vec::new()))
            .collect(),
        spare: OnceLock::new(),
        imported: (0..threads).map(|_| AtomicUsize::new(n)).collect(),
    };
    let rounds = thread::scope(|scope| {
        let crew = Crew::start(scope, &shared);
        crew.run(Task::Count, 0, graph.targets().len(), 1 << 16);
        crew.run(Task::Sum, 0, n, 1 << 16);
        poller.tick(graph.targets().len() as u64)?;
        if shared.counted.load(Relaxed) != graph.edge_count() {
            return Ok(Err(()));
        }
        let mut rounds: Vec<u32> = vec![0];
        let mut end = 0;
        for v in 0..n as u32 {
            if shared.in_degree[v as usize].load(Relaxed) == 0 {
                shared.order[end].store(v, Relaxed);
                end += 1;
            }
        }
        let mut start = 0;
        let mut any_wide = false;
        while start < end {
            rounds.push(end as u32);
            let next_end = if end - start >= wide_round {
                any_wide = true;
                shared.tail.store(end, Relaxed);
                crew.run(Task::Sort, start, end, chunk(end - start, threads));
                crew.run(Task::Place, 0, shared.stripes, 1);
                poller.tick(shared.work.swap(0, Relaxed))?;
                shared.tail.load(Relaxed)
            } else {
                let mut tail = end;
                for position in start..end {
                    let edges = shared.place_alone(position, &mut tail);
                    poller.tick(edges + 1)?;
                }
                tail
            };
            (start, end) = (end, next_end);
        }
        if end < n {
            return Ok(Ok(None));
        }
        if any_wide {
            shared.prepare_copies();
        }
        // Values from the last round to the first; consecutive narrow rounds as one run.
        let mut round = rounds.len() - 1;
        while round > 0 {
            let (low, high) = (rounds[round - 1] as usize, rounds[round] as usize);
            if high - low >= wide_round {
                crew.run(Task::Value, low, high, chunk(high - low, threads));
                poller.tick(shared.work.swap(0, Relaxed))?;
                round -= 1;
                continue;
            }
            let mut first = round - 1;
            while first > 0 && ((rounds[first] - rounds[first - 1]) as usize) < wide_round {
                first -= 1;
            }
            shared.value_alone(rounds[first] as usize, high, &mut poller)?;
            round = first;
        }
        // The helpers' values of the first wide rounds into the calling thread's table.
        shared.catch_up(0, 0);
        Ok(Ok(Some(())))
    })?;
    Ok(match rounds {
        Err(()) => Placed::Unsuitable,
        Ok(None) => Placed::Cyclic,
        Ok(Some(())) => Placed::Done(shared.cells),
    })
}
