//! Packed varints of one or two bytes (values under 2^14: the vertices of any graph of up to
//! 16,384 vertices, the chess judge files' queries) read sixteen bytes and written eight
//! values at a time with SSSE3 byte shuffles, where the processor has them (asked once at run time; elsewhere
//! these functions do nothing and the callers' scalar loops do the work).
//!
//! Reading needs no pass from one varint to the next: every byte below 0x80 ends a varint, and
//! the value ending at byte `i` is byte `i` alone, or, when byte `i - 1` has its continuation
//! bit, the two together. So the sixteen candidate values of a chunk are computed side by
//! side, and a table indexed by the chunk's end mask moves the real ones together. Writing is
//! the reverse: each value spread into two bytes, and a table indexed by which values need the
//! second byte drops the others.

/// Reads the varints at the start of `bytes` while they are at most two bytes long, sixteen
/// bytes at a time, appending their values to `out`. Returns how many bytes it read: whole
/// varints, ending before the first chunk of sixteen that holds a longer varint, and before
/// the last bytes that make no full chunk (0 without SSSE3). `bytes` must start at a varint.
///
/// Each chunk stores sixteen values into the spare capacity of `out`, reserving room for them
/// first: a caller that reserved exactly the values it expects should add [`READ_SLACK`], or
/// the last chunks make `out` grow (copying everything read so far).
pub(super) fn read_pairs(bytes: &[u8], out: &mut Vec<u32>) -> usize {
    #[cfg(target_arch = "x86_64")]
    if ssse3::available() {
        // SAFETY: the processor has SSSE3 and POPCNT (just checked).
        return unsafe { ssse3::read_pairs(bytes, out) };
    }
    let _ = (bytes, out);
    0
}

/// Spare capacity past its values that [`read_pairs`] writes into.
pub(super) const READ_SLACK: usize = 16;

/// Values [`write_pairs`] takes at once.
pub(super) const WRITE_STEP: usize = 8;

/// Bytes past what it writes that [`write_pairs`] may overwrite.
pub(super) const WRITE_SLACK: usize = 16;

/// Writes the varints of `values`, each under 2^14, into `out`, eight values at a time;
/// returns how many values it wrote (a multiple of [`WRITE_STEP`]; 0 without SSSE3) and how
/// many bytes they took. `out` must have room for two bytes a value plus [`WRITE_SLACK`].
pub(super) fn write_pairs(values: &[u32], out: &mut [u8]) -> (usize, usize) {
    let steps = values.len() / WRITE_STEP;
    assert!(
        out.len() >= steps * 2 * WRITE_STEP + WRITE_SLACK,
        "write_pairs: {} bytes of room for {} values",
        out.len(),
        values.len()
    );
    debug_assert!(values.iter().all(|&value| value < 1 << 14));
    #[cfg(target_arch = "x86_64")]
    if ssse3::available() {
        // SAFETY: the processor has SSSE3 and POPCNT (just checked), and `out` has room for
        // every step's sixteen-byte store (asserted above).
        return unsafe { ssse3::write_pairs(&values[..steps * WRITE_STEP], out) };
    }
    (0, 0)
}

/// The shuffle that moves the kept 16-bit lanes of a register (bit `j` of `keep` for lane
/// `j`) to its front, in order; the other lanes become 0.
const fn compress_lanes(keep: usize) -> [u8; 16] {
    let mut shuffle = [0x80u8; 16];
    let (mut lane, mut kept) = (0, 0);
    while lane < 8 {
        if keep >> lane & 1 == 1 {
            shuffle[2 * kept] = 2 * lane as u8;
            shuffle[2 * kept + 1] = 2 * lane as u8 + 1;
            kept += 1;
        }
        lane += 1;
    }
    shuffle
}

/// The shuffle that keeps, of eight values spread into two bytes each (lane `j` in bytes
/// `2j`, `2j + 1`), the first byte of every value and the second of those whose bit is set in
/// `long`, in order.
const fn drop_short_bytes(long: usize) -> [u8; 16] {
    let mut shuffle = [0x80u8; 16];
    let (mut lane, mut at) = (0, 0);
    while lane < 8 {
        shuffle[at] = 2 * lane as u8;
        at += 1;
        if long >> lane & 1 == 1 {
            shuffle[at] = 2 * lane as u8 + 1;
            at += 1;
        }
        lane += 1;
    }
    shuffle
}

/// One shuffle per 8-bit mask: [`compress_lanes`] (`lanes`) or [`drop_short_bytes`].
const fn shuffles(lanes: bool) -> [[u8; 16]; 256] {
    let mut table = [[0u8; 16]; 256];
    let mut mask = 0;
    while mask < 256 {
        table[mask] = if lanes {
            compress_lanes(mask)
        } else {
            drop_short_bytes(mask)
        };
        mask += 1;
    }
    table
}

/// [`compress_lanes`] of every mask.
static COMPRESS_LANES: [[u8; 16]; 256] = shuffles(true);

