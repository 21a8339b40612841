//! Whole arrays of protobuf varints at once: the packed `repeated` fields of the hot messages
//! hold thousands of small numbers, and prost handles them one call (and one buffer check)
//! per element. These loops write an array through a stack buffer and read it from a byte
//! slice with a one-byte fast path (its size, in one vectorisable pass: `size.rs`).
//!
//! Reading is exact for what it accepts and refuses (returns `None` for) everything unusual:
//! a varint longer than the loop handles, or one cut off by the end of the field. The caller
//! then decodes the whole message with prost, which gives the same value or the precise error.

use bytes::BufMut;

use super::size::len_u64;
use super::{shuffled, windows};

/// Bytes gathered on the stack before they are copied into the output buffer.
pub(super) const STAGE: usize = 8192;
/// Bytes [`put_packed_u32`] stores for one value at most (a spread varint in a `u64`).
const WORD: usize = 8;
// A block of [`BLOCK`] values written by shuffles fits in the room left after a flush check.
const _: () = assert!(2 * BLOCK + shuffled::WRITE_SLACK <= BLOCK * WORD);
// A short stage holds a block of spread values and a ten-byte varint after a flush check.
const _: () = assert!(SHORT_STAGE > BLOCK * WORD + MAX_VARINT);
/// Room a varint needs at most.
const MAX_VARINT: usize = 10;

/// Bytes gathered on the stack for a short column (at most [`SHORT_COLUMN`] values): a stage
/// is zeroed before it is used, and zeroing 8 KiB for a response of 64 queries took 8% of the
/// CPU of a server and its clients answering such batches.
const SHORT_STAGE: usize = 1024;
/// The most values of a column written through [`SHORT_STAGE`].
const SHORT_COLUMN: usize = 128;

/// Runs `write` over a zeroed stack stage of [`SHORT_STAGE`] bytes for a column of at most
/// [`SHORT_COLUMN`] values and of [`STAGE`] bytes otherwise, each with [`WORD`] bytes more of
/// room past its end (for [`put_packed_u32`]'s eight-byte stores).
#[inline(always)]
fn with_stage(values: usize, write: impl FnOnce(&mut [u8])) {
    if values <= SHORT_COLUMN {
        write(&mut [0u8; SHORT_STAGE + WORD]);
    } else {
        write(&mut [0u8; STAGE + WORD]);
    }
}

/// Writes `values` as consecutive varints into `buf`.
pub(super) fn put_packed(values: impl ExactSizeIterator<Item = u64>, buf: &mut impl BufMut) {
    with_stage(values.len(), |stage| {
        let room = stage.len() - WORD;
        let mut used = 0;
        for mut value in values {
            if used > room - MAX_VARINT {
                buf.put_slice(&stage[..used]);
                used = 0;
            }
            while value >= 0x80 {
                stage[used] = value as u8 | 0x80;
                value >>= 7;
                used += 1;
            }
            stage[used] = value as u8;
            used += 1;
        }
        buf.put_slice(&stage[..used]);
    });
}

/// Writes values that are each a one-byte varint (all under 0x80: the caller has counted one
/// byte a value) as their low bytes, a stage at a time in one vectorised pass.
pub(super) fn put_one_byte_values<T: Copy>(
    values: &[T],
    low_byte: impl Fn(T) -> u8,
    buf: &mut impl BufMut,
) {
    with_stage(values.len(), |stage| {
        let room = stage.len() - WORD;
        for chunk in values.chunks(room) {
            for (byte, &value) in stage.iter_mut().zip(chunk) {
                *byte = low_byte(value);
            }
            buf.put_slice(&stage[..chunk.len()]);
        }
    });
}

