//! Varints of one to four bytes (the vertices of graphs over 16,384 vertices), read a 64-byte
//! window at a time for [`super::varint::read_packed_u32`].

/// Bytes [`read_windows`] looks at together.
const WINDOW: usize = 64;
/// Windows [`read_windows`] reads at most per call.
const WINDOWS: usize = 4;

/// Reads the `u32` varints of up to [`WINDOWS`] windows of [`WINDOW`] bytes at the start of
/// `bytes`, of one to four bytes each, and returns the bytes read: up to the end of the last
/// varint that ends in them, or up to a longer one. Zero when fewer than a window and a word
/// are left.
///
/// The ends of a window's varints (its bytes under 0x80) are found at once as a bit mask,
/// and each varint is then gathered from an eight-byte load at its start: the next start
/// comes from the mask, not from the value before, so the loads do not wait on each other
/// and nothing branches on a varint's length. (One byte at a time, a mix of three- and
/// four-byte values mispredicts the end of one in five; a length taken from each value's own
/// load chains them.)
pub(super) fn read_windows(bytes: &[u8], out: &mut Vec<u32>) -> usize {
    let mut at = 0;
    for _ in 0..WINDOWS {
        // A varint may start at the window's last byte: its word needs 8 bytes from there.
        let Some(window) = bytes.get(at..at + WINDOW + 7) else {
            break;
        };
        let mut ends = end_mask(window[..WINDOW].try_into().expect("a window"));
        let mut start = 0;
        // Gathered here, then appended at once: a push per value would store and reload the
        // vector's length, a chain through memory from each value to the next.
        let mut values = [0u32; WINDOW];
        let mut count = 0;
        while ends != 0 {
            let end = ends.trailing_zeros() as usize;
            let len = end + 1 - start;
            if len > 4 {
                out.extend_from_slice(&values[..count]);
                return at + start;
            }
            let word = u64::from_le_bytes(window[start..start + 8].try_into().expect("a word"));
            let kept = word & (u64::MAX >> (64 - 8 * len));
            let value = (kept & 0x7f)
                | ((kept >> 1) & 0x3f80)
                | ((kept >> 2) & 0x1f_c000)
                | ((kept >> 3) & 0x0fe0_0000);
            values[count] = value as u32;
            count += 1;
            start = end + 1;
            ends &= ends - 1;
        }
        out.extend_from_slice(&values[..count]);
        if start == 0 {
            // No varint ends in the window: one is longer than four bytes.
            break;
        }
        at += start;
    }
    at
}

/// Bit `i` set where `window[i]` is under 0x80 (ends a varint): the high bits of eight bytes
/// at a time gathered into a byte by one multiplication.
#[inline(always)]
fn end_mask(window: &[u8; WINDOW]) -> u64 {
    let (words, _) = window.as_chunks::<8>();
    let mut mask = 0u64;
    for (index, word) in words.iter().enumerate() {
        let ends = (!u64::from_le_bytes(*word) >> 7) & 0x0101_0101_0101_0101;
        mask |= (ends.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * index);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn finds_the_ends_of_a_window(window in proptest::array::uniform32(any::<u8>()), rest in proptest::array::uniform32(any::<u8>())) {
            let mut bytes = [0u8; WINDOW];
            bytes[..32].copy_from_slice(&window);
            bytes[32..].copy_from_slice(&rest);
            let expected = bytes
                .iter()
                .enumerate()
                .filter(|&(_, &byte)| byte < 0x80)
                .fold(0u64, |mask, (index, _)| mask | 1 << index);
            prop_assert_eq!(end_mask(&bytes), expected);
        }
    }
}
