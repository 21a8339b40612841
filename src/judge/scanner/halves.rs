//! The bulk read of token lists on two threads, for the long adjacency-list section of a large
//! graph: the buffered input is cut at a line break past its middle, and the part after it is
//! read on a second thread on the guess that a list starts there (one list a line, as judge
//! files and their generators write them). The guess is checked once the first part is read:
//! it must end exactly at that line, with room left in the budget for the second part's
//! lists. When it does not, the second part's work is dropped and this thread reads on from
//! where the first part ended. Either way the lists are those of the one-thread read. Each
//! refill is split once at most: after a list the careful path takes, the rest of the refill
//! is read on this thread.

use std::io::Read;

use super::Scanner;
use super::lists::{ListBudget, read_lists};

/// Buffered input below this is read on one thread: a second thread costs some tens of
/// microseconds to start, and a megabyte takes about a millisecond to read.
pub(super) const SPLIT_MIN_BYTES: usize = 1 << 20;

/// The buffer a large graph is read through: each refill is split once, so a larger buffer
/// starts fewer threads (some 8 ms of reading for one start).
pub(crate) const LARGE_GRAPH_BUFFER_BYTES: usize = 8 << 20;

/// What one part's read took: lists, ids and the budget's cost of them.
struct Part {
    lists: usize,
    consumed: usize,
    cost: u64,
}

impl Part {
    fn new(budget: &ListBudget, (lists, consumed): (usize, usize), ids: usize) -> Self {
        let cost = lists as u64 * budget.list_bytes + ids as u64 * budget.item_bytes;
        Self {
            lists,
            consumed,
            cost,
        }
    }
}

impl<R: Read> Scanner<R> {
    /// [`Scanner::read_buffered_lists`] on two threads when at least [`SPLIT_MIN_BYTES`] are
    /// buffered (see the module's note; tests set another threshold): the same lists, appended to `counts` and `vertices`.
    pub(crate) fn read_buffered_lists_in_halves(
        &mut self,
        vertex_count: u32,
        budget: ListBudget,
        counts: &mut Vec<u32>,
        vertices: &mut Vec<u32>,
    ) -> usize {
        let buffer = &self.buffer[..self.len];
        let from = self.pos;
        let fresh = self.split_refill != Some(self.buffer_offset);
        let split = (fresh && buffer.len() - from >= self.split_min_bytes && budget.lists > 1)
            .then(|| {
                let middle = from + (buffer.len() - from) / 2;
                let line = buffer[middle..].iter().position(|&byte| byte == b'\n')?;
                Some(middle + line + 1)
            })
            .flatten();
        let Some(split) = split else {
            return self.read_buffered_lists(vertex_count, budget, counts, vertices);
        };
        self.split_refill = Some(self.buffer_offset);
        #[cfg(test)]
        {
            self.halves_tried += 1;
        }
        let (mut second_counts, mut second_vertices) = std::mem::take(&mut self.spare);
        second_counts.clear();
        second_vertices.clear();
        let ids_before = vertices.len();
        let (first, second) = std::thread::scope(|scope| {
            let second = std::thread::Builder::new().spawn_scoped(scope, || {
                let read = read_lists(
                    buffer,
                    split,
                    vertex_count,
                    budget,
                    &mut second_counts,
                    &mut second_vertices,
                );
                Part::new(&budget, read, second_vertices.len())
            });
            let read = read_lists(
                &buffer[..split],
                from,
                vertex_count,
                budget,
                counts,
                vertices,
            );
            let first = Part::new(&budget, read, vertices.len() - ids_before);
            let second = match second {
                Ok(second) => second
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                // No second thread to be had: its part is read next, on this one.
                Err(_) => Part {
                    lists: 0,
                    consumed: split,
                    cost: 0,
                },
            };
            (first, second)
        });
        let guessed = first.lists < budget.lists
            && buffer[first.consumed..split]
                .iter()
                .all(|&byte| super::super::digits::is_separator(byte))
            && first.lists + second.lists <= budget.lists
            && first.cost + second.cost <= budget.bytes;
        let lists = if guessed {
            counts.extend_from_slice(&second_counts);
            vertices.extend_from_slice(&second_vertices);
            self.advance_over(second.consumed.max(split));
            #[cfg(test)]
            {
                self.halves_kept += 1;
            }
            first.lists + second.lists
        } else {
            self.advance_over(first.consumed);
            let rest = ListBudget {
                lists: budget.lists - first.lists,
                bytes: budget.bytes - first.cost,
                ..budget
            };
            first.lists + self.read_buffered_lists(vertex_count, rest, counts, vertices)
        };
        self.spare = (second_counts, second_vertices);
        lists
    }
}