/// Writes `values` as consecutive varints into `buf`, without a branch per value: each is
/// spread into 7-bit groups with its continuation bits in one `u64`, and eight bytes are
/// stored where only its length counts. (A loop per byte mispredicted on every mix of one- and
/// two-byte values, the vertices of any graph over 128 vertices.)
///
/// A block of [`BLOCK`] values all under 128 (the vertices of a graph of up to 128 vertices,
/// or of a small part of a larger one) is written as their low bytes in one vectorised pass;
/// a block all under 2^14 takes a shorter spread of one or two bytes.
pub(super) fn put_packed_u32(values: &[u32], buf: &mut impl BufMut) {
    with_stage(values.len(), |stage| {
        let room = stage.len() - WORD;
        let mut used = 0;
        for block in values.chunks(BLOCK) {
            if used > room - BLOCK * WORD {
                buf.put_slice(&stage[..used]);
                used = 0;
            }
            let any = block.iter().fold(0, |any, &value| any | value);
            if any < 1 << 7 {
                for (byte, &value) in stage[used..used + block.len()].iter_mut().zip(block) {
                    *byte = value as u8;
                }
                used += block.len();
                continue;
            }
            if any < 1 << 14 {
                // One or two bytes each (the vertices of graphs of up to 16,384 vertices): eight
                // at a time by byte shuffles where the processor has them, the rest one by one.
                let (written, bytes) = shuffled::write_pairs(block, &mut stage[used..]);
                used += bytes;
                for &value in &block[written..] {
                    let long = u32::from(value >= 1 << 7);
                    let bytes = (value & 0x7f) | (long << 7) | ((value >> 7) << 8);
                    stage[used..used + 2].copy_from_slice(&(bytes as u16).to_le_bytes());
                    used += 1 + long as usize;
                }
                continue;
            }
            for &value in block {
                let (bytes, len) = spread_u32(value);
                stage[used..used + WORD].copy_from_slice(&bytes.to_le_bytes());
                used += len;
            }
        }
        buf.put_slice(&stage[..used]);
    });
}

/// Values (or bytes) looked at together by the one-byte paths of [`put_packed_u32`] and
/// [`read_packed_u32`].
const BLOCK: usize = 32;

/// The varint of `value` in the low bytes of a `u64` (first byte lowest) and its length.
#[inline]
fn spread_u32(value: u32) -> (u64, usize) {
    let value = u64::from(value);
    let len = len_u64(value);
    let groups = (value & 0x7f)
        | ((value << 1) & 0x7f00)
        | ((value << 2) & 0x7f_0000)
        | ((value << 3) & 0x7f00_0000)
        | ((value << 4) & 0x0f_0000_0000);
    // Every byte but the last carries the continuation bit.
    let continuation = 0x0000_0080_8080_8080 & ((1u64 << (8 * (len - 1))) - 1);
    (groups | continuation, len)
}

/// Writes one varint into `buf` (prost's, without the stack buffer `put_packed` fills).
pub(super) fn put(value: u64, buf: &mut impl BufMut) {
    prost::encoding::encode_varint(value, buf);
}

