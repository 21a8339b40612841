//! How a job's early verdicts ([`super::early`]) reach its stream: a channel, and beside it a
//! slot for the verdicts that wait for the job's next search. Answers of quick searches wait
//! there to share a message with the answers after them. If the job's next boundary is slow
//! in coming (a search that takes seconds), the stream takes them once they have waited
//! [`EARLY_AFTER`], looking every [`LOOK_EVERY`] while the job runs: an answer found in
//! microseconds does not wait for the search after it.
//!
//! Order: the job takes what waits out of the slot (under its lock) before it sends anything
//! newer, and sends it first; the stream, holding the lock, drains the channel before it takes
//! what waits. Whatever the job sent before it left verdicts waiting is in the channel by
//! then, so the messages keep the job's order whichever side sends them. The lock is held
//! only to move verdicts in and out, never to encode or send them.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::split::{append_packed, fit_response};
use crate::proto::{EvaluateResponse, PackedVerdicts, Verdict};

/// The most answered verdicts wait before they go: the job sends them before its next query
/// once they have waited this long since the batch began or verdicts last went
/// ([`super::early`]), and the stream takes those waiting in the slot for a search once they
/// have waited this long. Short enough to read as "at once" at a terminal; long enough that
/// quick queries still share messages.
pub(super) const EARLY_AFTER: Duration = Duration::from_millis(20);

/// How often the stream looks at the slot while a job runs.
pub(crate) const LOOK_EVERY: Duration = Duration::from_millis(10);

/// Verdicts waiting for the job's next search: one message, since the first of them came.
struct Waiting {
    response: EvaluateResponse,
    since: Instant,
}

type Slot = Arc<Mutex<Option<Waiting>>>;

/// Responses the job may have sent that the stream has not taken: past them, the job waits
/// for the stream, which waits for the client's reading. So a client that does not read
/// makes the job wait with at most this many messages (each within the message limit) here,
/// besides the stream's own response buffer, instead of holding every answer it finds.
pub(crate) const HANDED_OVER: usize = 2;

/// The two ends of a job's hand-off; responses are cut to `max_bytes` before they go.
pub(crate) fn handoff(max_bytes: usize) -> (JobSide, StreamSide) {
    let (tx, rx) = mpsc::channel(HANDED_OVER);
    let slot = Slot::default();
    (
        JobSide {
            tx,
            slot: slot.clone(),
            max_bytes,
        },
        StreamSide {
            rx,
            slot,
            max_bytes,
        },
    )
}

fn lock(slot: &Slot) -> MutexGuard<'_, Option<Waiting>> {
    // Nothing panics while holding the lock; if something did, the slot still holds whole
    // messages.
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The job's end: it sends responses, and leaves verdicts waiting.
pub(crate) struct JobSide {
    tx: mpsc::Sender<EvaluateResponse>,
    slot: Slot,
    max_bytes: usize,
}

impl JobSide {
    /// Sends a batch's last response, after (or with) the verdicts waiting.
    pub(crate) fn send(&self, mut response: EvaluateResponse) {
        debug_assert!(
            response.graph.is_none(),
            "a batch's response has no summary"
        );
        let Some(mut message) = self.take_waiting(&response.verdicts) else {
            self.send_fitted(response);
            return;
        };
        append_pending(
            &mut message,
            &mut response.verdicts,
            response.packed_verdicts.as_mut(),
        );
        // A batch of no packed queries still answers with its empty packed verdicts.
        if message.packed_verdicts.is_none() {
            message.packed_verdicts = response.packed_verdicts;
        }
        self.send_fitted(message);
    }

    /// Sends the verdicts waiting and those pending (`verdicts`, then `packed`; taken from
    /// the buffers, whose packed ids carry on), in one message when they can share one.
    pub(crate) fn send_pending(
        &self,
        verdicts: &mut Vec<Verdict>,
        packed: Option<&mut PackedVerdicts>,
    ) {
        let mut message = self.take_waiting(verdicts).unwrap_or_default();
        append_pending(&mut message, verdicts, packed);
        self.send_fitted(message);
    }

