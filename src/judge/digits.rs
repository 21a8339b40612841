//! Decimal numbers at the start of a byte slice, the scanner's fast path: a few digits and
//! the separator after them, read without a branch per digit where eight bytes are at hand.

/// Digits that cannot overflow a `u64` whatever they are (`10^19 - 1 < 2^64`).
const SHORT_NUMBER_DIGITS: usize = 19;

/// The number at the start of `bytes` and its digit count, when it has at most
/// [`SHORT_NUMBER_DIGITS`] digits and a separator follows it inside `bytes`: parsed in one
/// pass, without overflow checks or locations. `None` for anything else (no digit, a number
/// reaching the end of `bytes`, a longer number, a bad byte after the digits), which the
/// caller's careful path handles and reports.
#[inline]
pub(super) fn short_number(bytes: &[u8]) -> Option<(u64, usize)> {
    if let Some(word) = bytes.first_chunk::<8>() {
        let (value, digits) = eight_digits(u64::from_le_bytes(*word));
        if digits < 8 {
            let complete = digits > 0 && is_separator(bytes[digits]);
            return complete.then_some((value, digits));
        }
    }
    let mut value = 0u64;
    let mut digits = 0;
    while digits < bytes.len().min(SHORT_NUMBER_DIGITS) {
        let digit = bytes[digits].wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value * 10 + u64::from(digit);
        digits += 1;
    }
    let complete = digits > 0 && digits < bytes.len() && is_separator(bytes[digits]);
    complete.then_some((value, digits))
}

/// The parity of the number at the start of `bytes` (true when odd) and its digit count,
/// under the conditions of [`short_number`]: the same numbers are taken, and the rest left to
/// the careful path. A number of up to seven digits is not converted: its last digit's byte
/// has the digit's parity (`'0'` is `0x30`).
#[inline]
pub(super) fn short_parity(bytes: &[u8]) -> Option<(bool, usize)> {
    if let Some(word) = bytes.first_chunk::<8>() {
        let digits = digit_count(u64::from_le_bytes(*word));
        if digits < 8 {
            if digits > 0 && is_separator(bytes[digits]) {
                return Some((bytes[digits - 1] & 1 == 1, digits));
            }
            return None;
        }
    }
    short_number(bytes).map(|(value, digits)| (value & 1 == 1, digits))
}

/// How many of eight input bytes (loaded little-endian: the first byte lowest) are leading
/// decimal digits, 0 to 8, without a branch per byte.
#[inline]
fn digit_count(word: u64) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    // A byte is a digit when it is 0x30..=0x39: high nibble 3, and still 3 after adding 6.
    // A carry out of a byte (only from one of 0xfa..) disturbs later bytes alone, and only the
    // first non-digit counts.
    let not_digit =
        ((word & HIGH) ^ (0x30 * ONES)) | ((word.wrapping_add(6 * ONES) & HIGH) ^ (0x30 * ONES));
    (not_digit.trailing_zeros() / 8) as usize
}

/// The leading decimal digits of eight input bytes (loaded little-endian: the first byte
/// lowest) and their count, 0 to 8, without a branch per byte: judge numbers are mostly a
/// few digits, and a loop per digit spent more time on its branches than on the digits.
#[inline]
fn eight_digits(word: u64) -> (u64, usize) {
    let digits = digit_count(word);
    if digits == 0 {
        return (0, 0);
    }
    (leading_value(word, digits), digits)
}

/// The value of the first `digits` bytes (1 to 8, all decimal digits) of eight input bytes
/// loaded little-endian; the bytes after them may be anything.
#[inline]
pub(super) fn leading_value(word: u64, digits: usize) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    debug_assert!((1..=8).contains(&digits));
    // The digits' values moved to the top bytes: the bytes below become leading zeros.
    // (With eight digits, the shift is by zero.) A byte after the digits below '0' borrows
    // only from the bytes after it, which the shift drops.
    let mut value = word.wrapping_sub(0x30 * ONES) << ((8 * (8 - digits)) % 64);
    // Pairs, then quads, then the eight digits (most significant digit in the lowest byte).
    // What the multiplications carry past bit 63 or into the odd lanes is masked away.
    value = value.wrapping_mul(10).wrapping_add(value >> 8) & 0x00ff_00ff_00ff_00ff;
    value = value.wrapping_mul(100).wrapping_add(value >> 16) & 0x0000_ffff_0000_ffff;
    value.wrapping_mul(10_000).wrapping_add(value >> 32) & 0xffff_ffff
}

/// [`leading_value`] for 1 to 4 digits, in the low four bytes of the word: one step fewer
/// (two multiplications instead of three), for the ids of graphs under 10,000 vertices and
/// the counts of short lists.
#[inline]
pub(super) fn leading_value_short(word: u32, digits: usize) -> u64 {
    const ONES: u32 = 0x0101_0101;
    debug_assert!((1..=4).contains(&digits));
    // As in `leading_value`: the digits moved to the top bytes, then pairs, then the four.
    let mut value = word.wrapping_sub(0x30 * ONES) << ((8 * (4 - digits)) % 32);
    value = value.wrapping_mul(10).wrapping_add(value >> 8) & 0x00ff_00ff;
    u64::from(value.wrapping_mul(100).wrapping_add(value >> 16) & 0xffff)
}

pub(super) fn is_separator(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_digits_agrees_with_a_digit_loop() {
        let mut generator = crate::generate::Rng::new(0x9e37_79b9_7f4a_7c15u64);
        for round in 0..200_000 {
            let rng = generator.next_u64();
            // Mostly digits and separators, sometimes any byte.
            let bytes: [u8; 8] = std::array::from_fn(|i| {
                let r = (rng >> (i * 8)) as u8;
                match (round + i) % 5 {
                    0 => r,
                    1 => b" \n"[usize::from(r & 1)],
                    _ => b'0' + r % 10,
                }
            });
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            let value = bytes[..digits]
                .iter()
                .fold(0u64, |v, &b| v * 10 + u64::from(b - b'0'));
            assert_eq!(digit_count(u64::from_le_bytes(bytes)), digits, "{bytes:?}");
            if (1..=4).contains(&digits) {
                let low = u32::from_le_bytes(bytes[..4].try_into().unwrap());
                assert_eq!(leading_value_short(low, digits), value, "{bytes:?}");
            }
            let got = eight_digits(u64::from_le_bytes(bytes));
            assert_eq!(
                got,
                (if digits == 0 { 0 } else { value }, digits),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn short_parity_takes_what_short_number_takes_with_its_parity() {
        let mut generator = crate::generate::Rng::new(0x2545_f491_4f6c_dd1du64);
        for round in 0..200_000usize {
            let rng = generator.next_u64();
            // Numbers of 0 to 23 digits, then a separator or another byte, in 1 to 30 bytes.
            let len = 1 + (rng % 30) as usize;
            let digits = ((rng >> 8) % 24) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|i| {
                    let r = (rng >> ((i * 7) % 56)) as u8;
                    match i.cmp(&digits) {
                        std::cmp::Ordering::Less => b'0' + r % 10,
                        std::cmp::Ordering::Equal if round % 3 == 0 => r,
                        _ => b" \n\t"[usize::from(r % 3)],
                    }
                })
                .collect();
            let expected = short_number(&bytes).map(|(value, digits)| (value & 1 == 1, digits));
            assert_eq!(short_parity(&bytes), expected, "{bytes:?}");
        }
    }
}
