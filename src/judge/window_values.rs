//! The values of a window's numbers, all of them before any is used: the bulk reader of
//! token lists converts a window's numbers here, then walks the lists through them.
//!
//! Where AVX-512 (with VBMI2) is there and every number of the window has at most four
//! digits, as in the judge files of graphs under 10,000 vertices, sixteen numbers are
//! converted at once: each number's digits are permuted into a four-byte lane of a register
//! and the lanes multiplied out together; with up to eight digits (graphs under 10^8
//! vertices), eight numbers at once in eight-byte lanes. Elsewhere, and for longer numbers,
//! each number is converted on its own.

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

/// Whether every number ending at a bit of `ends` has at most `MOST` digits (`digits` marks
/// the window's digit bytes; a number is a run of them).
#[inline(always)]
pub(super) fn longest_at_most<const MOST: u32>(digits: u64, ends: u64) -> bool {
    if ends == 0 {
        return true;
    }
    // Bits ending a run of more than MOST digits, up to the last complete number.
    let mut long = digits;
    for shift in 1..=MOST {
        long &= digits << shift;
    }
    long & (u64::MAX >> ends.leading_zeros()) == 0
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

#[cfg(target_arch = "x86_64")]
pub(super) mod avx512 {
    use std::arch::x86_64::{
        __m512i, _mm256_storeu_si256, _mm512_add_epi8, _mm512_add_epi64, _mm512_cmpge_epi8_mask,
        _mm512_cmpge_epu32_mask, _mm512_cvtepi64_epi32, _mm512_loadu_si512, _mm512_madd_epi16,
        _mm512_maddubs_epi16, _mm512_maskz_compress_epi8, _mm512_maskz_permutexvar_epi8,
        _mm512_mul_epu32, _mm512_permutexvar_epi8, _mm512_set1_epi8, _mm512_set1_epi16,
        _mm512_set1_epi32, _mm512_set1_epi64, _mm512_srli_epi64, _mm512_storeu_si512,
        _mm512_sub_epi8,
    };

    use super::{MOST_NUMBERS, WINDOW, WindowValues, longest_at_most};

    /// Whether this processor has what [`WindowValues::convert_vector`] needs (std caches
    /// the answer).
    pub(in crate::judge) fn available() -> bool {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vbmi")
            && is_x86_feature_detected!("avx512vbmi2")
            && is_x86_feature_detected!("bmi1")
            && is_x86_feature_detected!("lzcnt")
            && is_x86_feature_detected!("popcnt")
    }

    /// Byte `i` of a register is `i` (`WIDTH` 0), or for lanes of `WIDTH` bytes, the lane
    /// (`PLACE` false) or the place in it counted from its last byte (`PLACE` true: 0 for
    /// the last byte, -1 before it, and so on).
    const fn bytes<const WIDTH: usize, const PLACE: bool>() -> [u8; WINDOW] {
        let mut bytes = [0; WINDOW];
        let mut i = 0;
        while i < WINDOW {
            bytes[i] = match (WIDTH, PLACE) {
                (0, _) => i as u8,
                (_, false) => (i / WIDTH) as u8,
                (_, true) => ((i % WIDTH) as u8).wrapping_sub(WIDTH as u8 - 1),
            };
            i += 1;
        }
        bytes
    }

    /// Byte `i` is `i`.
    const OFFSETS: [u8; WINDOW] = bytes::<0, false>();
    /// Byte `4k + j` is `k`: which of sixteen numbers a byte holds a digit of; and `j - 3`:
    /// its place, the lane's four digits ending at the number's last digit.
    const LANES_4: [u8; WINDOW] = bytes::<4, false>();
    const PLACES_4: [u8; WINDOW] = bytes::<4, true>();
    /// The same for eight numbers of eight digits.
    const LANES_8: [u8; WINDOW] = bytes::<8, false>();
    const PLACES_8: [u8; WINDOW] = bytes::<8, true>();

    /// A 64-byte register from memory.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load(bytes: &[u8; WINDOW]) -> __m512i {
        // SAFETY: 64 bytes are read from a 64-byte array; the load needs no alignment.
        unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
    }

    impl WindowValues {
        /// [`WindowValues::convert`], many numbers at once, for a window whose complete
        /// numbers have at most eight digits; false (nothing converted) for any other.
        /// `digits` marks the window's digit bytes.
        #[inline]
        #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,bmi1,lzcnt,popcnt")]
        pub(in crate::judge) fn convert_vector(
            &mut self,
            window: &[u8; WINDOW],
            digits: u64,
            starts: u64,
            ends: u64,
            vertex_count: u32,
        ) -> bool {
            let four = longest_at_most::<4>(digits, ends);
            if !four && !longest_at_most::<8>(digits, ends) {
                return false;
            }
            let offsets = load(&OFFSETS);
            let values = _mm512_sub_epi8(load(window), _mm512_set1_epi8(b'0' as i8));
            // Byte k: where number k starts, and where it ends.
            let first = _mm512_maskz_compress_epi8(starts, offsets);
            let last = _mm512_maskz_compress_epi8(ends, offsets);
            // Lane k's byte j reads the window at last_k - width + 1 + j, or is 0 before the
            // number's first digit (a signed compare: the offset may be below 0).
            let lane_digits = |lanes: __m512i, places: __m512i| {
                let at = _mm512_add_epi8(_mm512_permutexvar_epi8(lanes, last), places);
                let inside = _mm512_cmpge_epi8_mask(at, _mm512_permutexvar_epi8(lanes, first));
                let lane_digits = _mm512_maskz_permutexvar_epi8(inside, at, values);
                // Pairs (tens and units), then fours, in 32-bit lanes.
                let pairs = _mm512_maddubs_epi16(lane_digits, _mm512_set1_epi16(0x010a));
                _mm512_madd_epi16(pairs, _mm512_set1_epi32(0x0001_0064))
            };
            let len = ends.count_ones() as usize;
            let limit = _mm512_set1_epi32(vertex_count as i32);
            let mut large = 0u64;
            let out = self.values.as_mut_ptr();
            if four {
                let (lanes, places) = (load(&LANES_4), load(&PLACES_4));
                for round in 0..len.div_ceil(16) {
                    let lanes = _mm512_add_epi8(lanes, _mm512_set1_epi8(16 * round as i8));
                    let fours = lane_digits(lanes, places);
                    large |= u64::from(_mm512_cmpge_epu32_mask(fours, limit)) << (16 * round);
                    // SAFETY: 16 values from 16 * round < MOST_NUMBERS, inside `self.values`.
                    unsafe { _mm512_storeu_si512(out.add(16 * round).cast(), fours) };
                }
            } else {
                let (lanes, places) = (load(&LANES_8), load(&PLACES_8));
                for round in 0..len.div_ceil(8) {
                    let lanes = _mm512_add_epi8(lanes, _mm512_set1_epi8(8 * round as i8));
                    let fours = lane_digits(lanes, places);
                    // A 64-bit lane holds the high four digits, then the low four.
                    let high = _mm512_mul_epu32(fours, _mm512_set1_epi64(10_000));
                    let eights = _mm512_add_epi64(high, _mm512_srli_epi64(fours, 32));
                    let eights = _mm512_cvtepi64_epi32(eights);
                    let in_wide = std::arch::x86_64::_mm512_castsi256_si512(eights);
                    let mask = _mm512_cmpge_epu32_mask(in_wide, limit) & 0xff;
                    large |= u64::from(mask) << (8 * round);
                    // SAFETY: 8 values from 8 * round < MOST_NUMBERS, inside `self.values`.
                    unsafe { _mm256_storeu_si256(out.add(8 * round).cast(), eights) };
                }
            }
            // SAFETY: 64 bytes into the 64-byte `self.last_digits`.
            unsafe { _mm512_storeu_si512(self.last_digits.as_mut_ptr().cast(), last) };
            // The lanes past the last number hold whatever, and so do their bits.
            (self.len, self.large) = (len, large & ((1 << len) - 1));
            true
        }
    }

    const _: () = assert!(MOST_NUMBERS.is_multiple_of(16));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::window::{Classes, classify};

    /// Starts and ends of the complete numbers of a window that is all digits and spaces.
    fn numbers(span: &[u8; SPAN]) -> (u64, u64, u64) {
        let window = span.first_chunk::<WINDOW>().expect("SPAN > WINDOW");
        let Classes { digits, .. } = classify(window);
        (
            digits,
            digits & !(digits << 1),
            digits & !(digits >> 1) & (u64::MAX >> 1),
        )
    }

    #[test]
    fn longest_at_most_finds_any_complete_number_over_the_length() {
        let span = |text: &str| {
            let mut span = [b' '; SPAN];
            span[..text.len()].copy_from_slice(text.as_bytes());
            span
        };
        let short = |text: &str| {
            let (digits, _, ends) = numbers(&span(text));
            longest_at_most::<4>(digits, ends)
        };
        assert!(short("1 22 333 4444 "));
        assert!(!short("1 22 55555 4444 "));
        assert!(short(""));
        // A long run the window cuts is not complete: the next window converts it.
        let mut cut = " ".repeat(WINDOW - 6);
        cut.push_str("7 12345");
        assert!(short(&cut));
        let (digits, _, ends) = numbers(&span("12345678 1"));
        assert!(longest_at_most::<8>(digits, ends));
        let (digits, _, ends) = numbers(&span("1 123456789 1"));
        assert!(!longest_at_most::<8>(digits, ends));
    }

    #[test]
    fn scalar_conversion_reads_every_complete_number() {
        let mut span = [b' '; SPAN];
        let text = b"0 7 12 999 12345678 4294967295 4294967296 5";
        span[..text.len()].copy_from_slice(text);
        let (_, starts, ends) = numbers(&span);
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

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn vector_conversion_agrees_with_the_scalar_one() {
        if !avx512::available() {
            eprintln!("skipped: no AVX-512 VBMI2 here");
            return;
        }
        let mut generator = crate::generate::Rng::new(0x2545_f491_4f6c_dd1d);
        let (mut converted, mut refused) = (0, 0);
        for round in 0..100_000 {
            // Numbers of 1 to `most` digits (leading zeros too) between runs of 1 to 3
            // spaces, starting anywhere, the last one often cut by the window's end.
            let most = [4, 8, 9][round % 3];
            let mut span = [b' '; SPAN];
            let mut at = (generator.next_u64() % 4) as usize;
            while at < SPAN {
                let digits = 1 + (generator.next_u64() % most) as usize;
                for byte in span.iter_mut().skip(at).take(digits) {
                    *byte = b'0' + (generator.next_u64() % 10) as u8;
                }
                at += digits + 1 + (generator.next_u64() % 3) as usize;
            }
            let (digits, starts, ends) = numbers(&span);
            let vertex_count = [1, 5000, 50_000_000, u32::MAX][round % 4];
            let mut expected = WindowValues::new();
            expected.convert(&span, starts, ends, vertex_count);
            let mut got = WindowValues::new();
            let window = span.first_chunk::<WINDOW>().expect("SPAN > WINDOW");
            // SAFETY: the processor has the features (checked above).
            if !unsafe { got.convert_vector(window, digits, starts, ends, vertex_count) } {
                assert!(!longest_at_most::<8>(digits, ends), "round {round}");
                refused += 1;
                continue;
            }
            converted += 1;
            assert_eq!(got.len, expected.len, "round {round}");
            assert_eq!(
                got.values[..got.len],
                expected.values[..expected.len],
                "round {round}"
            );
            assert_eq!(got.large, expected.large, "round {round}");
            assert_eq!(
                got.last_digits[..got.len],
                expected.last_digits[..expected.len],
                "round {round}"
            );
        }
        assert!(
            converted > 60_000 && refused > 10_000,
            "{converted} {refused}"
        );
    }
}
