//! The two hot messages in their common shape, by hand: an `EvaluateRequest` carrying only
//! packed token queries, and an `EvaluateResponse` carrying only packed verdicts. prost sizes
//! a nested message once per level it is nested in (four passes over the packed arrays for
//! one request) and reads a packed array one varint call at a time; here each array is sized
//! once, written in one loop and read in one loop ([`super::varint`]).
//!
//! The output is byte for byte what prost writes (fields in tag order, zero scalars left
//! out), and a message is read exactly as prost reads it. Any other shape, or anything
//! unusual on the wire (an unknown or repeated field, a long varint, a malformed field),
//! goes to prost whole: this file only ever answers the cases it recognises.
//!
//! Every message is taken apart and built with its fields named exhaustively (no `..`): a
//! field added to the proto stops this file from compiling until the codec writes and reads
//! it too, so no field can be dropped on the wire unnoticed.

// The deprecated analysis columns of `PackedVerdicts` are named only to refuse them: a
// message that carries any goes to prost.
#![allow(deprecated)]

use bytes::BufMut;

use super::fields::{Field, Fields, read_fields};
use super::fixed32;
use super::size::{self, LEN, VARINT, field_len, key};
use super::tags::{
    evaluate_request, evaluate_response, packed_token_queries as queries_tag,
    packed_verdicts as verdicts_tag, query_batch,
};
use super::varint;
use crate::proto::{
    EvaluateRequest, EvaluateResponse, PackedQueryError, PackedTokenQueries, PackedVerdicts,
    QueryBatch, evaluate_request::Payload,
};

