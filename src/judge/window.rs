//! The classes of 64 input bytes at once, as bit masks (bit `i` for byte `i`): which are
//! decimal digits and which are whitespace. The bulk reader finds every number of a window
//! from them, so a number's position does not wait for the previous number's length.

use super::digits::is_separator;

/// Bytes classified at once.
pub(super) const WINDOW: usize = 64;

/// A window's digits and whitespace; any other byte is in neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Classes {
    pub(super) digits: u64,
    pub(super) spaces: u64,
}

/// The classes of `window`'s bytes (SSE2 on x86_64, which every x86_64 processor has).
#[inline]
pub(super) fn classify(window: &[u8; WINDOW]) -> Classes {
    #[cfg(target_arch = "x86_64")]
    {
        sse2::classify(window)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        classify_bytes(window)
    }
}

/// The classes one byte at a time: elsewhere than on x86_64, and the tests' reference.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_bytes(window: &[u8; WINDOW]) -> Classes {
    let (mut digits, mut spaces) = (0u64, 0u64);
    for (i, &byte) in window.iter().enumerate() {
        digits |= u64::from(byte.is_ascii_digit()) << i;
        spaces |= u64::from(is_separator(byte)) << i;
    }
    Classes { digits, spaces }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_cmplt_epi8, _mm_loadu_si128,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    use super::{Classes, WINDOW};

    /// Bytes in `low..=high` (signed compares: bytes from 0x80 are negative, so in no range of
    /// ASCII bytes).
    ///
    /// # Safety
    /// Needs SSE2, which every x86_64 processor has.
    #[inline(always)]
    unsafe fn within(bytes: __m128i, low: u8, high: u8) -> __m128i {
        // SAFETY: register operations only; SSE2 is there (the caller's contract).
        unsafe {
            _mm_and_si128(
                _mm_cmpgt_epi8(bytes, _mm_set1_epi8(low as i8 - 1)),
                _mm_cmplt_epi8(bytes, _mm_set1_epi8(high as i8 + 1)),
            )
        }
    }

    #[inline]
    pub(super) fn classify(window: &[u8; WINDOW]) -> Classes {
        let (mut digits, mut spaces) = (0u64, 0u64);
        for lane in 0..WINDOW / 16 {
            // SAFETY: SSE2 is part of the x86_64 baseline. The 16 bytes loaded from
            // `16 * lane` are inside `window` (`lane < 4`), and the load needs no alignment.
            let (digit, space) = unsafe {
                let bytes = _mm_loadu_si128(window.as_ptr().add(16 * lane).cast());
                // ' ', or '\t' '\n' 0x0b 0x0c '\r' (9 to 13): what `is_separator` takes.
                let space = _mm_or_si128(
                    _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b' ' as i8)),
                    within(bytes, b'\t', b'\r'),
                );
                (
                    _mm_movemask_epi8(within(bytes, b'0', b'9')),
                    _mm_movemask_epi8(space),
                )
            };
            digits |= u64::from(digit as u16) << (16 * lane);
            spaces |= u64::from(space as u16) << (16 * lane);
        }
        Classes { digits, spaces }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_agrees_with_a_byte_loop_on_every_byte_value() {
        let mut generator = crate::generate::Rng::new(0x9e37_79b9_7f4a_7c15u64);
        for round in 0..20_000u32 {
            let window: [u8; WINDOW] = std::array::from_fn(|i| {
                let rng = generator.next_u64();
                // Every byte value in turn, then random windows of digits, whitespace and
                // anything else.
                if round < 4 {
                    (round as usize * WINDOW + i) as u8
                } else {
                    match rng % 4 {
                        0 => rng as u8,
                        1 => b" \t\n\r\x0b\x0c"[(rng >> 8) as usize % 6],
                        _ => b'0' + (rng >> 8) as u8 % 10,
                    }
                }
            });
            assert_eq!(classify(&window), classify_bytes(&window), "{window:?}");
        }
    }
}
