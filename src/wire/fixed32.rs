//! Packed `fixed32` fields (`Graph.fixed_targets`): four little-endian bytes a value, so both
//! writing and reading are a copy on little-endian machines.

use bytes::BufMut;

use super::varint::STAGE;

/// Writes `values` as four little-endian bytes each (a packed `fixed32` field's content),
/// through a stack buffer: a copy on little-endian machines.
pub(super) fn put_packed(values: &[u32], buf: &mut impl BufMut) {
    let mut stage = [0u8; STAGE];
    for chunk in values.chunks(STAGE / 4) {
        let bytes = &mut stage[..4 * chunk.len()];
        for (word, &value) in bytes.as_chunks_mut::<4>().0.iter_mut().zip(chunk) {
            *word = value.to_le_bytes();
        }
        buf.put_slice(bytes);
    }
}

/// Reads a packed `fixed32` field, appending to `out`; `None` for a length that is not a
/// multiple of four. A copy on little-endian machines.
pub(super) fn read_packed(bytes: &[u8], out: &mut Vec<u32>) -> Option<()> {
    let (words, []) = bytes.as_chunks::<4>() else {
        return None;
    };
    out.extend(words.iter().map(|&word| u32::from_le_bytes(word)));
    Some(())
}
