//! Software prefetch: asks the processor to start loading a cache line that a later iteration
//! will read, so that the wait for memory overlaps with the work in between. The engine's
//! passes over large graphs visit adjacency lists in dependency order, at random addresses,
//! and would otherwise wait for each cache miss in turn.

/// Hints that `slice[index]` will be read soon. Never faults and never changes what a program
/// computes: an index past the end is harmless (no load happens, only a hint). A no-op on
/// targets without a prefetch instruction in `core::arch`.
#[inline(always)]
pub(crate) fn prefetch<T>(slice: &[T], index: usize) {
    prefetch_pointer(slice.as_ptr().wrapping_add(index).cast());
}

/// Hints that the cache line holding `address` will be read soon (any address: see
/// [`prefetch`]).
#[inline(always)]
fn prefetch_pointer(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `prefetch` is a hint: it never dereferences in a way that can fault or be
        // observed, whatever the address (SSE is part of the x86_64 baseline).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = address;
    }
}

/// At most this many cache lines of an adjacency list are prefetched; a longer list is read
/// in order, which the processor's own prefetcher follows once it has seen a few lines.
const LIST_LINES: usize = 4;

/// Hints that `vertex`'s adjacency list (`targets[offsets[vertex]..offsets[vertex + 1]]`) will
/// be read soon: every cache line it spans, up to [`LIST_LINES`]. A list of ten `u32`s crosses
/// a line boundary more often than not, and prefetching its first line alone left the second
/// to miss when the list was read: on the benchmark DAG (10^6 vertices, 10^7 edges) the mex
/// pass took 53-57 ms with the first line prefetched and 32-33 ms with every line; with 40
/// successors a vertex, about 200 ms and 92-95 ms; a cap of 8 lines was slower than 4 with
/// 100 successors a vertex. Reads `offsets[vertex]` and `offsets[vertex + 1]`
/// (in bounds for a vertex of the graph).
///
/// Two lines are asked for without a branch (the second is the first again when the list
/// fits one line), the third and fourth only when the list reaches a third line: a loop over
/// the lines branched on each list's length, which the processor cannot predict, and each
/// miss of the guess threw away the loads in flight behind it. In alternated runs on the
/// benchmark DAG: Kahn's order 66.0-68.4 ms instead of 74.4-75.3 ms, the mex pass 27.7-28.8 ms
/// instead of 30.9-31.1 ms; on a wide DAG of the same size (rounds of 4,096 vertices), the
/// table on one thread 91.4-98.5 ms instead of 116-117 ms.
#[inline(always)]
pub(crate) fn prefetch_list(offsets: &[u32], targets: &[u32], vertex: usize) {
    let start = offsets[vertex] as usize;
    let end = offsets[vertex + 1] as usize;
    let base = targets.as_ptr().cast::<u8>();
    let size = size_of::<u32>();
    let (first_two, next_two) = list_lines(base.addr() + start * size, base.addr() + end * size);
    for address in first_two {
        prefetch_pointer(base.with_addr(address));
    }
    if let Some(next_two) = next_two {
        for address in next_two {
            prefetch_pointer(base.with_addr(address));
        }
    }
}

/// How far ahead in a visiting order [`prefetch_ahead`] asks for a vertex's CSR offsets, and
/// for its adjacency list (by then its offsets are in cache).
const OFFSETS_AHEAD: usize = 16;
const LIST_AHEAD: usize = 8;

/// What a pass that visits the vertices in `order` asks for at `position`: the offsets of the
/// vertex [`OFFSETS_AHEAD`] on, and the adjacency list of the one [`LIST_AHEAD`] on.
#[inline(always)]
pub(crate) fn prefetch_ahead(order: &[u32], position: usize, offsets: &[u32], targets: &[u32]) {
    if let Some(&ahead) = order.get(position + OFFSETS_AHEAD) {
        prefetch(offsets, ahead as usize);
    }
    if let Some(&ahead) = order.get(position + LIST_AHEAD) {
        prefetch_list(offsets, targets, ahead as usize);
    }
}

/// The size of a cache line.
const LINE: usize = 64;

/// Addresses in each cache line to prefetch for the bytes `first_byte..end_byte`, every line
/// they touch up to [`LIST_LINES`] (the first line alone when the range is empty): two
/// addresses always (the same line twice when the range fits one), two more when the range
/// reaches a third line.
#[inline(always)]
fn list_lines(first_byte: usize, end_byte: usize) -> ([usize; 2], Option<[usize; 2]>) {
    let first_line = first_byte & !(LINE - 1);
    let last_byte = end_byte.max(first_byte + 1) - 1;
    let first_two = [first_byte, last_byte.min(first_line + LINE)];
    let next_two = (last_byte >= first_line + 2 * LINE).then(|| {
        [
            first_line + 2 * LINE,
            last_byte.min(first_line + (LIST_LINES - 1) * LINE),
        ]
    });
    (first_two, next_two)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of the addresses that `list_lines` gives for a range.
    fn prefetched(first_byte: usize, end_byte: usize) -> Vec<usize> {
        let (first_two, next_two) = list_lines(first_byte, end_byte);
        let mut lines: Vec<usize> = first_two
            .into_iter()
            .chain(next_two.into_iter().flatten())
            .map(|address| address / LINE)
            .collect();
        lines.sort_unstable();
        lines.dedup();
        lines
    }

    #[test]
    fn a_list_is_prefetched_line_by_line_up_to_the_cap() {
        // Every start within two lines, every length up to past the cap: the lines asked for
        // are those the list touches, at most four (the first line of an empty list).
        for first_byte in (1024..1152).step_by(4) {
            for len in 0..80 {
                let end_byte = first_byte + 4 * len;
                let last_byte = end_byte.max(first_byte + 1) - 1;
                let touched: Vec<usize> = (first_byte / LINE..=last_byte / LINE)
                    .take(LIST_LINES)
                    .collect();
                assert_eq!(
                    prefetched(first_byte, end_byte),
                    touched,
                    "{first_byte}+{len}"
                );
            }
        }
        // Ten u32s inside one line, and across a boundary; 100 u32s span seven lines.
        assert_eq!(prefetched(1024, 1064), [16]);
        assert_eq!(prefetched(1064, 1104), [16, 17]);
        assert_eq!(prefetched(1040, 1440), [16, 17, 18, 19]);
    }

    #[test]
    fn every_list_of_a_graph_can_be_prefetched() {
        // Empty lists, the last vertex, and a list longer than the cap.
        let offsets = [0u32, 0, 3, 3, 103];
        let targets = vec![1u32; 103];
        for vertex in 0..offsets.len() - 1 {
            prefetch_list(&offsets, &targets, vertex);
        }
        prefetch_list(&[0, 0], &[], 0);
    }
}
