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
#[inline(always)]
pub(crate) fn prefetch_list(offsets: &[u32], targets: &[u32], vertex: usize) {
    let start = offsets[vertex] as usize;
    let end = offsets[vertex + 1] as usize;
    let base = targets.as_ptr().cast::<u8>();
    let size = size_of::<u32>();
    let (mut line, last) = list_lines(base.addr() + start * size, base.addr() + end * size);
    loop {
        prefetch_pointer(base.with_addr(line));
        if line >= last {
            break;
        }
        line += LINE;
    }
}

/// The size of a cache line.
const LINE: usize = 64;

/// The first and the last cache line (their addresses) to prefetch for the bytes
/// `first_byte..end_byte`: every line they touch, at most [`LIST_LINES`]; the first line alone
/// when the range is empty.
#[inline(always)]
fn list_lines(first_byte: usize, end_byte: usize) -> (usize, usize) {
    let first = first_byte & !(LINE - 1);
    let last = (end_byte.max(first_byte + 1) - 1) & !(LINE - 1);
    (first, last.min(first + (LIST_LINES - 1) * LINE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_prefetched_line_by_line_up_to_the_cap() {
        // Ten u32s inside one line, and across a boundary.
        assert_eq!(list_lines(1024, 1064), (1024, 1024));
        assert_eq!(list_lines(1064, 1104), (1024, 1088));
        // An empty list still names its line, at a boundary too; a list ending on a boundary
        // stops before it.
        assert_eq!(list_lines(1048, 1048), (1024, 1024));
        assert_eq!(list_lines(1024, 1024), (1024, 1024));
        assert_eq!(list_lines(1024, 1152), (1024, 1088));
        // 100 u32s span seven lines; four are prefetched.
        assert_eq!(list_lines(1040, 1440), (1024, 1024 + 3 * 64));
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
