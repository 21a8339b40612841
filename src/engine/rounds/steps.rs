//! The steps of a wide round that the threads share: the published job, the shared arrays,
//! and the work of each step on one chunk.

use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::engine::order::place_successors;
use crate::engine::prefetch::{prefetch, prefetch_list};
use crate::engine::remoteness::FollowerFold;

/// What the threads of a wide round do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Task {
    /// Count the in-degrees of a chunk of the targets (positions are edges here).
    Count = 0,
    /// Sum the threads' counts of a chunk of the vertices.
    Sum = 1,
    /// Sort the successors of a chunk of the round by stripe.
    Sort = 2,
    /// Decrement the in-degrees of the sorted successors of a stripe; place those at zero
    /// (positions are stripes here).
    Place = 3,
    /// Compute the values (and remotenesses) of a chunk of the round.
    Value = 4,
}

/// The step the threads work on, published by the calling thread.
#[derive(Debug, Default)]
pub(super) struct Job {
    pub(super) task: AtomicU8,
    pub(super) start: AtomicUsize,
    pub(super) end: AtomicUsize,
    pub(super) chunk: AtomicUsize,
    /// `epoch << 40 | chunks << 20 | next`: the step's number, how many chunks it has, and
    /// the next chunk to claim. A thread claims a chunk by raising `next` (compare and swap)
    /// while the epoch is the one whose parameters it read: those cannot change before every
    /// chunk of the step is claimed and done.
    pub(super) claim: AtomicU64,
    /// Chunks of the current step done.
    pub(super) finished: AtomicUsize,
    /// Set when the helpers should return.
    pub(super) stop: AtomicBool,
    /// Set when a helper panicked.
    pub(super) broken: AtomicBool,
}

/// Bits of the chunk count and of the next chunk in [`Job::claim`].
pub(super) const CLAIM_BITS: u32 = 20;
pub(super) const CLAIM_MASK: u64 = (1 << CLAIM_BITS) - 1;
/// The epoch's bits: it wraps after 2^24 steps (a helper only needs to see it change).
pub(super) const EPOCH_MASK: u64 = (1 << (64 - 2 * CLAIM_BITS)) - 1;

/// A vertex's cell in the table the threads fill: `remoteness << 8 | value` in an `AtomicU32`
/// when the remotenesses are wanted, the value alone in an `AtomicU8` when they are not.
pub(super) trait Cell: Sync + Sized {
    /// Whether the cell keeps the remoteness.
    const REMOTENESS: bool;
    /// A fresh cell.
    fn new() -> Self;
    /// `remoteness << 8 | value` (the remoteness 0 when it is not kept).
    fn read(&self) -> u32;
    /// Stores `value` (below 256) and, if kept, `remoteness`.
    fn write(&self, remoteness: u32, value: u32);
}

impl Cell for AtomicU32 {
    const REMOTENESS: bool = true;

    fn new() -> Self {
        AtomicU32::new(0)
    }

    #[inline(always)]
    fn read(&self) -> u32 {
        self.load(Relaxed)
    }

    #[inline(always)]
    fn write(&self, remoteness: u32, value: u32) {
        self.store(remoteness << 8 | value, Relaxed);
    }
}

impl Cell for AtomicU8 {
    const REMOTENESS: bool = false;

    fn new() -> Self {
        AtomicU8::new(0)
    }

    #[inline(always)]
    fn read(&self) -> u32 {
        u32::from(self.load(Relaxed))
    }

    #[inline(always)]
    fn write(&self, _: u32, value: u32) {
        // g <= outdeg < 256.
        self.store(value as u8, Relaxed);
    }
}

/// The arrays every thread reads and writes, the table in cells of type `C`.
pub(super) struct Shared<'g, C> {
    pub(super) offsets: &'g [u32],
    pub(super) targets: &'g [u32],
    /// Predecessors not yet placed.
    pub(super) in_degree: Vec<AtomicU8>,
    /// The in-degrees counted by threads 1, 2, ... over their chunks of the edges (thread 0
    /// counts in `in_degree`), modulo 256.
    pub(super) counts: Vec<Vec<AtomicU8>>,
    /// The sum of the summed in-degrees, each kept modulo 256: the edge count exactly when
    /// every in-degree is below 256 (a count that wrapped, in one thread or in the sum, lost
    /// a multiple of 256), so neither `count` nor `sum` checks as it goes. Otherwise the
    /// table is made sequentially.
    pub(super) counted: AtomicU64,
    /// Vertices in Kahn order (sources first), filled round by round.
    pub(super) order: Vec<AtomicU32>,
    /// The table, one cell per vertex.
    pub(super) cells: Vec<C>,
    /// The end of the placed part of `order` during a wide round.
    pub(super) tail: AtomicUsize,
    /// Edges visited by the threads in the last wide round (for the interrupt's poller).
    pub(super) work: AtomicU64,
    pub(super) job: Job,
    /// The number of threads, the calling one included.
    pub(super) threads: usize,
    /// Vertex `w` is in stripe `(w * stripe_scale) >> 32`, with `stripe_scale =
    /// floor(2^32 * stripes / n)`: below `stripes` for every `w < n`, in ranges of about
    /// `n / stripes` vertices.
    pub(super) stripes: usize,
    pub(super) stripe_scale: u64,
    /// Successors of the round sorted by stripe: thread `t` fills
    /// `sorted[t * stripes + stripe]`, the thread that claims the stripe empties it.
    pub(super) sorted: Vec<Mutex<Vec<u32>>>,
}

