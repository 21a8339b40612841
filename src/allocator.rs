//! How much freed memory a grundy process keeps for reuse (glibc's malloc; elsewhere the
//! allocator's defaults stand).
//!
//! A judge run, on the client and on the server, allocates and frees some hundreds of
//! kilobytes per query batch on each of its threads. glibc's defaults give the top of a heap
//! back to the kernel whenever more than 128 KiB of it is free, so the next batch maps fresh
//! pages again: a page fault and a page of zeroes each, a quarter of a chess judge run's CPU
//! time in the kernel. Keeping some freed memory avoids that.

/// The allocator's settings for one kind of process.
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    /// A heap grows by this much more than it needs (`M_TOP_PAD`).
    pub pad_bytes: i32,
    /// Free memory at the top of a heap up to this much is kept (`M_TRIM_THRESHOLD`).
    pub keep_bytes: i32,
    /// Blocks from this size get a mapping of their own, given back when freed
    /// (`M_MMAP_THRESHOLD`, at most 32 MiB). Setting the two values above stops glibc from
    /// raising this threshold as large blocks are freed (its default behaviour), so it is set
    /// here too.
    pub own_mapping_bytes: i32,
}

/// The `grundy` command: one short process, which keeps what it frees (its heaps grow
/// 16 MiB at a time and keep up to 64 MiB free; only a large graph's arrays, from 32 MiB, are
/// mapped on their own).
pub const SHORT_RUN: Retention = Retention {
    pad_bytes: 16 << 20,
    keep_bytes: 64 << 20,
    own_mapping_bytes: 32 << 20,
};

/// `grundy-server`: long-lived, so it keeps less (heaps grow 4 MiB at a time and keep up to
/// 16 MiB free); a query batch's arrays and the buffers of a `PutGraph` chunk (4 MiB, as
/// `grundy` sends them) come from the heaps, and every block from 8 MiB (a large graph's
/// arrays) has a mapping of its own, given back as soon as it is freed, so that a large
/// graph's memory leaves with it. (With 4 MiB, each chunk's buffers were mapped afresh and
/// faulted in page by page: uploads of a 10^8-edge graph ran at 562-690 MB/s against
/// 615-807 MB/s with 8 MiB, in three alternated pairs.)
pub const SERVICE: Retention = Retention {
    pad_bytes: 4 << 20,
    keep_bytes: 16 << 20,
    own_mapping_bytes: 8 << 20,
};

/// Applies `retention` to this process. Call it first thing, before other threads start.
pub fn keep_freed_memory(retention: Retention) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets malloc's parameters. A value it refuses (it returns 0)
    // leaves that parameter as it was: a slower process, never a wrong one.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, retention.pad_bytes);
        libc::mallopt(libc::M_TRIM_THRESHOLD, retention.keep_bytes);
        libc::mallopt(libc::M_MMAP_THRESHOLD, retention.own_mapping_bytes);
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = retention;
}