/// The bytes under 0x80 in `bytes`: every varint ends with exactly one, so this is the number
/// of values of a packed field, exactly. Eight bytes at a time, their high bits summed in
/// byte lanes (at most 255 words per lane sum), five times faster than a count per byte.
fn terminators(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const BYTE_PAIRS: u64 = 0x00ff_00ff_00ff_00ff;
    let (words, tail) = bytes.as_chunks::<8>();
    let mut total = tail.iter().filter(|&&byte| byte < 0x80).count();
    for block in words.chunks(255) {
        let mut lanes = 0u64;
        for word in block {
            lanes += (!u64::from_le_bytes(*word) >> 7) & ONES;
        }
        // Eight lanes of at most 255 into four of at most 510, then summed in the top 16 bits.
        let pairs = (lanes & BYTE_PAIRS) + ((lanes >> 8) & BYTE_PAIRS);
        total += (pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize;
    }
    total
}

/// Reads a packed field of `u32` varints, appending to `out`; `None` (with `out` in any
/// state) for a varint of more than four bytes (a value of 2^28 or more) or one cut off.
///
/// A block of [`BLOCK`] bytes all under 0x80 is [`BLOCK`] one-byte values, widened in one
/// vectorised pass. Where a block is not, the next one is looked at `8 * BLOCK` bytes later.
pub(super) fn read_packed_u32(bytes: &[u8], out: &mut Vec<u32>) -> Option<()> {
    // Exactly the values, and the room the shuffled reads store past them: without it, the
    // last chunks would grow `out` to twice its size, copying it.
    out.reserve(terminators(bytes) + shuffled::READ_SLACK);
    let mut at = 0;
    let mut next_block = 0;
    // One- and two-byte varints (values under 2^14: the vertices of graphs up to 16,384
    // vertices) without a branch on which: a mix of both lengths mispredicts one per value.
    while let Some(&[first, second]) = bytes.get(at..at + 2) {
        if at >= next_block {
            if let Some(block) = bytes.get(at..at + BLOCK)
                && block.iter().fold(0, |any, &byte| any | byte) < 0x80
            {
                out.extend(block.iter().map(|&byte| u32::from(byte)));
                at += BLOCK;
                next_block = at;
                continue;
            }
            // Mixed lengths: sixteen bytes at a time by byte shuffles, up to the first longer
            // varint (the vertices of a larger graph) or the last bytes, read below; the next
            // look is `8 * BLOCK` bytes later.
            let read = shuffled::read_pairs(&bytes[at..], out);
            at += read;
            next_block = at + 8 * BLOCK;
            if read > 0 {
                continue;
            }
        }
        if first & second & 0x80 != 0 {
            // Three or four bytes (the vertices of graphs over 16,384 vertices): whole windows
            // of varints of any length, then (near the end) one at a time.
            let read = windows::read_windows(&bytes[at..], out);
            if read > 0 {
                at += read;
                continue;
            }
            let (value, len) = read_long(&bytes[at..], 4)?;
            out.push(value as u32);
            at += len;
            continue;
        }
        let long = u32::from(first >> 7);
        let high = (u32::from(second) << 7) & (0u32.wrapping_sub(long) & 0x3f80);
        out.push(u32::from(first & 0x7f) | high);
        at += 1 + long as usize;
    }
    if let Some(&last) = bytes.get(at) {
        if last >= 0x80 {
            return None;
        }
        out.push(u32::from(last));
    }
    Some(())
}

/// Reads a packed field of `u64` varints (at most nine bytes each: values under 2^63),
/// appending to `out`.
pub(super) fn read_packed_u64(bytes: &[u8], out: &mut Vec<u64>) -> Option<()> {
    out.reserve(terminators(bytes));
    let mut at = 0;
    let mut next_block = 0;
    while let Some(&first) = bytes.get(at) {
        // A block of one-byte values (nim-sums under 128, most of them), widened in one
        // vectorised pass; where a block is not, the next one is looked at `8 * BLOCK` bytes
        // later.
        if at >= next_block {
            if let Some(block) = bytes.get(at..at + BLOCK)
                && block.iter().fold(0, |any, &byte| any | byte) < 0x80
            {
                out.extend(block.iter().map(|&byte| u64::from(byte)));
                at += BLOCK;
                next_block = at;
                continue;
            }
            next_block = at + 8 * BLOCK;
        }
        if first < 0x80 {
            out.push(u64::from(first));
            at += 1;
            continue;
        }
        let (value, len) = read_long(&bytes[at..], 9)?;
        out.push(value);
        at += len;
    }
    Some(())
}

/// Reads a packed field of enum values that are small non-negative numbers (one byte each,
/// as every `Outcome` is), appending to `out`.
pub(super) fn read_packed_small_i32(bytes: &[u8], out: &mut Vec<i32>) -> Option<()> {
    if bytes.iter().any(|&byte| byte >= 0x80) {
        return None;
    }
    out.extend(bytes.iter().map(|&byte| i32::from(byte)));
    Some(())
}

/// Reads one varint of at most `max_len` bytes from the start of `bytes`: its value and
/// length.
pub(super) fn read_long(bytes: &[u8], max_len: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (index, &byte) in bytes.iter().take(max_len).enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * index);
        if byte < 0x80 {
            return Some((value, index + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::size::{packed_len_i32, packed_len_u32, packed_len_u64};
    use proptest::prelude::*;
    use prost::encoding::{decode_varint, encode_varint, encoded_len_varint};

    /// `values` written one by one by prost: what every packed writer here must match.
    fn prost_packed(values: impl IntoIterator<Item = u64>) -> Vec<u8> {
        let mut bytes = Vec::new();
        for value in values {
            encode_varint(value, &mut bytes);
        }
        bytes
    }

    #[test]
    fn one_and_two_byte_blocks_write_their_edges_like_prost() {
        // The edges of the one- and two-byte blocks: 127 | 128 and 16,383 | 16,384, in whole
        // blocks and in blocks one value pushes past the path.
        let edges = [0u32, 1, 127, 128, 129, 255, 256, 16_383];
        let mut values: Vec<u32> = edges.iter().cycle().take(3 * BLOCK).copied().collect();
        values.extend(edges.iter().cycle().take(BLOCK - 1));
        values.push(16_384);
        values.extend(std::iter::repeat_n(127, BLOCK - 1));
        values.push(128);
        for len in 0..=values.len() {
            let mut ours = Vec::new();
            put_packed_u32(&values[..len], &mut ours);
            let theirs = prost_packed(values[..len].iter().map(|&value| u64::from(value)));
            assert_eq!(ours, theirs, "the first {len} values");
        }
    }

    #[test]
    fn reading_a_packed_column_does_not_grow_its_vector_twice_over() {
        // Two-byte values (the shuffled reads), as many as a large query batch holds: the
        // vector gets its room once, so the values are never copied to a larger one.
        let values: Vec<u32> = (0..100_000u32).map(|i| 128 + i % 16_000).collect();
        let mut bytes = Vec::new();
        put_packed_u32(&values, &mut bytes);
        let mut read = Vec::new();
        assert!(read_packed_u32(&bytes, &mut read).is_some());
        assert_eq!(read, values);
        assert!(
            read.capacity() <= values.len() + shuffled::READ_SLACK + 64,
            "capacity {} for {} values",
            read.capacity(),
            values.len()
        );
    }

    proptest! {
        #[test]
        fn sizes_and_writes_like_prost(values in proptest::collection::vec(any::<u64>(), 0..300)) {
            let mut ours = Vec::new();
            put_packed(values.iter().copied(), &mut ours);
            let narrow: Vec<u32> = values.iter().map(|&value| (value >> (value % 33)) as u32).collect();
            let mut narrow_ours = Vec::new();
            put_packed_u32(&narrow, &mut narrow_ours);
            let narrow_theirs = prost_packed(narrow.iter().map(|&value| u64::from(value)));
            prop_assert_eq!(narrow_ours, narrow_theirs);
            let theirs = prost_packed(values.iter().copied());
            prop_assert_eq!(&ours, &theirs);
            prop_assert_eq!(packed_len_u64(&values), theirs.len());
            for &value in &values {
                prop_assert_eq!(len_u64(value), encoded_len_varint(value));
            }
            let narrow: Vec<u32> = values.iter().map(|&value| value as u32).collect();
            let expected: usize = narrow.iter().map(|&v| encoded_len_varint(u64::from(v))).sum();
            prop_assert_eq!(packed_len_u32(&narrow), expected);
            let small: Vec<u64> = values.iter().map(|&value| value % 128).collect();
            prop_assert_eq!(packed_len_u64(&small), small.len());
            let mut small_ours = Vec::new();
            put_one_byte_values(&small, |value| value as u8, &mut small_ours);
            prop_assert_eq!(small_ours, prost_packed(small.iter().copied()));
            let enums: Vec<i32> = values.iter().map(|&value| value as i32).collect();
            let expected: usize = enums.iter().map(|&v| encoded_len_varint(v as i64 as u64)).sum();
            prop_assert_eq!(packed_len_i32(&enums), expected);
        }

        #[test]
        fn small_values_write_and_read_back_like_prost(
            runs in proptest::collection::vec((0usize..80, 0u32..3), 0..12),
            seed in any::<u32>(),
        ) {
            // Runs of one-byte values between runs of longer ones, across block boundaries.
            let mut values = Vec::new();
            let mut generator = crate::generate::Rng::new(u64::from(seed));
            for (len, width) in runs {
                for _ in 0..len {
                    let x = (generator.next_u64() >> 32) as u32;
                    values.push(x >> [25, 18, 4][width as usize]);
                }
            }
            let mut ours = Vec::new();
            put_packed_u32(&values, &mut ours);
            let theirs = prost_packed(values.iter().map(|&value| u64::from(value)));
            prop_assert_eq!(&ours, &theirs);
            let mut read = Vec::new();
            prop_assert!(read_packed_u32(&ours, &mut read).is_some());
            prop_assert_eq!(read, values);
        }

        #[test]
        fn small_u64_values_read_back_like_prost(
            runs in proptest::collection::vec((0usize..80, 0u32..3), 0..12),
            seed in any::<u32>(),
        ) {
            // Runs of one-byte values (whole blocks of them) between runs of longer ones.
            let mut values = Vec::new();
            let mut generator = crate::generate::Rng::new(u64::from(seed));
            for (len, width) in runs {
                for _ in 0..len {
                    values.push(generator.next_u64() >> [57, 40, 1][width as usize]);
                }
            }
            let bytes = prost_packed(values.iter().copied());
            let mut read = Vec::new();
            prop_assert!(read_packed_u64(&bytes, &mut read).is_some());
            prop_assert_eq!(read, values);
        }

        #[test]
        fn reads_values_of_every_length_like_prost(
            widths in proptest::collection::vec(0u32..6, 0..400),
            seed in any::<u32>(),
        ) {
            // One- to five-byte varints mixed, in runs long enough for whole windows; one of
            // five bytes (2^28 or more) is refused wherever it is.
            let mut generator = crate::generate::Rng::new(u64::from(seed));
            let values: Vec<u32> = widths
                .iter()
                .map(|&width| (generator.next_u64() >> 32) as u32 >> [25, 18, 11, 4, 4, 0][width as usize])
                .collect();
            let bytes = prost_packed(values.iter().map(|&value| u64::from(value)));
            let mut read = Vec::new();
            let accepted = read_packed_u32(&bytes, &mut read);
            if values.iter().all(|&value| value < 1 << 28) {
                prop_assert!(accepted.is_some());
                prop_assert_eq!(read, values);
            } else {
                prop_assert!(accepted.is_none());
            }
        }

        #[test]
        fn counts_the_values_of_any_bytes(
            bytes in proptest::collection::vec(any::<u8>(), 0..5000),
            skip in 0usize..8,
        ) {
            let bytes = &bytes[skip.min(bytes.len())..];
            prop_assert_eq!(terminators(bytes), bytes.iter().filter(|&&b| b < 0x80).count());
        }

        #[test]
        fn reads_what_it_accepts_like_prost(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Some((value, len)) = read_long(&bytes, 9) {
                let mut slice = &bytes[..];
                prop_assert_eq!(decode_varint(&mut slice).ok(), Some(value));
                prop_assert_eq!(bytes.len() - slice.len(), len);
            }
            let mut narrow = Vec::new();
            if read_packed_u32(&bytes, &mut narrow).is_some() {
                let mut slice = &bytes[..];
                let mut expected = Vec::new();
                while !slice.is_empty() {
                    expected.push(decode_varint(&mut slice).unwrap() as u32);
                }
                prop_assert_eq!(narrow, expected);
            }
        }
    }

    #[test]
    fn refuses_long_and_cut_varints() {
        assert_eq!(read_long(&[0x80, 0x80], 9), None);
        assert_eq!(read_long(&[0xff, 0xff, 0xff, 0xff, 0x01], 4), None);
        assert_eq!(
            read_long(&[0xff, 0xff, 0xff, 0x7f], 4),
            Some(((1 << 28) - 1, 4))
        );
        let mut out = Vec::new();
        assert_eq!(read_packed_u32(&[0x05, 0x80], &mut out), None);
        assert_eq!(
            read_packed_small_i32(&[0x01, 0x80, 0x01], &mut Vec::new()),
            None
        );
    }
}
