//! The AVX-512 reader and writer of [`super`]: sixty-four bytes a step. Reading, each byte is
//! put beside the one before it by one byte permutation, both widened to 16-bit lanes, and the
//! lanes that end a varint are moved together by a compress instruction (VBMI2) instead of a
//! shuffle table; writing, thirty-two values are spread into two bytes each, and a compress
//! drops the second bytes of the short ones.

use std::arch::x86_64::{
    __m256i, _mm512_and_si512, _mm512_castsi256_si512, _mm512_castsi512_si256,
    _mm512_cmpgt_epu16_mask, _mm512_cvtepi32_epi16, _mm512_cvtepu8_epi16, _mm512_cvtepu16_epi32,
    _mm512_extracti64x4_epi64, _mm512_inserti64x4, _mm512_loadu_si512, _mm512_mask_blend_epi16,
    _mm512_maskz_compress_epi8, _mm512_maskz_compress_epi16, _mm512_maskz_mov_epi16,
    _mm512_movepi8_mask, _mm512_or_si512, _mm512_permutex2var_epi8, _mm512_set1_epi16,
    _mm512_setzero_si512, _mm512_slli_epi16, _mm512_srli_epi16, _mm512_storeu_si512,
    _mm512_test_epi8_mask, _mm512_test_epi16_mask,
};
use std::sync::OnceLock;

/// Whether the processor has AVX-512 with byte permutations (VBMI) and compresses (VBMI2),
/// and POPCNT; asked once.
pub(super) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vbmi")
            && std::arch::is_x86_feature_detected!("avx512vbmi2")
            && std::arch::is_x86_feature_detected!("popcnt")
    })
}

/// Values a step stores into the spare capacity of the output, at most.
pub(super) const STEP_VALUES: usize = 64;

/// For [`_mm512_permutex2var_epi8`]: byte `i` of the result is byte `i - 1` of the chunk, and
/// byte 0 the last byte of the chunk before (index 64 + 63 names the second operand's).
const PREVIOUS: [u8; 64] = {
    let mut index = [0u8; 64];
    index[0] = 127;
    let mut i = 1;
    while i < 64 {
        index[i] = i as u8 - 1;
        i += 1;
    }
    index
};

/// See [`super::read_pairs`]: the same, sixty-four bytes at a time, so it stops before the
/// chunk of sixty-four that holds a longer varint.
///
/// # Safety
/// Needs AVX-512 F, BW, VBMI and VBMI2, and POPCNT.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,popcnt")]
pub(super) unsafe fn read_pairs(bytes: &[u8], out: &mut Vec<u32>) -> usize {
    // SAFETY: `PREVIOUS` has 64 bytes; the load needs no alignment.
    let previous_index = unsafe { _mm512_loadu_si512(PREVIOUS.as_ptr().cast()) };
    let mut at = 0;
    // The chunk before, and whether its last byte has its continuation bit (its varint ends
    // in this chunk).
    let mut before = _mm512_setzero_si512();
    let mut carried = 0u64;
    while let Some(chunk) = bytes.get(at..at + 64) {
        // SAFETY: `chunk` has 64 bytes; the load needs no alignment.
        let chunk = unsafe { _mm512_loadu_si512(chunk.as_ptr().cast()) };
        let continues = _mm512_movepi8_mask(chunk);
        // A continuation byte after a continuation byte: a varint of three bytes or more.
        if continues & ((continues << 1) | carried) != 0 {
            break;
        }
        let previous = _mm512_permutex2var_epi8(chunk, previous_index, before);
        let ends = !continues;
        out.reserve(STEP_VALUES);
        // SAFETY: `out` has room for 64 more values (reserved just above), 32 for each half.
        unsafe {
            push_ending(
                _mm512_castsi512_si256(chunk),
                _mm512_castsi512_si256(previous),
                ends as u32,
                out,
            );
            push_ending(
                _mm512_extracti64x4_epi64::<1>(chunk),
                _mm512_extracti64x4_epi64::<1>(previous),
                (ends >> 32) as u32,
                out,
            );
        }
        before = chunk;
        carried = continues >> 63;
        at += 64;
    }
    // A varint begun in the last chunk read and not ended there is left to the caller.
    at - carried as usize
}

