//! Protobuf size arithmetic, in one place: the hand-written codec's keys and field sizes,
//! and the sizes the rest of the crate needs before (or without) encoding a message (the
//! CLI's choice between `start` and `PutGraph`, the server's cutting of responses under the
//! message size limit), and the bytes of varints and of packed arrays of them.

use prost::Message;

use crate::proto::{EvaluateStart, PackedVerdicts, Verdict};

/// Wire type of a length-delimited field.
pub(super) const LEN: u32 = 2;
/// Wire type of a varint field.
pub(super) const VARINT: u32 = 0;

/// The key of field `tag` with `wire_type` (one byte for the tags 1 to 15 that the
/// hand-written messages use).
pub(super) const fn key(tag: u32, wire_type: u32) -> u64 {
    ((tag << 3) | wire_type) as u64
}

/// Bytes of a length-delimited field of `len` bytes with a one-byte key (tags 1 to 15): key,
/// length, contents.
pub(crate) fn field_len(len: usize) -> usize {
    1 + len_u64(len as u64) + len
}

/// The encoded size of the `EvaluateRequest` whose `start` is `options` with a graph of
/// `graph_len` encoded bytes, computed without building it (the graph stays where it is).
/// `options.graph_source` must be unset.
pub(crate) fn start_request_len(options: &EvaluateStart, graph_len: usize) -> usize {
    debug_assert!(options.graph_source.is_none());
    // `EvaluateStart.graph` and `EvaluateRequest.start` both have one-byte keys.
    let start_len = options.encoded_len() + field_len(graph_len);
    field_len(start_len)
}

/// Most bytes a `u32` takes as a varint.
pub(crate) const MAX_U32_VARINT: usize = 5;

/// Bytes a `PutGraphRequest` chunk takes beyond the varints of its one list: keys, lengths
/// and `vertex_count`.
pub(crate) const PUT_GRAPH_CHUNK_FRAME: usize = 32;

/// Bytes a request of packed token queries takes beyond its packed lists: keys, lengths and
/// `first_query_id`.
pub(crate) const PACKED_QUERIES_FRAME: usize = 64;

/// The bytes one token query adds to the packed lists of a request: its token count and its
/// vertices, as varints.
pub(crate) fn packed_query_len(tokens: &[u32]) -> usize {
    len_u64(tokens.len() as u64) + packed_len_u32(tokens)
}

/// Room a client keeps per query for its verdict in the response, so that responses stay
/// under the message limit too: a packed outcome and nim-sum (at most 11 bytes), or a full
/// verdict with a move (`explain`).
pub(crate) const PACKED_VERDICT_ROOM: usize = 16;
/// See [`PACKED_VERDICT_ROOM`].
pub(crate) const EXPLAINED_VERDICT_ROOM: usize = 64;

/// Bytes a full verdict takes in an `EvaluateResponse`.
pub(crate) fn verdict_field_len(verdict: &Verdict) -> usize {
    field_len(verdict.encoded_len())
}

/// Bytes a `PackedVerdicts` message takes in its response besides what
/// [`packed_verdict_len`] counts for its queries: its own key and length, `first_query_id`,
/// and the key and length of each of its packed arrays. At most 1 + 5 + 11 + 11 * (1 + 5).
pub(crate) const PACKED_VERDICTS_FRAME: usize = 96;

/// An upper bound of the bytes query `index` of `packed` adds to its message (its outcome and
/// nim-sum), its malformed-query entry aside.
pub(crate) fn packed_verdict_len(packed: &PackedVerdicts, index: usize) -> usize {
    // An outcome is one byte (values 0 to 3).
    1 + packed.nim_sums.get(index).map_or(1, |&n| len_u64(n))
}

/// A cheap upper bound of the bytes of a packed-verdicts message of `queries` queries
/// without analysis columns and without malformed queries (an outcome takes a byte, a
/// nim-sum at most ten).
pub(crate) fn packed_verdicts_bound(queries: usize) -> usize {
    PACKED_VERDICTS_FRAME + queries * 11
}

/// Bytes a `GetValues` page takes with `value` added to its `bytes` so far.
pub(crate) fn page_len_with(bytes: usize, value: &crate::proto::VertexValue) -> usize {
    bytes + field_len(value.encoded_len())
}

/// Bytes a malformed-query entry takes in a `PackedVerdicts`.
pub(crate) fn packed_error_len(error: &crate::proto::PackedQueryError) -> usize {
    field_len(error.encoded_len())
}

/// Encoded bytes of `value` as a varint (1 to 10).
#[inline]
pub(super) fn len_u64(value: u64) -> usize {
    // Every 7 significant bits take a byte; zero takes one.
    (((value | 1).leading_zeros() ^ 63) as usize * 9 + 73) / 64
}

/// Encoded bytes of the varints of `values` (the packed field's length). Counted in `u32`
/// lanes, per chunk small enough not to overflow them, so that the loop vectorises.
pub(super) fn packed_len_u32(values: &[u32]) -> usize {
    // All under 2^14 (the vertices of graphs of up to 16,384 vertices): a byte each, and a
    // second for those from 128, counted without a compare (`(v + 2^14 - 128) >> 14` is 1
    // exactly from 128). One pass finds whether they are, and counts as if they were.
    let (mut any, mut long) = (0u32, 0usize);
    for chunk in values.chunks(1 << 16) {
        let (chunk_any, chunk_long) = chunk.iter().fold((0u32, 0u32), |(any, long), &v| {
            let second = v.wrapping_add((1 << 14) - (1 << 7)) >> 14;
            (any | v, long.wrapping_add(second))
        });
        any |= chunk_any;
        long += chunk_long as usize;
    }
    if any < 1 << 14 {
        return values.len() + long;
    }
    values
        .chunks(1 << 20)
        .map(|chunk| {
            let bytes: u32 = chunk
                .iter()
                .map(|&value| {
                    1 + u32::from(value >= 1 << 7)
                        + u32::from(value >= 1 << 14)
                        + u32::from(value >= 1 << 21)
                        + u32::from(value >= 1 << 28)
                })
                .sum();
            bytes as usize
        })
        .sum()
}

/// Encoded bytes of the varints of `values`. When all are under 128 (the nim-sums of most
/// graphs), one vectorised OR over them tells, and each takes a byte.
pub(super) fn packed_len_u64(values: &[u64]) -> usize {
    if values.iter().fold(0, |any, &value| any | value) < 1 << 7 {
        return values.len();
    }
    values.iter().map(|&value| len_u64(value)).sum()
}

/// Encoded bytes of the varints of enum values (negative ones take ten bytes, as `int32`).
pub(super) fn packed_len_i32(values: &[i32]) -> usize {
    if values.iter().fold(0, |any, &value| any | value as u32) < 1 << 7 {
        return values.len();
    }
    values
        .iter()
        .map(|&value| len_u64(value as i64 as u64))
        .sum()
}
