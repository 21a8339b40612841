//! The values of a window's numbers, all of them before any is used: the bulk reader of
//! token lists converts a window's numbers here, one at a time, then walks the lists through
//! them.

use super::digits::{leading_value, leading_value_short};
use super::window::WINDOW;

/// What a window is read from: the window and the 8 bytes after it, so that the eight-byte
/// load of a number starting anywhere in the window stays in bounds.
pub(super) const SPAN: usize = WINDOW + 8;

/// Numbers a window holds at most: each is followed by a separator.
pub(super) const MOST_NUMBERS: usize = WINDOW / 2;

/// The longest number converted here (two eight-byte conversions); longer ones (leading
/// zeros, or too large) go to the careful path.
const MAX_DIGITS: usize = 16;

/// The complete numbers of a window, in order: their values and where each one's last digit
/// is (an offset in the window).
pub(super) struct WindowValues {
    /// The values, then room that a copy of 16 values from any of them may read.
    pub(super) values: [u32; MOST_NUMBERS + 16],
    pub(super) last_digits: [u8; WINDOW],
    /// Bit `k` is set when the `k`-th value is too large for a vertex id.
    pub(super) large: u64,
    /// How many were converted: all of the window's complete numbers, or those before the
    /// first that is too long to convert here, or over `u32::MAX` (neither a vertex id nor
    /// a list's length).
    pub(super) len: usize,
}

impl WindowValues {
    /// Where the number before the `k`-th one ends in the buffer (the window at `base`): just
    /// after its last digit.
    #[inline]
    pub(super) fn end(&self, base: usize, k: usize) -> usize {
        base + usize::from(self.last_digits[k - 1]) + 1
    }
}

impl WindowValues {
    pub(super) fn new() -> Self {
        Self {
            values: [0; MOST_NUMBERS + 16],
            last_digits: [0; WINDOW],
            large: 0,
            len: 0,
        }
    }

    /// Converts the numbers of `span`'s window that start at the bits of `starts` and end at
    /// the bits of `ends` (paired in order; `ends` may have fewer bits), one at a time, and
    /// marks those of at least `vertex_count`.
    #[inline(always)]
    pub(super) fn convert(
        &mut self,
        span: &[u8; SPAN],
        mut starts: u64,
        mut ends: u64,
        vertex_count: u32,
    ) {
        let (mut len, mut large) = (0, 0);
        while ends != 0 {
            let start = starts.trailing_zeros() as usize;
            let end = ends.trailing_zeros() as usize;
            starts &= starts - 1;
            ends &= ends - 1;
            let Some(value) = number(span, start, end + 1 - start) else {
                break;
            };
            let Ok(value) = u32::try_from(value) else {
                break;
            };
            self.values[len] = value;
            self.last_digits[len] = end as u8;
            large |= u64::from(value >= vertex_count) << len;
            len += 1;
        }
        (self.len, self.large) = (len, large);
    }
}

/// The value of the `digits` decimal digits at `start` of `span` (`start + digits <= WINDOW`),
/// or `None` past [`MAX_DIGITS`].
#[inline]
fn number(span: &[u8; SPAN], start: usize, digits: usize) -> Option<u64> {
    let word = |at: usize| {
        let bytes = span[at..].first_chunk::<8>().expect("inside the span");
        u64::from_le_bytes(*bytes)
    };
    if digits <= 4 {
        let bytes = span[start..].first_chunk::<4>().expect("inside the span");
        Some(leading_value_short(u32::from_le_bytes(*bytes), digits))
    } else if digits <= 8 {
        Some(leading_value(word(start), digits))
    } else if digits <= MAX_DIGITS {
        let high = leading_value(word(start), digits - 8);
        let low = leading_value(word(start + digits - 8), 8);
        Some(high * 100_000_000 + low)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::window::{Classes, classify};

    /// Starts and ends of the complete numbers of a window that is all digits and spaces.
    fn numbers(span: &[u8; SPAN]) -> (u64, u64) {
        let window = span.first_chunk::<WINDOW>().expect("SPAN > WINDOW");
        let Classes { digits, .. } = classify(window);
        (
            digits & !(digits << 1),
            digits & !(digits >> 1) & (u64::MAX >> 1),
        )
    }

    #[test]
    fn scalar_conversion_reads_every_complete_number() {
        let mut span = [b' '; SPAN];
        let text = b"0 7 12 999 12345678 4294967295 4294967296 5";
        span[..text.len()].copy_from_slice(text);
        let (starts, ends) = numbers(&span);
        let mut values = WindowValues::new();
        values.convert(&span, starts, ends, 1000);
        // A number over `u32::MAX` stops the conversion.
        assert_eq!(
            values.values[..values.len],
            [0, 7, 12, 999, 12_345_678, u32::MAX]
        );
        assert_eq!(values.last_digits[..values.len], [0, 2, 5, 9, 18, 29]);
        assert_eq!(values.large, 0b11_0000);
    }
}
