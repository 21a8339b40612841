//! The acyclic token-sliding table (Grundy value and one-token remoteness of every vertex) on
//! several threads, Kahn round by Kahn round.
//!
//! Kahn's algorithm places the graph in rounds: round 0 holds the vertices without
//! predecessors, round k + 1 those whose last predecessor is in round k. No edge joins two
//! vertices of one round, so the vertices of a round can be placed in any order, and on any
//! thread; and every successor of a vertex is in a later round, so the values can be computed
//! round by round from the last round to the first, a round's vertices again in any order.
//!
//! A round of at least `wide_round` vertices is cut into chunks that the threads claim one
//! at a time (a thread the machine does not run for a while holds up one chunk, not a share
//! of the round); a narrower round runs on the calling thread alone (the benchmark DAG of
//! 10^6 vertices has 362,167 rounds of 2.8 vertices on average: handing each one to other
//! threads would cost more than the round). The threads are started once per table, inside a
//! [`std::thread::scope`] (no pool outlives the call, and the caller decides how many threads
//! one table may use); between wide rounds they spin briefly, then park.
//!
//! A wide round is placed in two steps. First the threads read the successor lists of the
//! round's vertices and sort the successors by stripe (the vertices are cut into 16 ranges
//! per thread). Then each stripe is claimed by one thread, which decrements the in-degrees of
//! the stripe's successors and places those that reach zero. No in-degree is written by two
//! threads at once, so a decrement is a plain one (an atomic read-modify-write costs about
//! 1.4 plain ones on one thread of the development machine, and its cache line travels
//! between the cores at every decrement). The in-degrees are counted in one private array
//! per thread, then summed.
//!
//! The shared arrays are atomics used with relaxed loads and stores, which compile to plain
//! ones. The start and the end of each step are the synchronisation points (release and
//! acquire). The results are those of the sequential pass: a vertex's value and remoteness depend on its
//! successors' only, not on the order within a round.

use std::cell::Cell;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::{self, Thread};

use super::graph::Digraph;
use super::interrupt::{Cancelled, Interrupt};
use super::prefetch::prefetch;
use super::remoteness::FollowerFold;

/// Rounds of at least this many vertices are shared among the threads. A wide round's start
/// and end cost a few microseconds of wake-up; 1,024 vertices of out-degree 10 take some
/// 100 microseconds on one thread.
pub const WIDE_ROUND: usize = 1024;

/// Vertices of a wide round per chunk.
const CHUNK: usize = 256;

/// Stripes of in-degrees per thread (the chunks of the placing step).
const STRIPES_PER_THREAD: usize = 16;

/// How many times a waiting thread spins (a `pause` each) before it parks or yields.
const SPINS: u32 = 1 << 10;

/// Grundy values (widened to `u64`) and one-token remotenesses, one per vertex.
pub type Table = (Vec<u64>, Vec<u32>);

