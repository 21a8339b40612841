//! Verdicts that go as they are found. A stream that asks for moves or position analyses can
//! take seconds a query (a sum of several tokens is searched exactly), so its job hands its
//! verdicts to the stream while it runs, through a channel, instead of holding the batch's
//! answers until its end.
//!
//! No clock decides when they go. The job gathers verdicts into chunks of [`CHUNK_WEIGHT`]
//! (a verdict weighs one, and one more per move it lists) and hands a chunk over when it is
//! full, at its batch's end, and whenever a search lasts: the engine
//! calls back every 16K units of a search's work, so a quick answer never waits for a slow
//! search after it, while a run of quick answers costs one hand-over per chunk. The stream
//! takes whatever waits each time it is free and sends it as one message (cut to the message
//! limit). A batch's end is marked, so that a message never spans two batches and an empty
//! batch still gets its (empty) response. The job hands its verdicts over encoded
//! ([`EncodedVerdicts`]): it holds them in its cache as it finds them, where the stream's
//! thread would read each verdict and move cold, once for each sizing and once to write it.
//!
//! The job never waits for the stream. Once [`EARLY_CHUNKS`] chunks' weight waits untaken, it
//! gives its turn up at the next query ([`EarlySender::backlogged`]): its work permit goes to other
//! streams, and the stream resumes it once it has sent what waited. So a client that does
//! not read holds the server to these buffers and to no permit, instead of to every answer
//! it finds or, with a job waiting on its permit, to the searches of every other stream (a
//! client reading its streams in turn, as `grundy analyse` reads its test cases, stalled its
//! own first stream that way: the others' jobs held every permit).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use tokio::sync::mpsc;

use super::fit::{budget, fit_moves};
use crate::proto::{EncodedVerdicts, Outcome, Verdict};
use crate::service::metrics::QueryCounts;

/// The weight of verdicts the job gathers before it hands them over (unless a search lasts
/// first): a verdict weighs one, and one more per move listed, so that a chunk holds about
/// as many bytes (some 40 KiB) whatever its verdicts list, one verdict's own moves aside (a
/// verdict always goes whole; the server's move cap bounds it). Four verdicts of 256 moves
/// make a chunk, and some 250 of quick sums, which then cost one hand-over (a wake-up of the
/// stream, a message) where chunks of 64 verdicts cost four: `grundy analyse` of quick sums
/// switched threads a third as often and took 0.94x the CPU (15 pairs).
const CHUNK_WEIGHT: usize = 1024;

/// Chunks' weight handed over and not taken by the stream, past which the job gives its
/// turn up before its next query or batch (a batch's end weighs one). A query adds at most
/// two chunks and an end, so what waits stays under seven chunks' weight with the one being
/// gathered, one verdict's own moves aside: some 7,000 verdicts and moves (under 300 KiB),
/// besides the stream's response buffer and the message being sent. Counting weight, not
/// items, a run of one-query batches (a chunk and an end each) waits for a client that is
/// slow, not for a stream task that has not woken yet.
const EARLY_CHUNKS: usize = 4;

/// The weight waiting at which the job gives its turn up (see [`EARLY_CHUNKS`]).
const BACKLOG_WEIGHT: usize = EARLY_CHUNKS * CHUNK_WEIGHT;

/// Items the stream takes at once: the chunks of [`EARLY_CHUNKS`] and a batch's end after
/// each.
const TAKEN_AT_ONCE: usize = 2 * EARLY_CHUNKS;

/// What a job hands to its stream: verdicts, or the end of a batch (on such a stream every
/// verdict is a full one, handed over here: the batch's response holds nothing more).
#[derive(Debug)]
enum Answered {
    Verdicts(Chunk),
    BatchEnd,
}

/// Verdicts the job encoded: their entries, and where each ends with what it counts as.
#[derive(Debug)]
struct Chunk {
    bytes: Bytes,
    entries: Vec<Entry>,
    weight: usize,
}

