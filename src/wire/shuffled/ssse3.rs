//! The SSSE3 readers and writers of [`super`]: sixteen bytes a step, lanes moved together by
//! byte shuffles from the tables of every 8-bit mask.

use std::arch::x86_64::{
    __m128i, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi16, _mm_cmpgt_epi16, _mm_loadu_si128,
    _mm_movemask_epi8, _mm_or_si128, _mm_packs_epi16, _mm_packs_epi32, _mm_set1_epi16,
    _mm_setzero_si128, _mm_shuffle_epi8, _mm_slli_epi16, _mm_slli_si128, _mm_srli_epi16,
    _mm_srli_si128, _mm_storeu_si128, _mm_unpackhi_epi8, _mm_unpackhi_epi16, _mm_unpacklo_epi8,
    _mm_unpacklo_epi16,
};

use super::{COMPRESS_LANES, DROP_SHORT_BYTES, WRITE_STEP};

/// See [`super::read_pairs`].
///
/// # Safety
/// Needs SSSE3 and POPCNT.
#[target_feature(enable = "ssse3,popcnt")]
pub(super) unsafe fn read_pairs(bytes: &[u8], out: &mut Vec<u32>) -> usize {
    let mut at = 0;
    // The chunk before (its last byte precedes this chunk's first), and whether that byte
    // has its continuation bit (its varint ends in this chunk).
    let mut before = _mm_setzero_si128();
    let mut carried = 0u32;
    while let Some(chunk) = bytes.get(at..at + 16) {
        // SAFETY: `chunk` has 16 bytes; the load needs no alignment.
        let chunk = unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) };
        let continues = _mm_movemask_epi8(chunk) as u32;
        // A continuation byte after a continuation byte: a varint of three bytes or more.
        if continues & ((continues << 1) | carried) != 0 {
            break;
        }
        // Each byte beside the one before it, in 16-bit lanes: `before | byte << 8`.
        let previous = _mm_or_si128(_mm_slli_si128::<1>(chunk), _mm_srli_si128::<15>(before));
        let ends = !continues;
        out.reserve(super::READ_SLACK);
        // SAFETY: `out` has room for 16 more values (reserved just above), 8 for each.
        unsafe {
            push_ending(_mm_unpacklo_epi8(previous, chunk), ends & 0xff, out);
            push_ending(_mm_unpackhi_epi8(previous, chunk), (ends >> 8) & 0xff, out);
        }
        before = chunk;
        carried = continues >> 15;
        at += 16;
    }
    // A varint begun in the last chunk read and not ended there is left to the caller.
    at - carried as usize
}

/// Appends to `out` the values of the lanes of `pairs` (each a byte beside the one before
/// it) whose bit is set in `ends` (those bytes end a varint).
///
/// # Safety
/// Needs SSSE3 and POPCNT, and room for 8 more values in `out`.
#[inline]
#[target_feature(enable = "ssse3,popcnt")]
unsafe fn push_ending(pairs: __m128i, ends: u32, out: &mut Vec<u32>) {
    // Lane = before | byte << 8: two-byte varint `(before & 0x7f) | byte << 7` when
    // `before` has its continuation bit, else the one-byte `byte`.
    let two = _mm_or_si128(
        _mm_and_si128(pairs, _mm_set1_epi16(0x7f)),
        _mm_and_si128(_mm_srli_epi16::<1>(pairs), _mm_set1_epi16(0x3f80)),
    );
    let one = _mm_srli_epi16::<8>(pairs);
    let continued = _mm_set1_epi16(0x80);
    let is_two = _mm_cmpeq_epi16(_mm_and_si128(pairs, continued), continued);
    let values = _mm_or_si128(_mm_and_si128(is_two, two), _mm_andnot_si128(is_two, one));
    let shuffle = &COMPRESS_LANES[ends as usize];
    // SAFETY: `shuffle` has 16 bytes (unaligned load). The two stores write 8 values into
    // the spare capacity of `out`, which has room for them (the caller's contract), and
    // `ends.count_ones()` of them are values read, so the length stays initialised.
    unsafe {
        let packed = _mm_shuffle_epi8(values, _mm_loadu_si128(shuffle.as_ptr().cast()));
        let zero = _mm_setzero_si128();
        let spare = out.spare_capacity_mut().as_mut_ptr();
        _mm_storeu_si128(spare.cast(), _mm_unpacklo_epi16(packed, zero));
        _mm_storeu_si128(spare.add(4).cast(), _mm_unpackhi_epi16(packed, zero));
        out.set_len(out.len() + ends.count_ones() as usize);
    }
}

/// See [`super::write_pairs`]; `values.len()` is a multiple of [`WRITE_STEP`].
///
/// # Safety
/// Needs SSSE3 and POPCNT, values under 2^14, and room in `out` for two bytes a value
/// plus 16.
#[target_feature(enable = "ssse3,popcnt")]
pub(super) unsafe fn write_pairs(values: &[u32], out: &mut [u8]) -> (usize, usize) {
    let mut used = 0;
    let (steps, _) = values.as_chunks::<WRITE_STEP>();
    for step in steps {
        // SAFETY: `step` has 8 values, 32 bytes, loaded unaligned as two halves.
        let (low, high) = unsafe {
            (
                _mm_loadu_si128(step.as_ptr().cast()),
                _mm_loadu_si128(step.as_ptr().add(4).cast()),
            )
        };
        // Values under 2^14 fit the signed 16-bit lanes of the saturating pack.
        let lanes = _mm_packs_epi32(low, high);
        let long = _mm_cmpgt_epi16(lanes, _mm_set1_epi16(0x7f));
        // Lane = first byte (low 7 bits, continuation bit when long) | second << 8.
        let spread = _mm_or_si128(
            _mm_or_si128(
                _mm_and_si128(lanes, _mm_set1_epi16(0x7f)),
                _mm_and_si128(long, _mm_set1_epi16(0x80)),
            ),
            _mm_slli_epi16::<8>(_mm_srli_epi16::<7>(lanes)),
        );
        let long = (_mm_movemask_epi8(_mm_packs_epi16(long, _mm_setzero_si128())) & 0xff) as u32;
        let shuffle = &DROP_SHORT_BYTES[long as usize];
        // SAFETY: `shuffle` has 16 bytes (unaligned load); the store writes 16 bytes at
        // `used`, at most two bytes a value written so far, inside `out` (the caller's
        // contract).
        unsafe {
            let bytes = _mm_shuffle_epi8(spread, _mm_loadu_si128(shuffle.as_ptr().cast()));
            _mm_storeu_si128(out.as_mut_ptr().add(used).cast(), bytes);
        }
        used += WRITE_STEP + long.count_ones() as usize;
    }
    (steps.len() * WRITE_STEP, used)
}
