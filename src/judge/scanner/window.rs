//! A window onto a judge file mapped into memory: the scanner reads the bytes it shows in
//! place, and a refill moves it along the file instead of copying the next bytes into a
//! buffer. Its size is what a read of the owned buffer would take, so both read alike.

use memmap2::Mmap;
#[cfg(unix)]
use memmap2::UncheckedAdvice;

/// A mapped file's pages count in the process's resident memory once read: every this many
/// bytes read, the pages behind the window are given back (reading them again would fault
/// them in from the page cache), so that a file of any size holds a few megabytes resident,
/// as the owned buffer does.
pub(super) const RELEASE_BYTES: usize = 2 << 20;

/// A window of `size` bytes at `base` of a mapped file.
pub(super) struct MappedWindow {
    map: Mmap,
    /// Where the window starts in the file.
    base: usize,
    /// The window's size (it shows less at the end of the file).
    size: usize,
    /// The pages before this offset were given back (see [`RELEASE_BYTES`]).
    released: usize,
}

impl MappedWindow {
    /// The first `size` bytes of `map` (at least one).
    pub(super) fn new(map: Mmap, size: usize) -> Self {
        Self {
            map,
            base: 0,
            size: size.max(1),
            released: 0,
        }
    }

    /// The bytes the window shows (read for every byte the scanner indexes).
    #[inline]
    pub(super) fn bytes(&self) -> &[u8] {
        let end = self.map.len().min(self.base + self.size);
        &self.map[self.base..end]
    }

    /// The window's size, whatever is left of the file.
    pub(super) fn size(&self) -> usize {
        self.size
    }

    /// Starts the window `consumed` bytes further on, `size` bytes long.
    pub(super) fn resize(&mut self, consumed: usize, size: usize) {
        self.base += consumed;
        self.size = size;
    }

    /// Moves the window past the `read` bytes it showed; returns how many it shows now (0 at
    /// the end of the file).
    pub(super) fn advance(&mut self, read: usize) -> usize {
        self.base += read;
        self.release_behind();
        (self.map.len() - self.base).min(self.size)
    }

    /// Gives back the pages behind the window once [`RELEASE_BYTES`] have been read since the
    /// last time.
    #[cfg(unix)]
    fn release_behind(&mut self) {
        if self.base - self.released < RELEASE_BYTES {
            return;
        }
        // Up to the last 64 KiB boundary (in memory) before the window: with pages of up to
        // 64 KiB, a page dropped is never one the window still shows (with larger ones, the
        // window's first page would be read again from the file).
        let start = self.map.as_ptr() as usize;
        let end = (start + self.base) & !0xffff;
        let len = end.saturating_sub(start + self.released);
        // SAFETY: no slice of the window outlives a move (`advance` takes it mutably, as the
        // scanner's refill takes the scanner), and the range was read: the read-only private
        // mapping's pages are dropped, and a read of them would fault the file's bytes in
        // again.
        let _ = unsafe {
            self.map
                .unchecked_advise_range(UncheckedAdvice::DontNeed, self.released, len)
        };
        self.released += len;
    }

    /// Pages stay mapped where they cannot be given back this way.
    #[cfg(not(unix))]
    fn release_behind(&mut self) {}

    /// The bytes whose pages were given back.
    #[cfg(test)]
    pub(super) fn released(&self) -> usize {
        self.released
    }
}
