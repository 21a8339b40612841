//! The steps of a wide round that the threads share: the shared arrays, and the work of each
//! step on one chunk.

use std::sync::atomic::Ordering::{Relaxed, Release};
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, AtomicUsize};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use super::cell::Cell;
use super::job::{Job, Task};

use crate::engine::interrupt::{Cancelled, Poller};
use crate::engine::order::place_successors;
use crate::engine::prefetch::{prefetch, prefetch_list};
use crate::engine::remoteness::FollowerFold;

/// The arrays every thread reads and writes, the table in cells of type `C`.
pub(super) struct Shared<'g, C> {
    pub(super) offsets: &'g [u32],
    pub(super) targets: &'g [u32],
    /// Predecessors not yet placed; once every vertex is, the log of a table of bytes (when
    /// a round is wide).
    pub(super) in_degree: Vec<AtomicU8>,
    /// The in-degrees counted by threads 1, 2, ... over their chunks of the edges (thread 0
    /// counts in `in_degree`), modulo 256; once summed, their tables of bytes.
    pub(super) counts: Vec<Vec<AtomicU8>>,
    /// The sum of the summed in-degrees, each kept modulo 256: the edge count exactly when
    /// every in-degree is below 256 (a count that wrapped, in one thread or in the sum, lost
    /// a multiple of 256), so neither `count` nor `sum` checks as it goes. Otherwise the
    /// table is made sequentially.
    pub(super) counted: AtomicU64,
    /// Vertices in Kahn order (sources first), filled round by round.
    pub(super) order: Vec<AtomicU32>,
    /// The table, one cell per vertex: the calling thread's, and the result.
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
    /// Set before the values when a round is wide: the values are then logged and copied,
    /// and for cells wider than a byte it holds the log and the helpers' tables.
    pub(super) spare: OnceLock<Spare<C>>,
    /// The position from which on each thread's table holds the cells it valued or copied
    /// in: `n` at first; each entry is read and written by its own thread only.
    pub(super) imported: Vec<AtomicUsize>,
}

/// The arrays that the values on several threads need, for cells wider than a byte (a byte's
/// are arrays of the count that have served their purpose, and these are empty).
pub(super) struct Spare<C> {
    /// The cells in Kahn order (otherwise in `in_degree`).
    log: Vec<C>,
    /// The helpers' copies of the table (otherwise in `counts`).
    tables: Vec<Vec<C>>,
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
        if job.epoch(thread) != epoch {
            return;
        }
        // Read before a chunk is claimed, the parameters may be those of the next step; a
        // thread uses them only once it has claimed a chunk of this one.
        let (task, start, end, chunk) = job.parameters();
        let mut sorted: Vec<Vec<u32>> = Vec::new();
        let mut placed: Vec<u32> = Vec::new();
        let mut done = 0;
        let mut edges = 0;
        while let Some(next) = job.claim(thread, epoch) {
            let low = start + next * chunk;
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
                if done == 0 {
                    // The first claim shows that `end` is this step's, and makes every value
                    // logged before the step visible: the later rounds', the successors', go
                    // into this thread's table.
                    self.catch_up(thread, end);
                }
                debug_assert_eq!(self.imported[thread].load(Relaxed), end);
                debug_assert!(
                    self.spare.get().is_some(),
                    "copies made before a wide round"
                );
                edges += self.value_down(thread, low, high);
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

    /// `thread`'s table: `cells` for the calling thread, a copy for a helper (which values
    /// only once [`Shared::prepare_copies`] has made them).
    fn table(&self, thread: usize) -> &[C] {
        if thread == 0 {
            return &self.cells;
        }
        C::in_bytes(&self.counts[thread - 1]).unwrap_or_else(|| {
            let spare = self
                .spare
                .get()
                .expect("copies made before a wide round's values");
            &spare.tables[thread - 1]
        })
    }

    /// Makes what the values on several threads need: called by the calling thread before
    /// the values, when a round is wide. Without it the values are neither logged nor copied
    /// (every round is valued on the calling thread, in its own table).
    pub(super) fn prepare_copies(&self) {
        let n = self.cells.len();
        let table = || (0..n).map(|_| C::new()).collect();
        self.spare
            .get_or_init(|| match C::in_bytes(&self.in_degree) {
                Some(_) => Spare {
                    log: Vec::new(),
                    tables: Vec::new(),
                },
                None => Spare {
                    log: table(),
                    tables: (1..self.threads).map(|_| table()).collect(),
                },
            });
    }

    /// The cells in Kahn order, one per position of `order`, as the vertices are valued;
    /// `None` when no round is wide (nothing to copy).
    fn log(&self) -> Option<&[C]> {
        let spare = self.spare.get()?;
        Some(C::in_bytes(&self.in_degree).unwrap_or(&spare.log))
    }

    /// Copies the cells of the vertices at positions `low..high` from the log into
    /// `thread`'s table (nothing before the copies are made).
    fn copy_in(&self, thread: usize, low: usize, high: usize) {
        let Some(log) = self.log() else { return };
        let table = self.table(thread);
        for (slot, cell) in self.order[low..high].iter().zip(&log[low..high]) {
            table[slot.load(Relaxed) as usize].copy(cell);
        }
    }

    /// Brings `thread`'s table up to date for values at the positions below `high`: copies in
    /// the cells of `high` and onwards that it does not hold yet.
    pub(super) fn catch_up(&self, thread: usize, high: usize) {
        let imported = &self.imported[thread];
        let from = imported.load(Relaxed);
        if high < from {
            self.copy_in(thread, high, from);
            imported.store(high, Relaxed);
        }
    }

    /// Values the vertices at positions `high - 1` down to `low` on the calling thread alone
    /// (a run of narrow rounds), its table first brought up to date for them, polling
    /// `poller` every 2^14 vertices.
    pub(super) fn value_alone(
        &self,
        low: usize,
        high: usize,
        poller: &mut Poller<'_>,
    ) -> Result<(), Cancelled> {
        self.catch_up(0, high);
        let mut top = high;
        while top > low {
            let bottom = top.saturating_sub(1 << 14).max(low);
            poller.tick(self.value_down(0, bottom, top) + (top - bottom) as u64)?;
            top = bottom;
        }
        // Its table holds the cells from `low` on: those it just wrote.
        self.imported[0].store(low, Relaxed);
        Ok(())
    }

    /// Values (and remotenesses, if the cells keep them) of the vertices at positions
    /// `high - 1` down to `low` (each vertex after its successors, which are placed later),
    /// read from and written to `thread`'s table, and written in Kahn order to the log if
    /// there is one ([`Shared::prepare_copies`] has run). Returns the edges visited.
    pub(super) fn value_down(&self, thread: usize, low: usize, high: usize) -> u64 {
        const OFFSETS_AHEAD: usize = 16;
        const TARGETS_AHEAD: usize = 8;
        let (table, log) = (self.table(thread), self.log());
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
                    let cell = table[w as usize].read();
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
                    let cell = table[w as usize].read();
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
            table[vertex as usize].write(remoteness, mex);
            if let Some(log) = log {
                log[position].write(remoteness, mex);
            }
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
