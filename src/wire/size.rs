//! Protobuf size arithmetic, in one place: the hand-written codec's keys and field sizes,
//! and the sizes the rest of the crate needs before (or without) encoding a message (the
//! CLI's choice between `start` and `PutGraph`, the server's cutting of responses under the
//! message size limit).

use prost::Message;

use super::varint;
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
    1 + varint::len_u64(len as u64) + len
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
    varint::len_u64(tokens.len() as u64) + varint::packed_len_u32(tokens)
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

/// An upper bound of the bytes query `index` of `packed` adds to its message (outcome,
/// nim-sum, and the analysis columns when present), its malformed-query entry aside, with
/// `moves` its number of listed moves.
pub(crate) fn packed_verdict_len(packed: &PackedVerdicts, index: usize, moves: usize) -> usize {
    // An outcome is one byte (values 0 to 3).
    let mut len = 1 + packed
        .nim_sums
        .get(index)
        .map_or(1, |&n| varint::len_u64(n));
    if !packed.move_counts.is_empty() || !packed.remotenesses.is_empty() {
        // Remoteness, an over-budget index, the move count, the omitted count; per move a
        // source, a target, an outcome, a remoteness and an over-budget index.
        len += 5 + 5 + 5 + 10 + moves * (5 + 5 + 1 + 5 + 5);
    }
    len
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
