//! The query batches of a test case that were sent but not yet answered, kept so that a
//! stream that breaks can be resumed on another server from the first unanswered query.
//!
//! The queue is bounded by [`WINDOW_BYTES`]: the sender waits for verdicts before it sends
//! more, so what a failure can force to be sent again stays small however long the case.

use std::collections::VecDeque;

use super::query_log::QueryLog;
use crate::proto::QueryBatch;

/// Most bytes of unanswered query batches per test case (one batch is always allowed).
pub(super) const WINDOW_BYTES: usize = 16 << 20;

/// A batch on its way: its queries have ids `first..end`.
struct Sent {
    first: u64,
    end: u64,
    bytes: usize,
    batch: QueryBatch,
}

/// The unanswered batches of a test case, in id order.
#[derive(Default)]
pub(super) struct Replay {
    queue: VecDeque<Sent>,
    /// Bytes of the queued batches.
    bytes: usize,
    /// The id the next query gets.
    next_id: u64,
    /// Where each new batch's positions are recorded for a JSON report (`analyse`).
    log: Option<QueryLog>,
}

impl Replay {
    /// A replay that also records each new batch in `log`.
    pub(super) fn with_log(log: Option<QueryLog>) -> Self {
        Self {
            log,
            ..Self::default()
        }
    }

    /// Numbers `batch`'s queries from the next free id and queues it; returns a copy to send.
    pub(super) fn push(&mut self, mut batch: QueryBatch, bytes: usize) -> QueryBatch {
        let first = self.next_id;
        if let Some(log) = &self.log {
            log.push(&batch);
        }
        self.next_id = number_queries(&mut batch, first);
        self.bytes += bytes;
        let copy = batch.clone();
        self.queue.push_back(Sent {
            first,
            end: self.next_id,
            bytes,
            batch,
        });
        copy
    }

    /// Queries numbered so far.
    pub(super) fn sent(&self) -> u64 {
        self.next_id
    }

    /// Forgets the queries with ids below `answered`, cutting a batch that was answered in
    /// part.
    pub(super) fn trim(&mut self, answered: u64) {
        while let Some(front) = self.queue.front_mut() {
            if front.end <= answered {
                self.bytes -= front.bytes;
                self.queue.pop_front();
                continue;
            }
            if front.first < answered {
                drop_answered(&mut front.batch, answered - front.first);
                front.first = answered;
            }
            break;
        }
    }

    /// Whether a batch may be sent now: the queue, beyond the newest batch, is empty or
    /// within the window.
    pub(super) fn has_room(&self) -> bool {
        self.queue.len() <= 1 || self.bytes <= WINDOW_BYTES
    }

    /// Copies of the queued batches, to send again on a new stream (after [`Self::trim`]).
    pub(super) fn unanswered(&self) -> impl Iterator<Item = QueryBatch> + '_ {
        self.queue.iter().map(|sent| sent.batch.clone())
    }
}

/// Gives the batch's queries the ids `first..`, in the order the server answers them
/// (`queries` first, then `packed_tokens`); returns the next free id.
pub(super) fn number_queries(batch: &mut QueryBatch, first: u64) -> u64 {
    let mut next = first;
    for query in &mut batch.queries {
        query.id = next;
        next += 1;
    }
    if let Some(packed) = &mut batch.packed_tokens {
        packed.first_query_id = next;
        next += packed.token_counts.len() as u64;
    }
    next
}

/// Removes the first `count` queries of `batch` (in answer order).
fn drop_answered(batch: &mut QueryBatch, count: u64) {
    let from_queries = (count as usize).min(batch.queries.len());
    batch.queries.drain(..from_queries);
    let rest = count as usize - from_queries;
    if rest == 0 {
        return;
    }
    if let Some(packed) = &mut batch.packed_tokens {
        let rest = rest.min(packed.token_counts.len());
        let vertices: usize = packed.token_counts[..rest]
            .iter()
            .map(|&n| n as usize)
            .sum();
        packed.token_counts.drain(..rest);
        packed.vertices.drain(..vertices.min(packed.vertices.len()));
        packed.first_query_id += rest as u64;
    }
}

/// Appends the packed queries of `more` to `batch` (both packed only): one message for
/// batches that were waiting together.
pub(super) fn merge(batch: &mut QueryBatch, more: QueryBatch) {
    let Some(more) = more.packed_tokens else {
        return;
    };
    let packed = batch.packed_tokens.get_or_insert_with(Default::default);
    packed.token_counts.extend_from_slice(&more.token_counts);
    packed.vertices.extend_from_slice(&more.vertices);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{PackedTokenQueries, Query};

    fn packed(counts: &[u32]) -> QueryBatch {
        let vertices = counts
            .iter()
            .enumerate()
            .flat_map(|(i, &n)| std::iter::repeat_n(i as u32, n as usize))
            .collect();
        QueryBatch {
            queries: vec![],
            packed_tokens: Some(PackedTokenQueries {
                first_query_id: 0,
                token_counts: counts.to_vec(),
                vertices,
            }),
        }
    }

    #[test]
    fn queries_are_numbered_in_the_order_the_server_answers_them() {
        let mut batch = QueryBatch {
            queries: vec![Query::default(), Query::default()],
            packed_tokens: Some(PackedTokenQueries {
                token_counts: vec![1, 2, 1],
                ..PackedTokenQueries::default()
            }),
        };
        assert_eq!(number_queries(&mut batch, 5), 10);
        let ids: Vec<u64> = batch.queries.iter().map(|q| q.id).collect();
        assert_eq!(ids, vec![5, 6]);
        assert_eq!(batch.packed_tokens.unwrap().first_query_id, 7);
    }

    #[test]
    fn a_resumed_stream_starts_at_the_first_unanswered_query() {
        let mut replay = Replay::default();
        replay.push(packed(&[1, 1]), 10); // ids 0, 1
        replay.push(packed(&[2, 0, 3]), 10); // ids 2, 3, 4
        assert_eq!(replay.sent(), 5);
        replay.trim(3);
        let again: Vec<QueryBatch> = replay.unanswered().collect();
        assert_eq!(again.len(), 1);
        let tokens = again[0].packed_tokens.as_ref().unwrap();
        assert_eq!(tokens.first_query_id, 3);
        assert_eq!(tokens.token_counts, vec![0, 3]);
        assert_eq!(tokens.vertices, vec![2, 2, 2]);
        replay.trim(5);
        assert_eq!(replay.unanswered().count(), 0);
        assert!(replay.has_room());
    }

    #[test]
    fn the_window_holds_back_a_batch_only_behind_others() {
        let mut replay = Replay::default();
        replay.push(packed(&[1]), WINDOW_BYTES * 2);
        assert!(replay.has_room(), "one batch is always allowed");
        replay.push(packed(&[1]), 1);
        assert!(!replay.has_room());
        replay.trim(1);
        assert!(replay.has_room());
    }

    #[test]
    fn waiting_batches_merge_in_order() {
        let mut batch = packed(&[1, 2]);
        merge(&mut batch, packed(&[3]));
        let tokens = batch.packed_tokens.unwrap();
        assert_eq!(tokens.token_counts, vec![1, 2, 3]);
        assert_eq!(tokens.vertices, vec![0, 1, 1, 0, 0, 0]);
    }
}
