//! Packed varints of one or two bytes (values under 2^14: the vertices of any graph of up to
//! 16,384 vertices, the chess judge files' queries) read sixteen bytes and written eight
//! values at a time with SSSE3 byte shuffles (`ssse3.rs`), where the processor has them
//! ([`crate::cpu`]; elsewhere these functions do nothing and the callers' scalar loops do the
//! work).
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
/// Each chunk stores up to [`READ_SLACK`] values into the spare capacity of `out`, reserving
/// room for them first: a caller that reserved exactly the values it expects should add [`READ_SLACK`], or
/// the last chunks make `out` grow (copying everything read so far).
pub(super) fn read_pairs(bytes: &[u8], out: &mut Vec<u32>) -> usize {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::features().ssse3 {
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
    if crate::cpu::features().ssse3 {
        // SAFETY: the processor has SSSE3 and POPCNT (just checked), and `out` has room for
        // two bytes of each value plus the slack (asserted above).
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
mod ssse3;

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

    /// A reader of pairs: its name, the function, and the chunk it reads at once.
    type Reader = (&'static str, fn(&[u8], &mut Vec<u32>) -> usize, usize);

    /// The readers this processor has.
    fn readers() -> Vec<Reader> {
        let mut readers: Vec<Reader> = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if crate::cpu::features().ssse3 {
                readers.push(("dispatched", read_pairs, 16));
                // SAFETY: the processor has SSSE3 and POPCNT (just checked).
                readers.push((
                    "ssse3",
                    |bytes, out| unsafe { ssse3::read_pairs(bytes, out) },
                    16,
                ));
            }
        }
        readers
    }

    #[test]
    fn reads_whole_short_varints_as_prost_does() {
        for (name, read_pairs, chunk) in readers() {
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
                    assert_eq!(&out[..3], &[7, 7, 7], "{name}, seed {seed}");
                    let mut rest = &bytes[from..from + read];
                    let mut expected = vec![7u32; 3];
                    while !rest.is_empty() {
                        expected.push(decode_varint(&mut rest).expect("whole varints") as u32);
                    }
                    assert_eq!(out, expected, "{name}, seed {seed}, from {from}");
                    // It stops within one chunk (and the varint it may leave) of the first
                    // long varint, or of the end.
                    let first_long = values[skip..]
                        .iter()
                        .position(|&value| value >= 1 << 14)
                        .map_or(bytes.len() - from, |index| {
                            prost_bytes(&values[skip..skip + index]).len()
                        });
                    assert!(
                        read <= first_long,
                        "{name}, seed {seed}: read past a long varint"
                    );
                    assert!(
                        read + chunk + 1 > first_long,
                        "{name}, seed {seed}: stopped {} bytes early",
                        first_long - read
                    );
                }
            }
        }
    }

    /// A writer of pairs: its name, the function, and the values it writes at once.
    type Writer = (&'static str, fn(&[u32], &mut [u8]) -> (usize, usize), usize);

    /// The writers this processor has.
    fn writers() -> Vec<Writer> {
        let mut writers: Vec<Writer> = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if crate::cpu::features().ssse3 {
                writers.push(("dispatched", write_pairs, WRITE_STEP));
                // SAFETY: the processor has SSSE3 and POPCNT (just checked); the test gives
                // every writer two bytes a value and the slack.
                writers.push((
                    "ssse3",
                    |values, out| unsafe {
                        ssse3::write_pairs(&values[..values.len() / WRITE_STEP * WRITE_STEP], out)
                    },
                    WRITE_STEP,
                ));
            }
        }
        writers
    }

    #[test]
    fn writes_short_varints_as_prost_does() {
        for (name, write_pairs, step) in writers() {
            for seed in 0..200u64 {
                let values = mixed_values(seed, (seed as usize * 5) % 200, 0);
                let mut out = vec![0u8; 2 * values.len() + WRITE_SLACK];
                let (written, used) = write_pairs(&values, &mut out);
                assert_eq!(written, values.len() / step * step, "{name}, seed {seed}");
                assert_eq!(
                    &out[..used],
                    &prost_bytes(&values[..written])[..],
                    "{name}, seed {seed}"
                );
            }
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
}
