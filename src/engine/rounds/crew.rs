//! The helper threads of one table: started once, woken for each wide round's steps, parked
//! between them, stopped (and a panic reported) when the table is done.

use super::cell;
use super::job::{Job, Task};
use super::steps::Shared;
use std::cell::Cell;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::thread::{self, Thread};

/// How many times a waiting thread spins (a `pause` each) before it parks or yields.
const SPINS: u32 = 1 << 10;

/// The helper threads of one table, `threads - 1` of them; the calling thread is thread 0.
/// Dropping it sends them home.
pub(super) struct Crew<'s, 'g, C> {
    shared: &'s Shared<'g, C>,
    helpers: Vec<Thread>,
    /// The number of the last step published.
    epoch: Cell<u64>,
}

impl<'s, 'g, C> Crew<'s, 'g, C> {
    pub(super) fn start<'scope>(
        scope: &'scope thread::Scope<'scope, '_>,
        shared: &'s Shared<'g, C>,
    ) -> Self
    where
        's: 'scope,
        C: cell::Cell,
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
        let epoch = Job::next_epoch(self.epoch.get());
        self.epoch.set(epoch);
        self.shared.job.publish(epoch, chunks);
        for helper in &self.helpers {
            helper.unpark();
        }
        epoch
    }

    /// Runs one step on every thread, this one included: `start..end` cut into chunks of
    /// `chunk`; returns when every chunk is done.
    pub(super) fn run(&self, task: Task, start: usize, end: usize, chunk: usize)
    where
        C: cell::Cell,
    {
        let job = &self.shared.job;
        let chunks = (end - start).div_ceil(chunk) as u64;
        assert!(chunks <= Job::MAX_CHUNKS, "{chunks} chunks in one step");
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

impl<C> Drop for Crew<'_, '_, C> {
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
fn helper<C: cell::Cell>(shared: &Shared<'_, C>, thread: usize) {
    let job = &shared.job;
    let _unwinding = Unwinding(&job.broken);
    let mut seen = 0;
    loop {
        let mut spins = 0;
        loop {
            let epoch = job.epoch(thread);
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
