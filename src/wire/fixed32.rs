//! Packed `fixed32` fields (`Graph.fixed_targets`): four little-endian bytes a value, so both
//! writing and reading are a copy on little-endian machines.

use std::borrow::Cow;

use bytes::BufMut;

/// `values` as four little-endian bytes each (a packed `fixed32` field's content, and the
/// integers of a graph's id): on a little-endian machine the values' own bytes, elsewhere a
/// converted copy.
pub(crate) fn le_bytes(values: &[u32]) -> Cow<'_, [u8]> {
    #[cfg(target_endian = "little")]
    {
        // SAFETY: the bytes of initialised `u32`s, which have no padding, borrowed for as
        // long as `values` is; on this machine they are the values' little-endian encoding.
        Cow::Borrowed(unsafe {
            std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values))
        })
    }
    #[cfg(not(target_endian = "little"))]
    Cow::Owned(
        values
            .iter()
            .flat_map(|value| value.to_le_bytes())
            .collect(),
    )
}

/// Writes `values` as four little-endian bytes each (a packed `fixed32` field's content): one
/// copy on little-endian machines.
pub(super) fn put_packed(values: &[u32], buf: &mut impl BufMut) {
    buf.put_slice(&le_bytes(values));
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