/// The Grundy values and one-token remotenesses of an acyclic graph on `threads` threads,
/// the rounds of at least `wide_round` vertices shared among them; `None` when the graph has
/// a cycle. Stops with [`Cancelled`] once `interrupt` is raised (read on the calling thread,
/// between rounds and along the narrow ones).
///
/// Needs the packed cells of the sequential pass (out-degrees below 256, at most 2^24
/// vertices) and in-degrees below 256; otherwise, or with one thread, it is the sequential
/// pass ([`super::order::acyclic_order_interruptible`], then
/// [`super::sliding::grundy_and_remoteness_interruptible`]).
pub fn grundy_and_remoteness_on_threads(
    graph: &Digraph,
    threads: usize,
    wide_round: usize,
    interrupt: &Interrupt,
) -> Result<Option<Table>, Cancelled> {
    let sequential = |interrupt: &Interrupt| {
        let Some(order) = super::order::acyclic_order_interruptible(graph, interrupt)? else {
            return Ok(None);
        };
        super::sliding::grundy_and_remoteness_interruptible(graph, &order, interrupt).map(Some)
    };
    let packable = graph.max_out_degree() <= u32::from(u8::MAX) && graph.vertex_count() <= 1 << 24;
    if threads <= 1 || !packable || (graph.vertex_count() as usize) < wide_round {
        return sequential(interrupt);
    }
    let mut poller = interrupt.poller();
    let n = graph.vertex_count() as usize;
    let atomics = |n: usize| (0..n).map(|_| AtomicU32::new(0)).collect::<Vec<_>>();
    let shared = Shared {
        offsets: graph.offsets(),
        targets: graph.targets(),
        in_degree: (0..n).map(|_| AtomicU8::new(0)).collect(),
        counts: (1..threads)
            .map(|_| (0..n).map(|_| AtomicU8::new(0)).collect())
            .collect(),
        overflow: AtomicBool::new(false),
        order: atomics(n),
        cells: atomics(n),
        tail: AtomicUsize::new(0),
        work: AtomicU64::new(0),
        job: Job::default(),
        threads,
        stripes: STRIPES_PER_THREAD * threads,
        stripe_scale: (((STRIPES_PER_THREAD * threads) as u64) << 32) / n as u64,
        sorted: (0..threads * STRIPES_PER_THREAD * threads)
            .map(|_| Mutex::new(Vec::new()))
            .collect(),
    };
    let rounds = thread::scope(|scope| {
        let crew = Crew::start(scope, &shared);
        crew.run(Task::Count, 0, graph.targets().len(), 1 << 16);
        crew.run(Task::Sum, 0, n, 1 << 16);
        poller.tick(graph.targets().len() as u64)?;
        if shared.overflow.load(Relaxed) {
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
        while start < end {
            rounds.push(end as u32);
            let next_end = if end - start >= wide_round {
                shared.tail.store(end, Relaxed);
                crew.run(Task::Sort, start, end, CHUNK);
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
        // Values from the last round to the first; consecutive narrow rounds as one run.
        let mut round = rounds.len() - 1;
        while round > 0 {
            let (low, high) = (rounds[round - 1] as usize, rounds[round] as usize);
            if high - low >= wide_round {
                crew.run(Task::Value, low, high, CHUNK);
                poller.tick(shared.work.swap(0, Relaxed))?;
                round -= 1;
                continue;
            }
            let mut first = round - 1;
            while first > 0 && ((rounds[first] - rounds[first - 1]) as usize) < wide_round {
                first -= 1;
            }
            let low = rounds[first] as usize;
            let mut top = high;
            while top > low {
                let bottom = top.saturating_sub(1 << 14).max(low);
                poller.tick(shared.value_down(bottom, top) + (top - bottom) as u64)?;
                top = bottom;
            }
            round = first;
        }
        Ok(Ok(Some(())))
    })?;
    match rounds {
        Err(()) => return sequential(interrupt),
        Ok(None) => return Ok(None),
        Ok(Some(())) => {}
    }
    let cells: Vec<u32> = shared
        .cells
        .into_iter()
        .map(AtomicU32::into_inner)
        .collect();
    let values = cells.iter().map(|&cell| u64::from(cell & 0xFF)).collect();
    let remoteness = cells.into_iter().map(|cell| cell >> 8).collect();
    Ok(Some((values, remoteness)))
}

/// What the threads of a wide round do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Task {
    /// Count the in-degrees of a chunk of the targets (positions are edges here).
    Count = 0,
    /// Sum the threads' counts of a chunk of the vertices.
    Sum = 1,
    /// Sort the successors of a chunk of the round by stripe.
    Sort = 2,
    /// Decrement the in-degrees of the sorted successors of a stripe; place those at zero
    /// (positions are stripes here).
    Place = 3,
    /// Compute the values and remotenesses of a chunk of the round.
    Value = 4,
}

/// The step the threads work on, published by the calling thread.
#[derive(Debug, Default)]
struct Job {
    task: AtomicU8,
    start: AtomicUsize,
    end: AtomicUsize,
    chunk: AtomicUsize,
    /// `epoch << 40 | chunks << 20 | next`: the step's number, how many chunks it has, and
    /// the next chunk to claim. A thread claims a chunk by raising `next` (compare and swap)
    /// while the epoch is the one whose parameters it read: those cannot change before every
    /// chunk of the step is claimed and done.
    claim: AtomicU64,
    /// Chunks of the current step done.
    finished: AtomicUsize,
    /// Set when the helpers should return.
    stop: AtomicBool,
    /// Set when a helper panicked.
    broken: AtomicBool,
}

/// Bits of the chunk count and of the next chunk in [`Job::claim`].
const CLAIM_BITS: u32 = 20;
const CLAIM_MASK: u64 = (1 << CLAIM_BITS) - 1;
/// The epoch's bits: it wraps after 2^24 steps (a helper only needs to see it change).
const EPOCH_MASK: u64 = (1 << (64 - 2 * CLAIM_BITS)) - 1;

/// The arrays every thread reads and writes.
struct Shared<'g> {
    offsets: &'g [u32],
    targets: &'g [u32],
    /// Predecessors not yet placed.
    in_degree: Vec<AtomicU8>,
    /// The in-degrees counted by threads 1, 2, ... over their chunks of the edges (thread 0
    /// counts in `in_degree`), modulo 256.
    counts: Vec<Vec<AtomicU8>>,
    /// Set when an in-degree is 256 or more: the table is then made sequentially.
    overflow: AtomicBool,
    /// Vertices in Kahn order (sources first), filled round by round.
    order: Vec<AtomicU32>,
    /// `remoteness << 8 | value`, as in the sequential packed pass.
    cells: Vec<AtomicU32>,
    /// The end of the placed part of `order` during a wide round.
    tail: AtomicUsize,
    /// Edges visited by the threads in the last wide round (for the interrupt's poller).
    work: AtomicU64,
    job: Job,
    /// The number of threads, the calling one included.
    threads: usize,
    /// Vertex `w` is in stripe `(w * stripe_scale) >> 32`, with `stripe_scale =
    /// floor(2^32 * stripes / n)`: below `stripes` for every `w < n`, in ranges of about
    /// `n / stripes` vertices.
    stripes: usize,
    stripe_scale: u64,
    /// Successors of the round sorted by stripe: thread `t` fills
    /// `sorted[t * stripes + stripe]`, the thread that claims the stripe empties it.
    sorted: Vec<Mutex<Vec<u32>>>,
}

impl Shared<'_> {
    #[inline(always)]
    fn successors(&self, vertex: u32) -> &[u32] {
        let v = vertex as usize;
        &self.targets[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// Claims and runs chunks of step `epoch` as `thread` until none is left.
    fn work_on(&self, thread: usize, epoch: u64) {
        let job = &self.job;
        let word = job.claim.load(Acquire);
        if word >> (2 * CLAIM_BITS) != epoch {
            return;
        }
        let task = job.task.load(Relaxed);
        let (start, end, chunk) = (
            job.start.load(Relaxed),
            job.end.load(Relaxed),
            job.chunk.load(Relaxed),
        );
        let mut sorted: Vec<Vec<u32>> = Vec::new();
        let mut placed: Vec<u32> = Vec::new();
        let mut word = word;
        let mut done = 0;
        let mut edges = 0;
        loop {
            let (chunks, next) = ((word >> CLAIM_BITS) & CLAIM_MASK, word & CLAIM_MASK);
            if word >> (2 * CLAIM_BITS) != epoch || next >= chunks {
                break;
            }
            if let Err(now) = job
                .claim
                .compare_exchange_weak(word, word + 1, AcqRel, Acquire)
            {
                word = now;
                continue;
            }
            word += 1;
            let low = start + next as usize * chunk;
            let high = (low + chunk).min(end);
            if task == Task::Count as u8 {
                self.count(thread, low, high);
            } else if task == Task::Sum as u8 {
                self.sum(low, high);
            } else if task == Task::Sort as u8 {
                if sorted.is_empty() {
                    sorted = self.row(thread).iter().map(take).collect();
                }
                edges += self.sort(&mut sorted, low, high);
            } else if task == Task::Place as u8 {
                for stripe in low..high {
                    self.place_stripe(stripe, &mut placed);
                }
            } else {
                edges += self.value_down(low, high);
            }
            done += 1;
        }
        if !sorted.is_empty() {
            for (cell, successors) in self.row(thread).iter().zip(sorted) {
                *lock(cell) = successors;
            }
        }
        if !placed.is_empty() {
            let at = self.tail.fetch_add(placed.len(), Relaxed);
            for (slot, &w) in self.order[at..at + placed.len()].iter().zip(&placed) {
                slot.store(w, Relaxed);
            }
        }
        if done > 0 {
            self.work.fetch_add(edges, Relaxed);
            job.finished.fetch_add(done, Release);
        }
    }

    /// `thread`'s buckets of sorted successors, one per stripe.
    fn row(&self, thread: usize) -> &[Mutex<Vec<u32>>] {
        &self.sorted[thread * self.stripes..(thread + 1) * self.stripes]
    }

    /// Counts the targets of the edges `low..high` into `thread`'s counts.
    fn count(&self, thread: usize, low: usize, high: usize) {
        let counts = match thread {
            0 => &self.in_degree,
            _ => &self.counts[thread - 1],
        };
        let mut fits = true;
        for &w in &self.targets[low..high] {
            let count = &counts[w as usize];
            let next = count.load(Relaxed).wrapping_add(1);
            count.store(next, Relaxed);
            // Branch-free: an overflow is rare and only known at the end.
            fits &= next != 0;
        }
        if !fits {
            self.overflow.store(true, Relaxed);
        }
    }

    /// Adds the other threads' counts of the vertices `low..high` into `in_degree`.
    fn sum(&self, low: usize, high: usize) {
        let mut fits = true;
        for v in low..high {
            let mut total = u32::from(self.in_degree[v].load(Relaxed));
            for counts in &self.counts {
                total += u32::from(counts[v].load(Relaxed));
            }
            fits &= total <= u32::from(u8::MAX);
            self.in_degree[v].store(total as u8, Relaxed);
        }
        if !fits {
            self.overflow.store(true, Relaxed);
        }
    }

    /// The stripe of `w`.
    #[inline(always)]
    fn stripe(&self, w: u32) -> usize {
        ((u64::from(w) * self.stripe_scale) >> 32) as usize
    }

    /// Sorts the successors of the vertices at positions `low..high` by stripe into
    /// `sorted`. Returns the edges visited.
    fn sort(&self, sorted: &mut [Vec<u32>], low: usize, high: usize) -> u64 {
        const OFFSETS_AHEAD: usize = 16;
        const TARGETS_AHEAD: usize = 8;
        let mut edges = 0;
        for position in low..high {
            if position + OFFSETS_AHEAD < high {
                let ahead = self.order[position + OFFSETS_AHEAD].load(Relaxed);
                prefetch(self.offsets, ahead as usize);
            }
            if position + TARGETS_AHEAD < high {
                let ahead = self.order[position + TARGETS_AHEAD].load(Relaxed);
                prefetch(self.targets, self.offsets[ahead as usize] as usize);
            }
            let successors = self.successors(self.order[position].load(Relaxed));
            for &w in successors {
                sorted[self.stripe(w)].push(w);
            }
            edges += successors.len() as u64;
        }
        edges
    }

    /// Decrements the in-degrees of the sorted successors in `stripe`, adding those that
    /// reach zero to `placed`.
    fn place_stripe(&self, stripe: usize, placed: &mut Vec<u32>) {
        for thread in 0..self.threads {
            let mut successors = lock(&self.sorted[thread * self.stripes + stripe]);
            for &w in successors.iter() {
                let remaining = &self.in_degree[w as usize];
                let left = remaining.load(Relaxed) - 1;
                remaining.store(left, Relaxed);
                if left == 0 {
                    prefetch(self.offsets, w as usize);
                    placed.push(w);
                }
            }
            successors.clear();
        }
    }

    /// Places the successors of the vertex at `position` whose last predecessor it is, at
    /// `tail` onwards; alone (plain loads and stores). Returns its out-degree.
    #[inline(always)]
    fn place_alone(&self, position: usize, tail: &mut usize) -> u64 {
        let vertex = self.order[position].load(Relaxed);
        let successors = self.successors(vertex);
        for &w in successors {
            let remaining = &self.in_degree[w as usize];
            let left = remaining.load(Relaxed) - 1;
            remaining.store(left, Relaxed);
            if left == 0 {
                prefetch(self.targets, self.offsets[w as usize] as usize);
                self.order[*tail].store(w, Relaxed);
                *tail += 1;
            }
        }
        successors.len() as u64
    }

    /// Values and remotenesses of the vertices at positions `high - 1` down to `low` (each
    /// vertex after its successors, which are placed later). Returns the edges visited.
    fn value_down(&self, low: usize, high: usize) -> u64 {
        const OFFSETS_AHEAD: usize = 16;
        const TARGETS_AHEAD: usize = 8;
        let mut edges = 0;
        for position in (low..high).rev() {
            if position >= low + OFFSETS_AHEAD {
                let ahead = self.order[position - OFFSETS_AHEAD].load(Relaxed);
                prefetch(self.offsets, ahead as usize);
            }
            if position >= low + TARGETS_AHEAD {
                let ahead = self.order[position - TARGETS_AHEAD].load(Relaxed);
                prefetch(self.targets, self.offsets[ahead as usize] as usize);
            }
            let vertex = self.order[position].load(Relaxed);
            let successors = self.successors(vertex);
            let mut fold = FollowerFold::default();
            let mex = if successors.len() < 64 {
                // Every value that matters is below 64 (g <= outdeg); larger ones are masked.
                let mut seen = 0u64;
                for &w in successors {
                    let cell = self.cells[w as usize].load(Relaxed);
                    let value = u64::from(cell & 0xFF);
                    seen |= (1u64 << (value & 63)) & u64::from(value < 64).wrapping_neg();
                    fold.add(cell >> 8);
                }
                (!seen).trailing_zeros()
            } else {
                // Out-degrees are below 256 here: the stamps of the sequential pass become a
                // 256-bit mask.
                let mut seen = [0u64; 4];
                for &w in successors {
                    let cell = self.cells[w as usize].load(Relaxed);
                    let value = cell & 0xFF;
                    seen[(value >> 6) as usize] |= 1u64 << (value & 63);
                    fold.add(cell >> 8);
                }
                mex_of(&seen)
            };
            let cell = fold.remoteness(!successors.is_empty()) << 8 | mex;
            self.cells[vertex as usize].store(cell, Relaxed);
            edges += successors.len() as u64;
        }
        edges
    }
}

/// Empties `cell`, returning what it held.
fn take(cell: &Mutex<Vec<u32>>) -> Vec<u32> {
    std::mem::take(&mut *lock(cell))
}

/// Locks `cell`; a panic of the thread that held it is passed on by the scope anyway.
fn lock(cell: &Mutex<Vec<u32>>) -> MutexGuard<'_, Vec<u32>> {
    cell.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The least value missing from a 256-bit set.
#[inline(always)]
fn mex_of(seen: &[u64; 4]) -> u32 {
    let mut base = 0;
    for &word in seen {
        if word != u64::MAX {
            return base + (!word).trailing_zeros();
        }
        base += 64;
    }
    base
}

/// The helper threads of one table, `threads - 1` of them; the calling thread is thread 0.
/// Dropping it sends them home.
struct Crew<'s, 'g> {
    shared: &'s Shared<'g>,
    helpers: Vec<Thread>,
    /// The number of the last step published.
    epoch: Cell<u64>,
}

impl<'s, 'g> Crew<'s, 'g> {
    fn start<'scope>(scope: &'scope thread::Scope<'scope, '_>, shared: &'s Shared<'g>) -> Self
    where
        's: 'scope,
    {
        let helpers = (1..shared.threads)
            .map(|thread| scope.spawn(move || helper(shared, thread)).thread().clone())
            .collect();
        Self {
            shared,
            helpers,
            epoch: Cell::new(0),
        }
    }

    /// Publishes step `epoch + 1` of `chunks` chunks and wakes the helpers; returns its epoch.
    fn publish(&self, chunks: u64) -> u64 {
        let epoch = (self.epoch.get() + 1) & EPOCH_MASK;
        self.epoch.set(epoch);
        let word = epoch << (2 * CLAIM_BITS) | chunks << CLAIM_BITS;
        self.shared.job.claim.store(word, Release);
        for helper in &self.helpers {
            helper.unpark();
        }
        epoch
    }

    /// Runs one step on every thread, this one included: `start..end` cut into chunks of
    /// `chunk`; returns when every chunk is done.
    fn run(&self, task: Task, start: usize, end: usize, chunk: usize) {
        let job = &self.shared.job;
        let chunks = (end - start).div_ceil(chunk) as u64;
        assert!(chunks <= CLAIM_MASK, "{chunks} chunks in one step");
        job.task.store(task as u8, Relaxed);
        job.start.store(start, Relaxed);
        job.end.store(end, Relaxed);
        job.chunk.store(chunk, Relaxed);
        job.finished.store(0, Relaxed);
        let epoch = self.publish(chunks);
        self.shared.work_on(0, epoch);
        let mut spins = 0;
        while (job.finished.load(Acquire) as u64) < chunks {
            assert!(!job.broken.load(Relaxed), "a thread of the table panicked");
            if spins < SPINS {
                std::hint::spin_loop();
                spins += 1;
            } else {
                thread::yield_now();
            }
        }
    }
}

impl Drop for Crew<'_, '_> {
    fn drop(&mut self) {
        self.shared.job.stop.store(true, Release);
        self.publish(0);
    }
}

/// Marks the job broken if a helper unwinds, so that the calling thread stops waiting (the
/// scope then passes the panic on).
struct Unwinding<'a>(&'a AtomicBool);

impl Drop for Unwinding<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            self.0.store(true, Relaxed);
        }
    }
}

/// A helper thread: waits for each step (spinning, then parked), claims chunks of it.
fn helper(shared: &Shared<'_>, thread: usize) {
    let job = &shared.job;
    let _unwinding = Unwinding(&job.broken);
    let mut seen = 0;
    loop {
        let mut spins = 0;
        loop {
            let epoch = job.claim.load(Acquire) >> (2 * CLAIM_BITS);
            if epoch != seen {
                seen = epoch;
                break;
            }
            if spins < SPINS {
                std::hint::spin_loop();
                spins += 1;
            } else {
                thread::park();
            }
        }
        if job.stop.load(Acquire) {
            return;
        }
        shared.work_on(thread, seen);
    }
}
