//! The token lists of a case's queries, kept from when they are sent until their analysis is
//! printed (`grundy analyse` prints each query's position beside its verdict; a verdict does
//! not repeat it). Shared by the sending and the receiving half of a stream; `judge` keeps
//! none.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use crate::proto::{PackedTokenQueries, QueryBatch};

/// See the module docs. Clones share the log.
#[derive(Debug, Clone, Default)]
pub(super) struct QueryLog(Arc<Mutex<Batches>>);

#[derive(Debug, Default)]
struct Batches {
    /// Batches sent and not wholly printed, oldest first.
    queue: VecDeque<PackedTokenQueries>,
    /// The first query of the oldest batch not printed yet, and the offset of its tokens.
    next_query: usize,
    next_token: usize,
}

impl QueryLog {
    /// Records the packed queries of `batch`, sent in this order (each batch once, however
    /// often it is resent).
    pub(super) fn push(&self, batch: &QueryBatch) {
        if let Some(packed) = &batch.packed_tokens {
            self.lock().queue.push_back(packed.clone());
        }
    }

    /// Hands the tokens of the next `count` queries to `each`, in order; fewer when fewer
    /// were recorded.
    pub(super) fn take(&self, count: usize, mut each: impl FnMut(&[u32])) {
        let mut batches = self.lock();
        let Batches {
            queue,
            next_query,
            next_token,
        } = &mut *batches;
        let mut left = count;
        while left > 0 {
            let Some(batch) = queue.front() else {
                return;
            };
            if let Some(&tokens) = batch.token_counts.get(*next_query) {
                let end = (*next_token + tokens as usize).min(batch.vertices.len());
                each(&batch.vertices[*next_token..end]);
                *next_query += 1;
                *next_token = end;
                left -= 1;
            }
            if *next_query >= batch.token_counts.len() {
                queue.pop_front();
                (*next_query, *next_token) = (0, 0);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Batches> {
        // Nothing panics while holding the lock; a poisoned log still holds whole batches.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(counts: &[u32], vertices: &[u32]) -> QueryBatch {
        QueryBatch {
            queries: Vec::new(),
            packed_tokens: Some(PackedTokenQueries {
                first_query_id: 0,
                token_counts: counts.to_vec(),
                vertices: vertices.to_vec(),
            }),
        }
    }

    #[test]
    fn queries_come_out_in_order_across_batches() {
        let log = QueryLog::default();
        log.push(&batch(&[2, 0], &[3, 1]));
        log.push(&batch(&[1], &[7]));
        let mut seen = Vec::new();
        log.take(2, |tokens| seen.push(tokens.to_vec()));
        log.take(5, |tokens| seen.push(tokens.to_vec()));
        assert_eq!(seen, vec![vec![3, 1], vec![], vec![7]]);
    }
}