/// One repeated field of a hand-written message, as it goes on the wire.
pub(super) enum Column<'a> {
    /// Packed `uint32` varints.
    U32(&'a [u32]),
    /// Packed `uint64` varints.
    U64(&'a [u64]),
    /// Packed enum values (`int32` varints).
    Enum(&'a [i32]),
    /// Packed `fixed32`: four little-endian bytes each.
    Fixed32(&'a [u32]),
    /// Sub-messages, one length-delimited field each.
    Errors(&'a [PackedQueryError]),
}

impl Column<'_> {
    /// The packed array's bytes (for `Errors`: the fields' bytes, keys included).
    fn content_len(&self) -> usize {
        match self {
            Self::U32(values) => size::packed_len_u32(values),
            Self::U64(values) => size::packed_len_u64(values),
            Self::Enum(values) => size::packed_len_i32(values),
            Self::Fixed32(values) => 4 * values.len(),
            Self::Errors(errors) => errors
                .iter()
                .map(|error| field_len(prost::Message::encoded_len(error)))
                .sum(),
        }
    }

    /// The bytes the field takes in its message, given its `content_len`.
    fn field_bytes(&self, content_len: usize) -> usize {
        match self {
            Self::Errors(_) => content_len,
            _ if content_len == 0 => 0,
            _ => field_len(content_len),
        }
    }

    /// Writes the field (nothing when empty, as prost).
    fn write(&self, tag: u32, content_len: usize, buf: &mut impl BufMut) {
        if let Self::Errors(errors) = self {
            for error in *errors {
                prost::encoding::message::encode(tag, error, buf);
            }
            return;
        }
        if content_len == 0 {
            return;
        }
        varint::put(key(tag, LEN), buf);
        varint::put(content_len as u64, buf);
        match self {
            Self::U32(values) => varint::put_packed_u32(values, buf),
            // A byte a value (outcomes, and the nim-sums of most games) is every value under
            // 0x80, each its own varint.
            Self::U64(values) if content_len == values.len() => {
                varint::put_one_byte_values(values, |value| value as u8, buf);
            }
            Self::Enum(values) if content_len == values.len() => {
                varint::put_one_byte_values(values, |value| value as u8, buf);
            }
            Self::U64(values) => varint::put_packed(values.iter().copied(), buf),
            Self::Enum(values) => varint::put_packed(values.iter().map(|&v| v as i64 as u64), buf),
            Self::Fixed32(values) => fixed32::put_packed(values, buf),
            Self::Errors(_) => unreachable!("written above"),
        }
    }
}

/// A columnar message sized once: its first query id (tag, value) and its repeated fields in
/// tag order, with their sizes.
pub(super) struct SizedColumns<'a, const N: usize> {
    first_query_id: (u32, u64),
    columns: [(u32, Column<'a>); N],
    content_lens: [usize; N],
    /// The message's encoded size.
    pub(super) len: usize,
}

impl<'a, const N: usize> SizedColumns<'a, N> {
    pub(super) fn new(first_query_id: (u32, u64), columns: [(u32, Column<'a>); N]) -> Self {
        let content_lens = columns.each_ref().map(|(_, column)| column.content_len());
        let mut len = 0;
        if first_query_id.1 != 0 {
            len += 1 + size::len_u64(first_query_id.1);
        }
        for ((_, column), &content_len) in columns.iter().zip(&content_lens) {
            len += column.field_bytes(content_len);
        }
        Self {
            first_query_id,
            columns,
            content_lens,
            len,
        }
    }

    /// Writes the message as field `tag` of its parent: the key, the length, the fields.
    fn write_as_field(&self, tag: u32, buf: &mut impl BufMut) {
        varint::put(key(tag, LEN), buf);
        varint::put(self.len as u64, buf);
        self.write(buf);
    }

    /// Writes the message's fields (not its own key and length).
    fn write(&self, buf: &mut impl BufMut) {
        let (tag, first_query_id) = self.first_query_id;
        if first_query_id != 0 {
            varint::put(key(tag, VARINT), buf);
            varint::put(first_query_id, buf);
        }
        for ((tag, column), &content_len) in self.columns.iter().zip(&self.content_lens) {
            column.write(*tag, content_len, buf);
        }
    }
}

/// The packed queries of a request that carries only those, sized; `None` for any other
/// shape.
fn request_columns(request: &EvaluateRequest) -> Option<SizedColumns<'_, 2>> {
    let EvaluateRequest { payload } = request;
    let Some(Payload::Queries(batch)) = payload else {
        return None;
    };
    let QueryBatch {
        queries,
        packed_tokens,
    } = batch;
    let (true, Some(packed)) = (queries.is_empty(), packed_tokens) else {
        return None;
    };
    let PackedTokenQueries {
        first_query_id,
        token_counts,
        vertices,
    } = packed;
    Some(SizedColumns::new(
        (queries_tag::FIRST_QUERY_ID, *first_query_id),
        [
            (queries_tag::TOKEN_COUNTS, Column::U32(token_counts)),
            (queries_tag::VERTICES, Column::U32(vertices)),
        ],
    ))
}

/// The encoded size of a request that carries only packed token queries, in one pass over
/// its arrays (prost's `encoded_len` makes a call per element); `None` for any other shape.
pub(super) fn request_len(request: &EvaluateRequest) -> Option<usize> {
    request_columns(request).map(|packed| field_len(field_len(packed.len)))
}

/// Writes `request` when it carries only packed token queries; `false` (nothing written)
/// for any other shape.
pub(super) fn encode_request(request: &EvaluateRequest, buf: &mut impl BufMut) -> bool {
    let Some(packed) = request_columns(request) else {
        return false;
    };
    let batch_len = field_len(packed.len);
    varint::put(key(evaluate_request::QUERIES, LEN), buf);
    varint::put(batch_len as u64, buf);
    packed.write_as_field(query_batch::PACKED_TOKENS, buf);
    true
}

/// The packed verdicts of a response that carries only those, in the judge's shape (no
/// deprecated analysis column), sized; `None` for any other shape.
fn response_columns(response: &EvaluateResponse) -> Option<SizedColumns<'_, 3>> {
    let EvaluateResponse {
        verdicts,
        graph,
        packed_verdicts,
    } = response;
    let (true, None, Some(packed)) = (verdicts.is_empty(), graph, packed_verdicts) else {
        return None;
    };
    let PackedVerdicts {
        first_query_id,
        outcomes,
        nim_sums,
        errors,
        remotenesses,
        over_budget,
        move_counts,
        move_sources,
        move_targets,
        move_outcomes,
        move_remotenesses,
        move_over_budget,
        moves_omitted,
    } = packed;
    let deprecated_empty = remotenesses.is_empty()
        && over_budget.is_empty()
        && move_counts.is_empty()
        && move_sources.is_empty()
        && move_targets.is_empty()
        && move_outcomes.is_empty()
        && move_remotenesses.is_empty()
        && move_over_budget.is_empty()
        && moves_omitted.is_empty();
    deprecated_empty.then(|| {
        SizedColumns::new(
            (verdicts_tag::FIRST_QUERY_ID, *first_query_id),
            [
                (verdicts_tag::OUTCOMES, Column::Enum(outcomes)),
                (verdicts_tag::NIM_SUMS, Column::U64(nim_sums)),
                (verdicts_tag::ERRORS, Column::Errors(errors)),
            ],
        )
    })
}

/// The encoded size of a response that carries only packed verdicts, in one pass over its
/// arrays; `None` for any other shape.
pub(super) fn response_len(response: &EvaluateResponse) -> Option<usize> {
    response_columns(response).map(|packed| field_len(packed.len))
}

/// Writes `response` when it carries only packed verdicts; `false` (nothing written) for any
/// other shape.
pub(super) fn encode_response(response: &EvaluateResponse, buf: &mut impl BufMut) -> bool {
    write_only_field(
        evaluate_response::PACKED_VERDICTS,
        response_columns(response),
        buf,
    )
}

/// Writes a message whose only field is `columns`, as field `tag`; false (nothing written)
/// when there is none (the message has another shape, which prost writes).
pub(super) fn write_only_field<const N: usize>(
    tag: u32,
    columns: Option<SizedColumns<'_, N>>,
    buf: &mut impl BufMut,
) -> bool {
    let Some(columns) = columns else {
        return false;
    };
    columns.write_as_field(tag, buf);
    true
}

/// Reads an `EvaluateRequest` that carries only packed token queries, each field of them at
/// most once; `None` for anything else.
pub(super) fn decode_request(bytes: &[u8]) -> Option<EvaluateRequest> {
    let batch = Fields(bytes).only(key(evaluate_request::QUERIES, LEN))?;
    let packed_bytes = Fields(batch).only(key(query_batch::PACKED_TOKENS, LEN))?;
    let mut first_query_id = 0;
    let mut token_counts = Vec::new();
    let mut vertices = Vec::new();
    read_fields(packed_bytes, |field| match field {
        Field::Varint(k, value) if k == key(queries_tag::FIRST_QUERY_ID, VARINT) => {
            first_query_id = value;
            Some(queries_tag::FIRST_QUERY_ID)
        }
        Field::Bytes(k, bytes) if k == key(queries_tag::TOKEN_COUNTS, LEN) => {
            varint::read_packed_u32(bytes, &mut token_counts).map(|()| queries_tag::TOKEN_COUNTS)
        }
        Field::Bytes(k, bytes) if k == key(queries_tag::VERTICES, LEN) => {
            varint::read_packed_u32(bytes, &mut vertices).map(|()| queries_tag::VERTICES)
        }
        _ => None,
    })?;
    Some(EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries: Vec::new(),
            packed_tokens: Some(PackedTokenQueries {
                first_query_id,
                token_counts,
                vertices,
            }),
        })),
    })
}

