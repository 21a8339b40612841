//! The step the threads work on, as the calling thread publishes it, and how a thread claims
//! its chunks: from its own share of them first, then from the others' shares.
//!
//! A step's chunks are cut into one contiguous share per thread. A thread that claims from
//! its own share first gets the same part of the data at each step of a kind: in the placing
//! step, the same stripes of in-degrees, which then stay in its own cache instead of moving
//! between the cores' caches from one wide round to the next. A thread that has emptied its
//! share takes chunks from the others', so a thread the machine does not run for a while
//! still holds up one chunk only.

use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize};

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

/// Bits of the share's end and of its next chunk in a claim word.
const CLAIM_BITS: u32 = 20;
const CLAIM_MASK: u64 = (1 << CLAIM_BITS) - 1;
/// The epoch's bits: it wraps after 2^24 steps (a helper only needs to see it change).
const EPOCH_MASK: u64 = (1 << (64 - 2 * CLAIM_BITS)) - 1;

/// The step the threads work on, published by the calling thread.
#[derive(Debug)]
pub(super) struct Job {
    pub(super) task: AtomicU8,
    pub(super) start: AtomicUsize,
    pub(super) end: AtomicUsize,
    pub(super) chunk: AtomicUsize,
    /// One claim word per thread: `epoch << 40 | end << 20 | next`, the step's number, the
    /// end of the thread's share of the chunks and the next chunk of it to claim. A thread
    /// claims a chunk by raising `next` (compare and swap) while the epoch is the one it saw
    /// before it read the parameters. Those cannot change before every chunk of the step is
    /// claimed and done, so once a thread has claimed a chunk, the parameters it read are
    /// the step's; before that, they may be the next step's.
    shares: Vec<AtomicU64>,
    /// Chunks of the current step done.
    pub(super) finished: AtomicUsize,
    /// Set when the helpers should return.
    pub(super) stop: AtomicBool,
    /// Set when a helper panicked.
    pub(super) broken: AtomicBool,
}

impl Job {
    /// A job for `threads` threads, none published.
    pub(super) fn new(threads: usize) -> Self {
        Self {
            task: AtomicU8::new(0),
            start: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
            chunk: AtomicUsize::new(0),
            shares: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            finished: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            broken: AtomicBool::new(false),
        }
    }

    /// The most chunks one step can have.
    pub(super) const MAX_CHUNKS: u64 = CLAIM_MASK;

    /// The epoch after `epoch`.
    pub(super) fn next_epoch(epoch: u64) -> u64 {
        (epoch + 1) & EPOCH_MASK
    }

    /// Publishes step `epoch` of `chunks` chunks (its parameters stored before), cut into one
    /// share per thread (the larger shares first: a step of one chunk is the calling
    /// thread's, which is awake).
    pub(super) fn publish(&self, epoch: u64, chunks: u64) {
        let threads = self.shares.len() as u64;
        for (thread, share) in (0..threads).zip(&self.shares) {
            let first = (chunks * thread).div_ceil(threads);
            let end = (chunks * (thread + 1)).div_ceil(threads);
            share.store(
                epoch << (2 * CLAIM_BITS) | end << CLAIM_BITS | first,
                Release,
            );
        }
    }

    /// The epoch last published to `thread`.
    pub(super) fn epoch(&self, thread: usize) -> u64 {
        self.shares[thread].load(Acquire) >> (2 * CLAIM_BITS)
    }

    /// Claims a chunk of step `epoch` for `thread`: from its own share while any is left, then
    /// from the next threads' shares. `None` once every chunk is claimed, or the step is over.
    pub(super) fn claim(&self, thread: usize, epoch: u64) -> Option<usize> {
        let threads = self.shares.len();
        for share in (thread..threads).chain(0..thread).map(|t| &self.shares[t]) {
            let mut word = share.load(Acquire);
            loop {
                let (end, next) = ((word >> CLAIM_BITS) & CLAIM_MASK, word & CLAIM_MASK);
                if word >> (2 * CLAIM_BITS) != epoch || next >= end {
                    break;
                }
                match share.compare_exchange_weak(word, word + 1, AcqRel, Acquire) {
                    Ok(_) => return Some(next as usize),
                    Err(now) => word = now,
                }
            }
        }
        None
    }

    /// The parameters of the step published last: task, start, end and chunk length (the
    /// step's once a chunk of it is claimed: see the claim words).
    pub(super) fn parameters(&self) -> (u8, usize, usize, usize) {
        (
            self.task.load(Relaxed),
            self.start.load(Relaxed),
            self.end.load(Relaxed),
            self.chunk.load(Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every chunk of a step is claimed once, each thread's own share first.
    #[test]
    fn a_thread_claims_its_own_share_first_then_the_others() {
        let job = Job::new(3);
        job.publish(1, 10);
        // Shares: 0..4, 4..7, 7..10.
        let first: Vec<usize> = (0..4).filter_map(|_| job.claim(1, 1)).collect();
        assert_eq!(first, [4, 5, 6, 7]);
        let rest: Vec<usize> = std::iter::from_fn(|| job.claim(0, 1)).collect();
        assert_eq!(rest, [0, 1, 2, 3, 8, 9]);
        assert_eq!(job.claim(2, 1), None);
    }

    /// A thread holding an older epoch claims nothing of a newer step.
    #[test]
    fn a_claim_for_a_finished_step_gets_nothing() {
        let job = Job::new(2);
        job.publish(1, 4);
        job.publish(Job::next_epoch(1), 4);
        assert_eq!(job.claim(0, 1), None);
        assert_eq!(job.epoch(1), 2);
        assert_eq!(job.claim(1, 2), Some(2));
    }

    /// A step of fewer chunks than threads leaves some shares empty; all are claimed.
    #[test]
    fn a_step_with_fewer_chunks_than_threads_is_claimed_whole() {
        let job = Job::new(4);
        job.publish(7, 2);
        assert_eq!(job.claim(0, 7), Some(0));
        let claimed: Vec<usize> = std::iter::from_fn(|| job.claim(3, 7)).collect();
        assert_eq!(claimed, [1]);
        job.publish(8, 1);
        assert_eq!(job.claim(0, 8), Some(0));
    }

    /// Threads claiming at once claim every chunk exactly once.
    #[test]
    fn threads_claiming_at_once_claim_every_chunk_once() {
        let job = Job::new(4);
        for epoch in 1..=50 {
            job.publish(epoch, 1000);
            let claims: Vec<Vec<usize>> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..4)
                    .map(|thread| {
                        let job = &job;
                        scope.spawn(move || {
                            std::iter::from_fn(|| job.claim(thread, epoch)).collect()
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a claiming thread"))
                    .collect()
            });
            let mut all: Vec<usize> = claims.into_iter().flatten().collect();
            all.sort_unstable();
            assert_eq!(all, (0..1000).collect::<Vec<_>>(), "epoch {epoch}");
        }
    }
}