    /// The message waiting in the slot, taken out for full `verdicts` to follow in it; sent
    /// on its own first when they cannot (see [`can_follow`]).
    fn take_waiting(&self, verdicts: &[Verdict]) -> Option<EvaluateResponse> {
        let waiting = lock(&self.slot).take()?;
        if can_follow(&waiting.response, verdicts) {
            return Some(waiting.response);
        }
        self.send_fitted(waiting.response);
        None
    }

    /// Leaves the pending verdicts waiting for the next search, after those already waiting
    /// (added to their message in place: a run of quick searches adds to it at every query).
    pub(crate) fn wait(&self, verdicts: &mut Vec<Verdict>, packed: Option<&mut PackedVerdicts>) {
        let mut slot = lock(&self.slot);
        if let Some(waiting) = slot.take_if(|waiting| !can_follow(&waiting.response, verdicts)) {
            // Full verdicts after packed ones (never within a batch): those go first, sent
            // with the slot empty and unlocked.
            drop(slot);
            self.send_fitted(waiting.response);
            slot = lock(&self.slot);
        }
        let waiting = slot.get_or_insert_with(|| Waiting {
            response: EvaluateResponse::default(),
            since: Instant::now(),
        });
        append_pending(&mut waiting.response, verdicts, packed);
    }

    fn send_fitted(&self, response: EvaluateResponse) {
        let mut fitted = Vec::new();
        fit_response(response, self.max_bytes, &mut fitted);
        for response in fitted {
            // Waits while the stream has [`HANDED_OVER`] responses to take (the job runs on
            // the work pool, never on the runtime). The receiver goes only with the stream,
            // whose answers nobody wants then: the job stops at its next query.
            if self.tx.blocking_send(response).is_err() {
                return;
            }
        }
    }
}

/// The stream's end.
pub(crate) struct StreamSide {
    rx: mpsc::Receiver<EvaluateResponse>,
    slot: Slot,
    max_bytes: usize,
}

impl StreamSide {
    /// The next response the job sent; `None` once the job has ended and all were read.
    pub(crate) async fn recv(&mut self) -> Option<EvaluateResponse> {
        self.rx.recv().await
    }

    /// When the verdicts in the slot have waited [`EARLY_AFTER`] at `now`: the responses
    /// the job sent before them, then them. Nothing otherwise, nor while the job holds the
    /// slot (for moments: the next look comes soon).
    pub(crate) fn take_overdue(&mut self, now: Instant) -> Vec<EvaluateResponse> {
        let mut slot = match self.slot.try_lock() {
            Ok(slot) => slot,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return Vec::new(),
        };
        let overdue = slot
            .as_ref()
            .is_some_and(|waiting| now.saturating_duration_since(waiting.since) >= EARLY_AFTER);
        if !overdue {
            return Vec::new();
        }
        let waiting = slot.take();
        let mut responses = drained(&mut self.rx);
        drop(slot);
        if let Some(waiting) = waiting {
            fit_response(waiting.response, self.max_bytes, &mut responses);
        }
        responses
    }

    /// Once the job has ended (a failed job may leave verdicts waiting): every response it
    /// sent, then the verdicts left in the slot.
    pub(crate) fn rest(&mut self) -> Vec<EvaluateResponse> {
        let waiting = lock(&self.slot).take();
        let mut responses = drained(&mut self.rx);
        if let Some(waiting) = waiting {
            fit_response(waiting.response, self.max_bytes, &mut responses);
        }
        responses
    }

    /// The responses the job sent so far, the slot left alone.
    #[cfg(test)]
    pub(crate) fn sent(&mut self) -> Vec<EvaluateResponse> {
        drained(&mut self.rx)
    }
}

/// The responses waiting in `rx`.
fn drained(rx: &mut mpsc::Receiver<EvaluateResponse>) -> Vec<EvaluateResponse> {
    let mut responses = Vec::new();
    while let Ok(response) = rx.try_recv() {
        responses.push(response);
    }
    responses
}