/// Appends to `out` the values ending at the bytes of `bytes` whose bit is set in `ends`,
/// where `previous` holds the byte before each.
///
/// # Safety
/// Needs AVX-512 F, BW, VBMI and VBMI2, and POPCNT, and room for 32 more values in `out`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,popcnt")]
unsafe fn push_ending(bytes: __m256i, previous: __m256i, ends: u32, out: &mut Vec<u32>) {
    let byte = _mm512_cvtepu8_epi16(bytes);
    let before = _mm512_cvtepu8_epi16(previous);
    // The two-byte varint `(before & 0x7f) | byte << 7` where `before` has its continuation
    // bit, else the one-byte `byte`.
    let two = _mm512_or_si512(
        _mm512_and_si512(before, _mm512_set1_epi16(0x7f)),
        _mm512_slli_epi16::<7>(byte),
    );
    let is_two = _mm512_test_epi16_mask(before, _mm512_set1_epi16(0x80));
    let values = _mm512_maskz_compress_epi16(ends, _mm512_mask_blend_epi16(is_two, byte, two));
    // SAFETY: the two stores write 32 values into the spare capacity of `out`, which has room
    // for them (the caller's contract), and `ends.count_ones()` of them are values read, so
    // the length stays initialised.
    unsafe {
        let spare = out.spare_capacity_mut().as_mut_ptr();
        _mm512_storeu_si512(
            spare.cast(),
            _mm512_cvtepu16_epi32(_mm512_castsi512_si256(values)),
        );
        _mm512_storeu_si512(
            spare.add(16).cast(),
            _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64::<1>(values)),
        );
        out.set_len(out.len() + ends.count_ones() as usize);
    }
}

/// Values [`write_pairs`] takes at once.
pub(super) const WRITE_STEP: usize = 32;

/// See [`super::write_pairs`], thirty-two values at a time: returns how many values it wrote
/// (a multiple of [`WRITE_STEP`]) and how many bytes they took.
///
/// # Safety
/// Needs AVX-512 F, BW, VBMI and VBMI2, and POPCNT, values under 2^14, and room in `out` for
/// two bytes a value (each step stores 64 bytes where it has used as many as it wrote before).
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,popcnt")]
pub(super) unsafe fn write_pairs(values: &[u32], out: &mut [u8]) -> (usize, usize) {
    let mut used = 0;
    let (steps, _) = values.as_chunks::<WRITE_STEP>();
    for step in steps {
        // SAFETY: `step` has 32 values, 128 bytes, loaded unaligned as two halves.
        let (low, high) = unsafe {
            (
                _mm512_loadu_si512(step.as_ptr().cast()),
                _mm512_loadu_si512(step.as_ptr().add(16).cast()),
            )
        };
        // Values under 2^14 keep their bits in 16-bit lanes, in order.
        let lanes = _mm512_inserti64x4::<1>(
            _mm512_castsi256_si512(_mm512_cvtepi32_epi16(low)),
            _mm512_cvtepi32_epi16(high),
        );
        let long = _mm512_cmpgt_epu16_mask(lanes, _mm512_set1_epi16(0x7f));
        // Lane = first byte (low 7 bits, continuation bit when long) | second << 8, where the
        // second byte is zero exactly for the short values.
        let first = _mm512_or_si512(
            _mm512_and_si512(lanes, _mm512_set1_epi16(0x7f)),
            _mm512_maskz_mov_epi16(long, _mm512_set1_epi16(0x80)),
        );
        let spread = _mm512_or_si512(first, _mm512_slli_epi16::<8>(_mm512_srli_epi16::<7>(lanes)));
        let seconds = _mm512_test_epi8_mask(spread, spread) & 0xaaaa_aaaa_aaaa_aaaa;
        let keep = 0x5555_5555_5555_5555 | seconds;
        // SAFETY: the store writes 64 bytes at `used`, which is at most two bytes a value
        // written before this step: inside `out` (the caller's contract).
        unsafe {
            _mm512_storeu_si512(
                out.as_mut_ptr().add(used).cast(),
                _mm512_maskz_compress_epi8(keep, spread),
            );
        }
        used += keep.count_ones() as usize;
    }
    (steps.len() * WRITE_STEP, used)
}