impl<C: Cell> Shared<'_, C> {
    #[inline(always)]
    fn successors(&self, vertex: u32) -> &[u32] {
        let v = vertex as usize;
        &self.targets[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// Claims and runs chunks of step `epoch` as `thread` until none is left.
    pub(super) fn work_on(&self, thread: usize, epoch: u64) {
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
        for &w in &self.targets[low..high] {
            let count = &counts[w as usize];
            count.store(count.load(Relaxed).wrapping_add(1), Relaxed);
        }
    }

    /// Adds the other threads' counts of the vertices `low..high` into `in_degree`.
    fn sum(&self, low: usize, high: usize) {
        let mut counted = 0u64;
        for v in low..high {
            let mut total = self.in_degree[v].load(Relaxed);
            for counts in &self.counts {
                total = total.wrapping_add(counts[v].load(Relaxed));
            }
            counted += u64::from(total);
            self.in_degree[v].store(total, Relaxed);
        }
        self.counted.fetch_add(counted, Relaxed);
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
                prefetch_list(self.offsets, self.targets, ahead as usize);
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
    /// `tail` onwards; alone (plain loads and stores), with the sequential order's prefetches
    /// for a short queue ([`place_successors`]): a narrow round's loop has no second prefetch
    /// of the lists ahead, so the list of a vertex left with one predecessor is prefetched
    /// whatever the length of the round. Returns its out-degree.
    #[inline(always)]
    pub(super) fn place_alone(&self, position: usize, tail: &mut usize) -> u64 {
        let vertex = self.order[position].load(Relaxed);
        let successors = self.successors(vertex);
        place_successors(
            (self.offsets, self.targets),
            successors,
            true,
            |w| {
                let remaining = &self.in_degree[w as usize];
                let left = remaining.load(Relaxed) - 1;
                remaining.store(left, Relaxed);
                u32::from(left)
            },
            |w| {
                self.order[*tail].store(w, Relaxed);
                *tail += 1;
            },
        );
        successors.len() as u64
    }

    /// Values (and remotenesses, if the cells keep them) of the vertices at positions
    /// `high - 1` down to `low` (each vertex after its successors, which are placed later).
    /// Returns the edges visited.
    pub(super) fn value_down(&self, low: usize, high: usize) -> u64 {
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
                prefetch_list(self.offsets, self.targets, ahead as usize);
            }
            let vertex = self.order[position].load(Relaxed);
            let successors = self.successors(vertex);
            let mut fold = FollowerFold::default();
            let mex = if successors.len() < 64 {
                // Every value that matters is below 64 (g <= outdeg); larger ones are masked.
                let mut seen = 0u64;
                for &w in successors {
                    let cell = self.cells[w as usize].read();
                    let value = u64::from(cell & 0xFF);
                    seen |= (1u64 << (value & 63)) & u64::from(value < 64).wrapping_neg();
                    if C::REMOTENESS {
                        fold.add(cell >> 8);
                    }
                }
                (!seen).trailing_zeros()
            } else {
                // Out-degrees are below 256 here: the stamps of the sequential pass become a
                // 256-bit mask.
                let mut seen = [0u64; 4];
                for &w in successors {
                    let cell = self.cells[w as usize].read();
                    let value = cell & 0xFF;
                    seen[(value >> 6) as usize] |= 1u64 << (value & 63);
                    if C::REMOTENESS {
                        fold.add(cell >> 8);
                    }
                }
                mex_of(&seen)
            };
            let remoteness = if C::REMOTENESS {
                fold.remoteness(!successors.is_empty())
            } else {
                0
            };
            self.cells[vertex as usize].write(remoteness, mex);
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
