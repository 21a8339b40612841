//! Verdicts that go as they are found. A stream that asks for moves or position analyses can
//! take seconds a query (a sum of several tokens is searched exactly), so its job hands each
//! verdict to the stream as soon as it is answered, through a bounded channel, instead of
//! holding the batch's answers until its end.
//!
//! No clock decides when they go: the stream takes whatever waits in the channel each time it
//! is free and sends it as one message (cut to the message limit), so quick answers share
//! messages by themselves while the one before is being sent, and a slow search's answer goes
//! alone and at once. A batch's end is marked, so that a message never spans two batches and
//! an empty batch still gets its (empty) response.
//!
//! The channel holds at most [`EARLY_VERDICTS`] verdicts: a client that does not read makes
//! the stream wait, then the job, instead of the server holding every answer it finds.

use tokio::sync::mpsc;

use super::split::fit_response;
use crate::proto::{EvaluateResponse, Verdict};

/// Verdicts a job may have handed over that the stream has not taken; past them the job
/// waits. At most some 1.3 MiB (a verdict of 256 analysed moves is about 5 KiB), besides the
/// stream's response buffer.
pub(crate) const EARLY_VERDICTS: usize = 256;

/// What a job hands to its stream: a verdict, or the end of a batch (on such a stream every
/// verdict is a full one, handed over as it is found: the batch's response holds nothing
/// more).
#[derive(Debug)]
pub(crate) enum Answered {
    Verdict(Verdict),
    BatchEnd,
}

/// The two ends of a job's channel of early verdicts.
pub(crate) fn early_verdicts() -> (EarlySender, EarlyReceiver) {
    let (tx, rx) = mpsc::channel(EARLY_VERDICTS);
    (
        EarlySender { tx },
        EarlyReceiver {
            rx,
            taken: Vec::with_capacity(EARLY_VERDICTS),
            sent_in_batch: false,
        },
    )
}

/// The job's end (it runs on the work pool, never on the runtime: it may wait here).
pub(crate) struct EarlySender {
    tx: mpsc::Sender<Answered>,
}

impl EarlySender {
    /// Hands over one verdict, waiting while the stream has [`EARLY_VERDICTS`] to take. The
    /// receiver goes only with the stream, whose answers nobody wants then: the job stops at
    /// its next query, which reads the interrupt.
    pub(crate) fn verdict(&self, verdict: Verdict) {
        let _ = self.tx.blocking_send(Answered::Verdict(verdict));
    }

    /// Marks the end of a batch whose verdicts were all handed over (`response`, what
    /// `QueryEvaluator::answer` returned, holds none).
    pub(crate) fn batch_end(&self, response: EvaluateResponse) {
        debug_assert!(response.verdicts.is_empty() && response.packed_verdicts.is_none());
        let _ = self.tx.blocking_send(Answered::BatchEnd);
    }
}

/// The stream's end.
pub(crate) struct EarlyReceiver {
    rx: mpsc::Receiver<Answered>,
    taken: Vec<Answered>,
    /// Whether a message of the current batch went already.
    sent_in_batch: bool,
}

impl EarlyReceiver {
    /// Whatever the job handed over and waits, as messages under `max_bytes`, waiting for at
    /// least one item; `None` once the job has ended (its sender dropped) and all was taken.
    pub(crate) async fn next_messages(
        &mut self,
        max_bytes: usize,
    ) -> Option<Vec<EvaluateResponse>> {
        if self.rx.recv_many(&mut self.taken, EARLY_VERDICTS).await == 0 {
            return None;
        }
        let mut messages = Vec::new();
        let mut items = std::mem::take(&mut self.taken);
        pack(
            items.drain(..),
            max_bytes,
            &mut self.sent_in_batch,
            &mut messages,
        );
        self.taken = items;
        Some(messages)
    }
}

/// Packs `items` into messages: the verdicts up to a batch's end in one, those after it in
/// the next; a batch's end alone makes an (empty) message only when its batch sent nothing
/// yet, so that every batch is answered.
fn pack(
    items: impl Iterator<Item = Answered>,
    max_bytes: usize,
    sent_in_batch: &mut bool,
    out: &mut Vec<EvaluateResponse>,
) {
    let mut message = EvaluateResponse::default();
    for item in items {
        match item {
            Answered::Verdict(verdict) => message.verdicts.push(verdict),
            Answered::BatchEnd => {
                if !message.verdicts.is_empty() || !*sent_in_batch {
                    fit_response(std::mem::take(&mut message), max_bytes, out);
                }
                *sent_in_batch = false;
            }
        }
    }
    if !message.verdicts.is_empty() {
        fit_response(message, max_bytes, out);
        *sent_in_batch = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(query_id: u64) -> Answered {
        Answered::Verdict(Verdict {
            query_id,
            ..Default::default()
        })
    }

    fn end() -> Answered {
        Answered::BatchEnd
    }

    fn ids(messages: &[EvaluateResponse]) -> Vec<Vec<u64>> {
        messages
            .iter()
            .map(|m| m.verdicts.iter().map(|v| v.query_id).collect())
            .collect()
    }

    #[test]
    fn what_waits_goes_in_one_message_and_never_across_a_batch_end() {
        let mut sent = false;
        let mut out = Vec::new();
        pack(
            vec![verdict(0), verdict(1), end(), verdict(2)].into_iter(),
            usize::MAX,
            &mut sent,
            &mut out,
        );
        assert_eq!(ids(&out), [vec![0, 1], vec![2]]);
        assert!(sent, "the second batch sent a message already");
        // Its end, alone, adds no empty message.
        out.clear();
        pack(vec![end()].into_iter(), usize::MAX, &mut sent, &mut out);
        assert!(out.is_empty());
        assert!(!sent);
    }

    #[test]
    fn an_empty_batch_still_gets_its_response() {
        let mut sent = false;
        let mut out = Vec::new();
        pack(
            vec![end(), end()].into_iter(),
            usize::MAX,
            &mut sent,
            &mut out,
        );
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|m| m.verdicts.is_empty()));
    }

    #[test]
    fn a_job_waits_once_the_stream_has_not_taken_what_it_sent() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::time::{Duration, Instant};
        let (job, mut stream) = early_verdicts();
        let handed = Arc::new(AtomicUsize::new(0));
        let counted = handed.clone();
        let worker = std::thread::spawn(move || {
            for id in 0..=EARLY_VERDICTS as u64 {
                job.verdict(Verdict {
                    query_id: id,
                    ..Default::default()
                });
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while handed.load(Ordering::SeqCst) < EARLY_VERDICTS && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert_eq!(handed.load(Ordering::SeqCst), EARLY_VERDICTS);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            handed.load(Ordering::SeqCst),
            EARLY_VERDICTS,
            "the job went on"
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut taken = 0;
        runtime.block_on(async {
            while let Some(messages) = stream.next_messages(usize::MAX).await {
                taken += messages.iter().map(|m| m.verdicts.len()).sum::<usize>();
            }
        });
        worker.join().expect("the job ends once the stream takes");
        assert_eq!(taken, EARLY_VERDICTS + 1);
    }
}
