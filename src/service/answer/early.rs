//! Verdicts that go as they are found. A stream that asks for moves or position analyses can
//! take seconds a query (a sum of several tokens is searched exactly), so its job hands its
//! verdicts to the stream while it runs, through a bounded channel, instead of holding the
//! batch's answers until its end.
//!
//! No clock decides when they go. The job gathers verdicts into chunks of [`CHUNK`] and hands
//! a chunk over when it is full, at its batch's end, and whenever a search lasts: the engine
//! calls back every 16K units of a search's work, so a quick answer never waits for a slow
//! search after it, while a run of quick answers costs one hand-over per chunk. The stream
//! takes whatever waits each time it is free and sends it as one message (cut to the message
//! limit). A batch's end is marked, so that a message never spans two batches and an empty
//! batch still gets its (empty) response.
//!
//! The channel holds at most [`EARLY_CHUNKS`] chunks: a client that does not read makes the
//! stream wait, then the job, instead of the server holding every answer it finds.

use tokio::sync::mpsc;

use super::fit::fit_response;
use crate::proto::{EvaluateResponse, Verdict};

/// Verdicts the job gathers before it hands them over (unless a search lasts first).
pub(crate) const CHUNK: usize = 64;

/// Chunks handed over that the stream has not taken; past them the job waits. With the
/// chunk being gathered, at most 320 verdicts: some 1.6 MiB at 256 analysed moves a verdict
/// (about 5 KiB), besides the stream's response buffer.
pub(crate) const EARLY_CHUNKS: usize = 4;

/// What a job hands to its stream: verdicts, or the end of a batch (on such a stream every
/// verdict is a full one, handed over here: the batch's response holds nothing more).
#[derive(Debug)]
enum Answered {
    Verdicts(Vec<Verdict>),
    BatchEnd,
}

/// The two ends of a job's channel of early verdicts.
pub(crate) fn early_verdicts() -> (EarlySender, EarlyReceiver) {
    let (tx, rx) = mpsc::channel(EARLY_CHUNKS);
    (
        EarlySender {
            tx,
            gathered: Vec::new(),
        },
        EarlyReceiver {
            rx,
            taken: Vec::with_capacity(EARLY_CHUNKS),
            sent_in_batch: false,
        },
    )
}

/// The job's end, with the chunk it is gathering. It runs on the work pool, never on the
/// runtime: it may wait here. If the stream is gone its sends fail, and the job stops at its
/// next query, which reads the interrupt.
pub(crate) struct EarlySender {
    tx: mpsc::Sender<Answered>,
    gathered: Vec<Verdict>,
}

impl EarlySender {
    /// Adds one verdict, handing the chunk over once it is full.
    pub(crate) fn verdict(&mut self, verdict: Verdict) {
        self.gathered.push(verdict);
        if self.gathered.len() >= CHUNK {
            self.flush();
        }
    }

    /// Hands over what was gathered, if anything (when a search lasts, and before the end).
    pub(crate) fn flush(&mut self) {
        if !self.gathered.is_empty() {
            let chunk = std::mem::replace(&mut self.gathered, Vec::with_capacity(CHUNK));
            let _ = self.tx.blocking_send(Answered::Verdicts(chunk));
        }
    }

    /// Marks the end of a batch, after its verdicts.
    pub(crate) fn batch_end(&mut self) {
        self.flush();
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
        if self.rx.recv_many(&mut self.taken, EARLY_CHUNKS).await == 0 {
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
            Answered::Verdicts(mut verdicts) => message.verdicts.append(&mut verdicts),
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
        Answered::Verdicts(vec![Verdict {
            query_id,
            ..Default::default()
        }])
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
        let (mut job, mut stream) = early_verdicts();
        let bound = CHUNK * EARLY_CHUNKS;
        let handed = Arc::new(AtomicUsize::new(0));
        let counted = handed.clone();
        let worker = std::thread::spawn(move || {
            for id in 0..(bound + CHUNK) as u64 {
                job.verdict(Verdict {
                    query_id: id,
                    ..Default::default()
                });
                counted.fetch_add(1, Ordering::SeqCst);
            }
            job.batch_end();
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        // The channel holds EARLY_CHUNKS chunks; the job then gathers one more and waits.
        let waits_at = bound + CHUNK - 1;
        while handed.load(Ordering::SeqCst) < waits_at && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert_eq!(handed.load(Ordering::SeqCst), waits_at);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(handed.load(Ordering::SeqCst), waits_at, "the job went on");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut taken = Vec::new();
        runtime.block_on(async {
            while let Some(messages) = stream.next_messages(usize::MAX).await {
                taken.extend(messages.into_iter().flat_map(|m| m.verdicts));
            }
        });
        worker.join().expect("the job ends once the stream takes");
        let ids: Vec<u64> = taken.iter().map(|v| v.query_id).collect();
        assert_eq!(ids, (0..(bound + CHUNK) as u64).collect::<Vec<_>>());
    }
}
