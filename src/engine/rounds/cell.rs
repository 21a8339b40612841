//! A vertex's cell in the table the threads fill: the value alone, or with the remoteness.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU8, AtomicU32};

/// A vertex's cell in the table the threads fill: `remoteness << 8 | value` in an `AtomicU32`
/// when the remotenesses are wanted, the value alone in an `AtomicU8` when they are not.
pub(super) trait Cell: Send + Sync + Sized {
    /// Whether the cell keeps the remoteness.
    const REMOTENESS: bool;
    /// A fresh cell.
    fn new() -> Self;
    /// `remoteness << 8 | value` (the remoteness 0 when it is not kept).
    fn read(&self) -> u32;
    /// Stores `value` (below 256) and, if kept, `remoteness`.
    fn write(&self, remoteness: u32, value: u32);
    /// `bytes` as cells, when a cell is one byte: an array of bytes that has served its
    /// purpose then holds a copy of the table, or the values in Kahn order.
    fn in_bytes(bytes: &[AtomicU8]) -> Option<&[Self]>;
    /// Stores what `other` holds.
    #[inline(always)]
    fn copy(&self, other: &Self) {
        let cell = other.read();
        self.write(cell >> 8, cell & 0xFF);
    }
}

impl Cell for AtomicU32 {
    const REMOTENESS: bool = true;

    fn new() -> Self {
        AtomicU32::new(0)
    }

    #[inline(always)]
    fn read(&self) -> u32 {
        self.load(Relaxed)
    }

    #[inline(always)]
    fn write(&self, remoteness: u32, value: u32) {
        self.store(remoteness << 8 | value, Relaxed);
    }

    fn in_bytes(_: &[AtomicU8]) -> Option<&[Self]> {
        None
    }
}

impl Cell for AtomicU8 {
    const REMOTENESS: bool = false;

    fn new() -> Self {
        AtomicU8::new(0)
    }

    #[inline(always)]
    fn read(&self) -> u32 {
        u32::from(self.load(Relaxed))
    }

    #[inline(always)]
    fn write(&self, _: u32, value: u32) {
        // g <= outdeg < 256.
        self.store(value as u8, Relaxed);
    }

    fn in_bytes(bytes: &[AtomicU8]) -> Option<&[Self]> {
        Some(bytes)
    }
}