/// Reads an `EvaluateResponse` that carries only packed verdicts in the judge's shape,
/// without errors, each field at most once; `None` for anything else.
pub(super) fn decode_response(bytes: &[u8]) -> Option<EvaluateResponse> {
    let packed_bytes = Fields(bytes).only(key(evaluate_response::PACKED_VERDICTS, LEN))?;
    let mut first_query_id = 0;
    let mut outcomes = Vec::new();
    let mut nim_sums = Vec::new();
    read_fields(packed_bytes, |field| {
        let (k, bytes) = match field {
            Field::Varint(k, value) if k == key(verdicts_tag::FIRST_QUERY_ID, VARINT) => {
                first_query_id = value;
                return Some(verdicts_tag::FIRST_QUERY_ID);
            }
            Field::Varint(..) => return None,
            Field::Bytes(k, bytes) => (k, bytes),
        };
        use verdicts_tag::*;
        match k {
            k if k == key(OUTCOMES, LEN) => {
                varint::read_packed_small_i32(bytes, &mut outcomes).map(|()| OUTCOMES)
            }
            k if k == key(NIM_SUMS, LEN) => {
                varint::read_packed_u64(bytes, &mut nim_sums).map(|()| NIM_SUMS)
            }
            // Errors, the deprecated columns and fields unknown to the fast path: prost
            // reads the message.
            _ => None,
        }
    })?;
    Some(EvaluateResponse {
        verdicts: Vec::new(),
        graph: None,
        packed_verdicts: Some(PackedVerdicts {
            first_query_id,
            outcomes,
            nim_sums,
            ..Default::default()
        }),
    })
}
