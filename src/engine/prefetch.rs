//! Software prefetch: asks the processor to start loading a cache line that a later iteration
//! will read, so that the wait for memory overlaps with the work in between. The engine's
//! passes over large graphs visit adjacency lists in dependency order, at random addresses,
//! and would otherwise wait for each cache miss in turn.

/// Hints that `slice[index]` will be read soon. Never faults and never changes what a program
/// computes: an index past the end is harmless (no load happens, only a hint). A no-op on
/// targets without a prefetch instruction in `core::arch`.
#[inline(always)]
pub(crate) fn prefetch<T>(slice: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let address = slice.as_ptr().wrapping_add(index).cast::<i8>();
        // SAFETY: `prefetch` is a hint: it never dereferences in a way that can fault or be
        // observed, whatever the address (SSE is part of the x86_64 baseline).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (slice, index);
    }
}