/// One verdict of a [`Chunk`]: the end of its bytes, and its outcome for the metrics.
#[derive(Debug, Clone, Copy)]
struct Entry {
    end: usize,
    outcome: Option<Outcome>,
}

impl Answered {
    fn weight(&self) -> usize {
        match self {
            Answered::Verdicts(chunk) => chunk.weight,
            Answered::BatchEnd => 1,
        }
    }
}

/// One message of verdicts for the stream, with their count by outcome.
#[derive(Debug, Default)]
pub(crate) struct EarlyMessage {
    pub(crate) verdicts: EncodedVerdicts,
    pub(crate) counts: QueryCounts,
}

/// The two ends of a job's channel of early verdicts, whose messages stay under
/// `max_bytes`.
pub(crate) fn early_verdicts(max_bytes: usize) -> (EarlySender, EarlyReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    let queued = Arc::new(AtomicUsize::new(0));
    (
        EarlySender {
            tx,
            queued: queued.clone(),
            budget: budget(max_bytes),
            gathered: Vec::new(),
            entries: Vec::new(),
            weight: 0,
        },
        EarlyReceiver {
            rx,
            queued,
            budget: budget(max_bytes),
            taken: Vec::with_capacity(TAKEN_AT_ONCE),
            sent_in_batch: false,
        },
    )
}

/// The job's end, with the chunk it is gathering. Its sends never wait (the job checks
/// [`Self::backlogged`] between queries instead). If the stream is gone they fail, and the
/// job stops at its next query, which reads the interrupt.
pub(crate) struct EarlySender {
    tx: mpsc::UnboundedSender<Answered>,
    /// The weight of the items sent and not yet taken by the stream.
    queued: Arc<AtomicUsize>,
    /// The bytes a message's verdicts may take.
    budget: usize,
    /// The entries of the chunk being gathered, encoded.
    gathered: Vec<u8>,
    entries: Vec<Entry>,
    /// The weight of the chunk (see [`CHUNK_WEIGHT`]).
    weight: usize,
}

impl EarlySender {
    /// Adds one verdict, handing the chunk over once it is full. A verdict larger than a
    /// message loses its worst moves (see `fit_moves`), and is encoded again.
    pub(crate) fn verdict(&mut self, mut verdict: Verdict) {
        let start = self.gathered.len();
        EncodedVerdicts::encode_entry(&verdict, &mut self.gathered);
        if self.gathered.len() - start > self.budget {
            self.gathered.truncate(start);
            fit_moves(&mut verdict, self.budget);
            EncodedVerdicts::encode_entry(&verdict, &mut self.gathered);
        }
        self.weight += 1 + verdict.moves.len();
        self.entries.push(Entry {
            end: self.gathered.len(),
            outcome: QueryCounts::outcome_of(&verdict),
        });
        if self.weight >= CHUNK_WEIGHT {
            self.flush();
        }
    }

    /// Hands over what was gathered, if anything (when a search lasts, and before the end).
    pub(crate) fn flush(&mut self) {
        if !self.entries.is_empty() {
            let chunk = Chunk {
                bytes: Bytes::from(std::mem::take(&mut self.gathered)),
                entries: std::mem::take(&mut self.entries),
                weight: std::mem::take(&mut self.weight),
            };
            self.send(Answered::Verdicts(chunk));
        }
    }

    /// Marks the end of a batch, after its verdicts.
    pub(crate) fn batch_end(&mut self) {
        self.flush();
        self.send(Answered::BatchEnd);
    }

    /// Whether [`EARLY_CHUNKS`] chunks' weight or more waits for the stream: the job then
    /// gives its turn up before its next query or batch.
    pub(crate) fn backlogged(&self) -> bool {
        self.queued.load(Ordering::Relaxed) >= BACKLOG_WEIGHT
    }

    fn send(&self, item: Answered) {
        // Counted before it is sent, so that the stream never takes more than was counted.
        self.queued.fetch_add(item.weight(), Ordering::Relaxed);
        let _ = self.tx.send(item);
    }
}

