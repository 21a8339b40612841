//! Transparent huge pages for a large graph's CSR arrays. The passes of an analysis read
//! adjacency lists at random; with 4 KiB pages, hundreds of megabytes of targets miss the TLB
//! on nearly every read, and each miss walks the page tables (twice over in a virtual
//! machine). Backed by 2 MiB pages, the same reads miss the TLB far less. (The analysis's
//! own arrays, a tenth of the size, showed no gain from it, and keep their pages.)
//!
//! Linux backs memory with huge pages on its own only when the system setting is `always`;
//! in the common `madvise` setting it does so for ranges the program marks, which is what
//! [`advise`] does. It is a hint: it never changes what a program computes, fails quietly,
//! and does nothing elsewhere.

/// Arrays smaller than this keep their pages: the TLB covers them, and a huge page would
/// hold memory an array does not use. It is `grundy-server`'s bound for a mapping of its own
/// (`crate::allocator::SERVICE`): a smaller block may come from malloc's heaps, where the
/// advice would outlive the array and cover the small blocks that come after it.
const MIN_BYTES: usize = 8 << 20;

/// Asks the kernel to back the 2 MiB-aligned part of `array`'s allocation (its whole
/// capacity) with huge pages. Pages already touched stay as they are until the kernel
/// collapses them in the background, so call it before filling the array: after
/// [`with_capacity`], or after a growth, for the new room.
pub(crate) fn advise<T>(array: &Vec<T>) {
    let bytes = array.capacity() * size_of::<T>();
    if bytes < MIN_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = array.as_ptr() as usize;
        let first = start.next_multiple_of(HUGE);
        let end = (start + bytes) / HUGE * HUGE;
        if end > first {
            // SAFETY: the range lies inside `array`'s live allocation, and MADV_HUGEPAGE only
            // changes how the kernel backs it, never its contents or whether it is mapped.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// A vector with room for `len` elements, advised for huge pages (see [`advise`]).
pub(crate) fn with_capacity<T>(len: usize) -> Vec<T> {
    let array = Vec::with_capacity(len);
    advise(&array);
    array
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The `VmFlags` of the mapping that holds `address`, from `/proc/self/smaps`.
    fn vm_flags(address: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().unwrap_or("");
            if let Some((low, high)) = range.split_once('-')
                && let (Ok(low), Ok(high)) = (
                    usize::from_str_radix(low, 16),
                    usize::from_str_radix(high, 16),
                )
            {
                inside = (low..high).contains(&address);
                continue;
            }
            if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                return Some(flags.trim().to_string());
            }
        }
        None
    }

    #[test]
    fn large_arrays_are_advised_and_keep_their_contents() {
        let mut array: Vec<u32> = with_capacity(8 << 20);
        array.extend(0..8 << 20);
        assert!(array.iter().enumerate().all(|(i, &v)| v == i as u32));
        // Only where the kernel has transparent huge pages does the advice take.
        if std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
            let inner = (array.as_ptr() as usize).next_multiple_of(2 << 20) + (2 << 20);
            let flags = vm_flags(inner).expect("the array's mapping is listed");
            assert!(flags.split(' ').any(|flag| flag == "hg"), "{flags}");
        }
    }
}