/// Whether full `verdicts` can follow those of `message` in it: not after packed ones.
fn can_follow(message: &EvaluateResponse, verdicts: &[Verdict]) -> bool {
    let has_packed = message
        .packed_verdicts
        .as_ref()
        .is_some_and(|packed| !packed.outcomes.is_empty());
    verdicts.is_empty() || !has_packed
}

/// Moves the pending verdicts to the end of `message` (the caller checked [`can_follow`]);
/// packed ones only when there are some.
fn append_pending(
    message: &mut EvaluateResponse,
    verdicts: &mut Vec<Verdict>,
    packed: Option<&mut PackedVerdicts>,
) {
    message.verdicts.append(verdicts);
    if let Some(packed) = packed.filter(|packed| !packed.outcomes.is_empty()) {
        let into = message
            .packed_verdicts
            .get_or_insert_with(|| PackedVerdicts {
                first_query_id: packed.first_query_id,
                ..Default::default()
            });
        append_packed(into, packed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{PackedQueryError, QueryError};

    fn verdict(query_id: u64) -> Verdict {
        Verdict {
            query_id,
            ..Default::default()
        }
    }

    /// `n` analysed packed verdicts from `first`, each with one move; query `error_at` is
    /// malformed, query and move `over_at` over the budget.
    fn packed(first: u64, n: u32, error_at: u32, over_at: u32) -> PackedVerdicts {
        PackedVerdicts {
            first_query_id: first,
            outcomes: vec![1; n as usize],
            nim_sums: (0..u64::from(n)).map(|i| first + i).collect(),
            errors: vec![PackedQueryError {
                index: error_at,
                error: Some(QueryError::default()),
            }],
            remotenesses: vec![2; n as usize],
            over_budget: vec![over_at],
            move_counts: vec![1; n as usize],
            move_sources: (0..n).collect(),
            move_targets: (0..n).collect(),
            move_outcomes: vec![2; n as usize],
            move_remotenesses: vec![1; n as usize],
            move_over_budget: vec![over_at],
            moves_omitted: vec![0; n as usize],
        }
    }

    #[test]
    fn waiting_verdicts_are_taken_once_overdue_after_those_sent_before() {
        let (job, mut stream) = handoff(usize::MAX);
        job.send_pending(&mut vec![verdict(0)], None);
        job.wait(&mut vec![verdict(1)], None);
        job.wait(&mut vec![verdict(2)], None);
        let now = Instant::now();
        assert!(stream.take_overdue(now).is_empty(), "not overdue yet");
        let taken = stream.take_overdue(now + EARLY_AFTER);
        let ids: Vec<Vec<u64>> = taken
            .iter()
            .map(|response| response.verdicts.iter().map(|v| v.query_id).collect())
            .collect();
        assert_eq!(ids, [vec![0], vec![1, 2]]);
        assert!(stream.rest().is_empty());
    }

    #[test]
    fn packed_verdicts_that_waited_share_a_message_with_every_index_rebased() {
        let (job, mut stream) = handoff(usize::MAX);
        let mut first = packed(10, 3, 1, 2);
        job.wait(&mut Vec::new(), Some(&mut first));
        assert_eq!(first.first_query_id, 13);
        assert!(first.outcomes.is_empty() && first.errors.is_empty());
        let mut second = packed(13, 2, 0, 1);
        job.send_pending(&mut Vec::new(), Some(&mut second));
        assert_eq!(second.first_query_id, 15);
        let sent = stream.sent();
        assert_eq!(sent.len(), 1);
        let merged = sent[0].packed_verdicts.as_ref().unwrap();
        assert_eq!(merged.first_query_id, 10);
        assert_eq!(merged.nim_sums, [10, 11, 12, 13, 14]);
        let errors: Vec<u32> = merged.errors.iter().map(|error| error.index).collect();
        assert_eq!(errors, [1, 3]);
        assert_eq!(merged.over_budget, [2, 4]);
        assert_eq!(merged.move_sources, [0, 1, 2, 0, 1]);
        assert_eq!(merged.move_over_budget, [2, 4]);
        assert_eq!(merged.moves_omitted.len(), 5);
    }

    #[test]
    fn full_verdicts_after_waiting_packed_ones_go_in_a_message_of_their_own() {
        let (job, mut stream) = handoff(usize::MAX);
        job.wait(&mut Vec::new(), Some(&mut packed(0, 2, 0, 0)));
        job.send(EvaluateResponse {
            verdicts: vec![verdict(2)],
            ..Default::default()
        });
        let sent = stream.sent();
        assert_eq!(sent.len(), 2);
        assert!(sent[0].verdicts.is_empty());
        assert_eq!(sent[0].packed_verdicts.as_ref().unwrap().outcomes.len(), 2);
        assert_eq!(sent[1].verdicts, vec![verdict(2)]);
        assert!(sent[1].packed_verdicts.is_none());
    }

    #[test]
    fn full_verdicts_left_waiting_after_packed_ones_send_those_first() {
        let (job, mut stream) = handoff(usize::MAX);
        job.wait(&mut Vec::new(), Some(&mut packed(0, 2, 0, 0)));
        job.wait(&mut vec![verdict(2)], None);
        let sent = stream.sent();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].packed_verdicts.as_ref().unwrap().outcomes.len(), 2);
        let rest = stream.rest();
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].verdicts, vec![verdict(2)]);
        assert!(rest[0].packed_verdicts.is_none());
    }

    #[test]
    fn a_batch_response_takes_the_waiting_verdicts_first() {
        let (job, mut stream) = handoff(usize::MAX);
        job.wait(&mut vec![verdict(0)], None);
        job.send(EvaluateResponse {
            verdicts: vec![verdict(1)],
            packed_verdicts: Some(packed(2, 1, 0, 0)),
            graph: None,
        });
        let sent = stream.sent();
        assert_eq!(sent.len(), 1);
        let ids: Vec<u64> = sent[0].verdicts.iter().map(|v| v.query_id).collect();
        assert_eq!(ids, [0, 1]);
        assert_eq!(sent[0].packed_verdicts.as_ref().unwrap().first_query_id, 2);
        assert!(stream.rest().is_empty());
    }

    #[test]
    fn a_batch_of_no_packed_queries_keeps_its_empty_packed_verdicts() {
        let (job, mut stream) = handoff(usize::MAX);
        job.wait(&mut vec![verdict(0)], None);
        let empty = PackedVerdicts {
            first_query_id: 1,
            ..Default::default()
        };
        job.send(EvaluateResponse {
            verdicts: vec![verdict(1)],
            packed_verdicts: Some(empty.clone()),
            graph: None,
        });
        let sent = stream.sent();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].verdicts, vec![verdict(0), verdict(1)]);
        assert_eq!(sent[0].packed_verdicts, Some(empty));
    }

    #[test]
    fn a_failed_job_leaves_its_waiting_verdicts_to_the_rest() {
        let (job, mut stream) = handoff(usize::MAX);
        job.send_pending(&mut vec![verdict(0)], None);
        job.wait(&mut vec![verdict(1)], None);
        drop(job);
        let rest = stream.rest();
        assert_eq!(rest.len(), 2);
        assert_eq!(rest[1].verdicts, vec![verdict(1)]);
    }

    #[test]
    fn a_job_waits_once_the_stream_has_not_taken_what_it_sent() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::time::Duration;
        let (job, mut stream) = handoff(usize::MAX);
        let sent = Arc::new(AtomicUsize::new(0));
        let counted = sent.clone();
        let worker = std::thread::spawn(move || {
            for id in 0..=HANDED_OVER as u64 {
                job.send_pending(&mut vec![verdict(id)], None);
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while sent.load(Ordering::SeqCst) < HANDED_OVER && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert_eq!(sent.load(Ordering::SeqCst), HANDED_OVER);
        // The next send finds the channel full: the job waits for the stream.
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(sent.load(Ordering::SeqCst), HANDED_OVER, "the job went on");
        let mut taken = 0;
        while taken <= HANDED_OVER && Instant::now() < deadline {
            taken += stream.sent().len();
            std::thread::yield_now();
        }
        worker.join().expect("the job ends once the stream takes");
        assert_eq!(taken, HANDED_OVER + 1);
    }
}