/// The stream's end.
pub(crate) struct EarlyReceiver {
    rx: mpsc::UnboundedReceiver<Answered>,
    queued: Arc<AtomicUsize>,
    /// The bytes a message's verdicts may take.
    budget: usize,
    taken: Vec<Answered>,
    /// Whether a message of the current batch went already.
    sent_in_batch: bool,
}

impl EarlyReceiver {
    /// Whatever the job handed over and waits, as messages under the limit, waiting for at
    /// least one item; `None` once the job has ended (its sender dropped) and all was taken.
    pub(crate) async fn next_messages(&mut self) -> Option<Vec<EarlyMessage>> {
        if self.rx.recv_many(&mut self.taken, TAKEN_AT_ONCE).await == 0 {
            return None;
        }
        let weight = self.taken.iter().map(Answered::weight).sum();
        self.queued.fetch_sub(weight, Ordering::Relaxed);
        let mut messages = Vec::new();
        let mut items = std::mem::take(&mut self.taken);
        pack(
            items.drain(..),
            self.budget,
            &mut self.sent_in_batch,
            &mut messages,
        );
        self.taken = items;
        Some(messages)
    }
}

/// Packs `items` into messages: the verdicts up to a batch's end in one, those after it in
/// the next, each message's verdicts at most `budget` bytes (a verdict larger than that goes
/// alone); a batch's end alone makes an (empty) message only when its batch sent nothing
/// yet, so that every batch is answered.
fn pack(
    items: impl Iterator<Item = Answered>,
    budget: usize,
    sent_in_batch: &mut bool,
    out: &mut Vec<EarlyMessage>,
) {
    let mut message = EarlyMessage::default();
    for item in items {
        match item {
            Answered::Verdicts(chunk) => {
                // The run of the chunk's entries going into `message`: from `run` to `end`.
                let (mut run, mut end) = (0, 0);
                for entry in &chunk.entries {
                    let fits = message.verdicts.len() + (entry.end - run) <= budget;
                    if !fits && (!message.verdicts.is_empty() || end > run) {
                        message.verdicts.push(chunk.bytes.slice(run..end));
                        out.push(std::mem::take(&mut message));
                        *sent_in_batch = true;
                        run = end;
                    }
                    message.counts.count(entry.outcome);
                    end = entry.end;
                }
                message.verdicts.push(chunk.bytes.slice(run..end));
            }
            Answered::BatchEnd => {
                if !message.verdicts.is_empty() || !*sent_in_batch {
                    out.push(std::mem::take(&mut message));
                }
                *sent_in_batch = false;
            }
        }
    }
    if !message.verdicts.is_empty() {
        out.push(message);
        *sent_in_batch = true;
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;
    use crate::proto::{AnalysedMove, EvaluateResponse, Sent};

    /// A chunk of verdicts `ids`, each listing `moves` moves, as a job hands it over.
    fn chunk(ids: std::ops::Range<u64>, moves: usize) -> Answered {
        let (mut job, mut stream) = early_verdicts(usize::MAX);
        for query_id in ids {
            job.verdict(Verdict {
                query_id,
                outcome: Outcome::Win.into(),
                moves: vec![AnalysedMove::default(); moves],
                ..Default::default()
            });
        }
        job.flush();
        stream.rx.try_recv().unwrap()
    }

    fn verdict(query_id: u64) -> Answered {
        chunk(query_id..query_id + 1, 0)
    }

    fn end() -> Answered {
        Answered::BatchEnd
    }

    fn decoded(message: &EarlyMessage) -> EvaluateResponse {
        let sent: Sent<EvaluateResponse> = Sent::Encoded(message.verdicts.clone());
        assert_eq!(sent.encode_to_vec().len(), message.verdicts.len());
        sent.into_message().unwrap()
    }

    fn ids(messages: &[EarlyMessage]) -> Vec<Vec<u64>> {
        messages
            .iter()
            .map(|m| decoded(m).verdicts.iter().map(|v| v.query_id).collect())
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
        assert_eq!(out[0].counts.win, 2);
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
    fn verdicts_over_the_message_budget_go_in_several_messages_whole_and_in_order() {
        let one = match chunk(0..1, 3) {
            Answered::Verdicts(chunk) => chunk.bytes.len(),
            Answered::BatchEnd => unreachable!(),
        };
        // Room for two verdicts a message: chunks of 5 and 4 verdicts make five messages.
        let budget = 2 * one + one / 2;
        let mut sent = false;
        let mut out = Vec::new();
        pack(
            vec![chunk(0..5, 3), chunk(5..9, 3), end()].into_iter(),
            budget,
            &mut sent,
            &mut out,
        );
        assert_eq!(
            ids(&out),
            [vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7], vec![8]]
        );
        assert!(out.iter().all(|m| m.verdicts.len() <= budget));
        let counted: u64 = out.iter().map(|m| m.counts.win).sum();
        assert_eq!(counted, 9);
        assert!(
            out.iter()
                .all(|m| m.counts.total() as usize == decoded(m).verdicts.len())
        );
        // A verdict larger than the budget goes alone.
        out.clear();
        pack(
            vec![chunk(0..3, 3), end()].into_iter(),
            one / 2,
            &mut sent,
            &mut out,
        );
        assert_eq!(ids(&out), [vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn a_verdict_larger_than_a_message_loses_its_worst_moves() {
        let (mut job, mut stream) = early_verdicts(300);
        job.verdict(Verdict {
            query_id: 7,
            moves: (0..100)
                .map(|remoteness| AnalysedMove {
                    remoteness: Some(remoteness),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        });
        job.batch_end();
        drop(job);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let taken = runtime.block_on(stream.next_messages()).unwrap();
        assert_eq!(taken.len(), 1);
        let verdict = &decoded(&taken[0]).verdicts[0];
        assert!(taken[0].verdicts.len() <= budget(300));
        assert!(!verdict.moves.is_empty() && verdict.moves.len() < 100);
        assert_eq!(verdict.moves_omitted as usize, 100 - verdict.moves.len());
        assert_eq!(verdict.moves[0].remoteness, Some(0), "the best move stays");
    }

    #[test]
    fn a_job_never_waits_and_is_told_when_the_stream_falls_behind() {
        let (mut job, mut stream) = early_verdicts(usize::MAX);
        let verdicts = |job: &mut EarlySender, ids: std::ops::Range<u64>| {
            for query_id in ids {
                job.verdict(Verdict {
                    query_id,
                    ..Default::default()
                });
            }
        };
        // Sends never wait: every chunk goes on this thread, with nobody taking them.
        let sent = BACKLOG_WEIGHT as u64;
        verdicts(&mut job, 0..sent - 1);
        assert!(
            !job.backlogged(),
            "{} chunks wait, one short",
            EARLY_CHUNKS - 1
        );
        verdicts(&mut job, sent - 1..sent);
        assert!(job.backlogged(), "{EARLY_CHUNKS} chunks wait");
        verdicts(&mut job, sent..sent + 1);
        job.batch_end();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let taken = runtime.block_on(stream.next_messages()).unwrap();
        assert!(!job.backlogged(), "the stream took what waited");
        drop(job);
        assert!(runtime.block_on(stream.next_messages()).is_none());
        let ids: Vec<u64> = ids(&taken).concat();
        assert_eq!(ids, (0..=sent).collect::<Vec<_>>());
        assert_eq!(taken.len(), 1, "one batch: one message");
    }

    #[test]
    fn the_ends_of_empty_batches_count_toward_the_backlog() {
        let (mut job, _stream) = early_verdicts(usize::MAX);
        for _ in 1..BACKLOG_WEIGHT {
            job.batch_end();
        }
        assert!(!job.backlogged());
        job.batch_end();
        assert!(
            job.backlogged(),
            "a client sending empty batches is not read ahead of"
        );
    }
}