/// [`drop_short_bytes`] of every mask.
static DROP_SHORT_BYTES: [[u8; 16]; 256] = shuffles(false);

#[cfg(target_arch = "x86_64")]
mod ssse3 {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi16, _mm_cmpgt_epi16,
        _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_packs_epi16, _mm_packs_epi32,
        _mm_set1_epi16, _mm_setzero_si128, _mm_shuffle_epi8, _mm_slli_epi16, _mm_slli_si128,
        _mm_srli_epi16, _mm_srli_si128, _mm_storeu_si128, _mm_unpackhi_epi8, _mm_unpackhi_epi16,
        _mm_unpacklo_epi8, _mm_unpacklo_epi16,
    };
    use std::sync::OnceLock;

    use super::{COMPRESS_LANES, DROP_SHORT_BYTES, WRITE_STEP};

    /// Whether the processor has SSSE3 (the byte shuffle) and POPCNT; asked once.
    pub(super) fn available() -> bool {
        static AVAILABLE: OnceLock<bool> = OnceLock::new();
        *AVAILABLE.get_or_init(|| {
            std::arch::is_x86_feature_detected!("ssse3")
                && std::arch::is_x86_feature_detected!("popcnt")
        })
    }

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
            let long =
                (_mm_movemask_epi8(_mm_packs_epi16(long, _mm_setzero_si128())) & 0xff) as u32;
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::encoding::{decode_varint, encode_varint};

    /// Values of one, two and (now and then) more bytes, from `seed`.
    fn mixed_values(seed: u64, count: usize, long_every: u64) -> Vec<u32> {
        let mut generator = crate::generate::Rng::new(seed);
        (0..count)
            .map(|_| {
                let x = generator.next_u64();
                match x % 16 {
                    0 if long_every > 0 && (x >> 8).is_multiple_of(long_every) => (x >> 32) as u32,
                    0..=5 => (x >> 40) as u32 % 128,
                    6 => [127, 128, 16_383, 0][(x >> 8) as usize % 4],
                    _ => (x >> 40) as u32 % (1 << 14),
                }
            })
            .collect()
    }

    fn prost_bytes(values: &[u32]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for &value in values {
            encode_varint(u64::from(value), &mut bytes);
        }
        bytes
    }

    #[test]
    fn reads_whole_short_varints_as_prost_does() {
        for seed in 0..400u64 {
            let count = (seed as usize * 7) % 300;
            let values = mixed_values(seed, count, [0, 3, 40][seed as usize % 3]);
            let bytes = prost_bytes(&values);
            for start in [0usize, 1, 5] {
                // Start at a varint: skip the first `start` values.
                let skip = start.min(values.len());
                let from = prost_bytes(&values[..skip]).len();
                let mut out = vec![7u32; 3];
                let read = read_pairs(&bytes[from..], &mut out);
                assert_eq!(&out[..3], &[7, 7, 7], "seed {seed}");
                let mut rest = &bytes[from..from + read];
                let mut expected = vec![7u32; 3];
                while !rest.is_empty() {
                    expected.push(decode_varint(&mut rest).expect("whole varints") as u32);
                }
                assert_eq!(out, expected, "seed {seed}, from {from}");
                if cfg!(target_arch = "x86_64") && ssse3_here() {
                    // It stops within one chunk (and the varint it may leave) of the first
                    // long varint, or of the end.
                    let first_long = values[skip..]
                        .iter()
                        .position(|&value| value >= 1 << 14)
                        .map_or(bytes.len() - from, |index| {
                            prost_bytes(&values[skip..skip + index]).len()
                        });
                    assert!(read <= first_long, "seed {seed}: read past a long varint");
                    assert!(
                        read + 17 > first_long,
                        "seed {seed}: stopped {} bytes early",
                        first_long - read
                    );
                }
            }
        }
    }

    #[test]
    fn writes_short_varints_as_prost_does() {
        for seed in 0..200u64 {
            let values = mixed_values(seed, (seed as usize * 5) % 200, 0);
            let mut out = vec![0u8; 2 * values.len() + WRITE_SLACK];
            let (written, used) = write_pairs(&values, &mut out);
            if cfg!(target_arch = "x86_64") && ssse3_here() {
                assert_eq!(written, values.len() / WRITE_STEP * WRITE_STEP);
            }
            assert_eq!(
                &out[..used],
                &prost_bytes(&values[..written])[..],
                "seed {seed}"
            );
        }
    }

    #[test]
    fn the_tables_keep_what_their_masks_say() {
        assert_eq!(compress_lanes(0), [0x80; 16]);
        assert_eq!(compress_lanes(0b1000_0001)[..4], [0, 1, 14, 15]);
        assert_eq!(drop_short_bytes(0)[..8], [0, 2, 4, 6, 8, 10, 12, 14]);
        assert_eq!(drop_short_bytes(0b10)[..4], [0, 2, 3, 4]);
        assert_eq!(drop_short_bytes(0xff), std::array::from_fn(|i| i as u8));
    }

    fn ssse3_here() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            ssse3::available()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }
}
