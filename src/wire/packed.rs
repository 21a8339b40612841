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

use bytes::BufMut;

use super::varint;
use crate::proto::{
    EvaluateRequest, EvaluateResponse, PackedTokenQueries, PackedVerdicts, QueryBatch,
    evaluate_request::Payload,
};

/// Wire type of a length-delimited field.
const LEN: u32 = 2;
/// Wire type of a varint field.
const VARINT: u32 = 0;

const fn key(tag: u32, wire_type: u32) -> u64 {
    ((tag << 3) | wire_type) as u64
}

/// Bytes of a length-delimited field of `len` bytes with a one-byte key.
fn field_len(len: usize) -> usize {
    1 + varint::len_u64(len as u64) + len
}

/// The packed queries of a request that carries only those, with their sizes: the packed
/// arrays' bytes, the `PackedTokenQueries` message's and the `QueryBatch`'s. `None` for any
/// other shape.
fn request_sizes(
    request: &EvaluateRequest,
) -> Option<(&PackedTokenQueries, usize, usize, usize, usize)> {
    let Some(Payload::Queries(batch)) = &request.payload else {
        return None;
    };
    let (true, Some(packed)) = (batch.queries.is_empty(), &batch.packed_tokens) else {
        return None;
    };
    let counts = varint::packed_len_u32(&packed.token_counts);
    let vertices = varint::packed_len_u32(&packed.vertices);
    let mut packed_len = 0;
    if packed.first_query_id != 0 {
        packed_len += 1 + varint::len_u64(packed.first_query_id);
    }
    if counts > 0 {
        packed_len += field_len(counts);
    }
    if vertices > 0 {
        packed_len += field_len(vertices);
    }
    Some((packed, counts, vertices, packed_len, field_len(packed_len)))
}

/// The encoded size of a request that carries only packed token queries, in one pass over
/// its arrays (prost's `encoded_len` makes a call per element); `None` for any other shape.
pub(super) fn request_len(request: &EvaluateRequest) -> Option<usize> {
    request_sizes(request).map(|(_, _, _, _, batch_len)| field_len(batch_len))
}

/// Writes `request` when it carries only packed token queries; `false` (nothing written)
/// for any other shape.
pub(super) fn encode_request(request: &EvaluateRequest, buf: &mut impl BufMut) -> bool {
    let Some((packed, counts, vertices, packed_len, batch_len)) = request_sizes(request) else {
        return false;
    };
    varint::put(key(2, LEN), buf); // EvaluateRequest.queries
    varint::put(batch_len as u64, buf);
    varint::put(key(2, LEN), buf); // QueryBatch.packed_tokens
    varint::put(packed_len as u64, buf);
    if packed.first_query_id != 0 {
        varint::put(key(1, VARINT), buf);
        varint::put(packed.first_query_id, buf);
    }
    put_packed_field(
        2,
        counts,
        packed.token_counts.iter().map(|&c| u64::from(c)),
        buf,
    );
    put_packed_field(
        3,
        vertices,
        packed.vertices.iter().map(|&v| u64::from(v)),
        buf,
    );
    true
}

/// The packed verdicts of a response that carries only those, with their sizes: the packed
/// arrays' bytes and the `PackedVerdicts` message's. `None` for any other shape.
fn response_sizes(response: &EvaluateResponse) -> Option<(&PackedVerdicts, usize, usize, usize)> {
    let (true, None, Some(packed)) = (
        response.verdicts.is_empty(),
        &response.graph,
        &response.packed_verdicts,
    ) else {
        return None;
    };
    let outcomes = varint::packed_len_i32(&packed.outcomes);
    let nim_sums = varint::packed_len_u64(&packed.nim_sums);
    let mut packed_len = 0;
    if packed.first_query_id != 0 {
        packed_len += 1 + varint::len_u64(packed.first_query_id);
    }
    if outcomes > 0 {
        packed_len += field_len(outcomes);
    }
    if nim_sums > 0 {
        packed_len += field_len(nim_sums);
    }
    packed_len += packed
        .errors
        .iter()
        .map(|error| field_len(prost::Message::encoded_len(error)))
        .sum::<usize>();
    Some((packed, outcomes, nim_sums, packed_len))
}

/// The encoded size of a response that carries only packed verdicts, in one pass over its
/// arrays; `None` for any other shape.
pub(super) fn response_len(response: &EvaluateResponse) -> Option<usize> {
    response_sizes(response).map(|(_, _, _, packed_len)| field_len(packed_len))
}

/// Writes `response` when it carries only packed verdicts; `false` (nothing written) for any
/// other shape.
pub(super) fn encode_response(response: &EvaluateResponse, buf: &mut impl BufMut) -> bool {
    let Some((packed, outcomes, nim_sums, packed_len)) = response_sizes(response) else {
        return false;
    };
    varint::put(key(3, LEN), buf); // EvaluateResponse.packed_verdicts
    varint::put(packed_len as u64, buf);
    if packed.first_query_id != 0 {
        varint::put(key(1, VARINT), buf);
        varint::put(packed.first_query_id, buf);
    }
    let outcome_values = packed.outcomes.iter().map(|&o| o as i64 as u64);
    put_packed_field(2, outcomes, outcome_values, buf);
    put_packed_field(3, nim_sums, packed.nim_sums.iter().copied(), buf);
    for error in &packed.errors {
        prost::encoding::message::encode(4, error, buf);
    }
    true
}

/// Writes a packed field of `len` bytes of varints (nothing when empty, as prost).
fn put_packed_field(
    tag: u32,
    len: usize,
    values: impl Iterator<Item = u64>,
    buf: &mut impl BufMut,
) {
    if len == 0 {
        return;
    }
    varint::put(key(tag, LEN), buf);
    varint::put(len as u64, buf);
    varint::put_packed(values, buf);
}

/// A cursor over the fields of one message.
struct Fields<'a>(&'a [u8]);

/// One field: its key and, for a length-delimited field, its bytes; for a varint, its value.
enum Field<'a> {
    Bytes(u64, &'a [u8]),
    Varint(u64, u64),
}

impl<'a> Fields<'a> {
    /// The next field; `None` at the end, `Some(None)` for anything but a well-formed varint
    /// or length-delimited field with a one-byte key.
    fn next_field(&mut self) -> Option<Option<Field<'a>>> {
        let (&key, rest) = self.0.split_first()?;
        let Some((value, len)) = varint::read_long(rest, 9) else {
            return Some(None);
        };
        let rest = &rest[len..];
        let field = match u32::from(key) & 7 {
            _ if key >= 0x80 => None,
            VARINT => {
                self.0 = rest;
                Some(Field::Varint(u64::from(key), value))
            }
            LEN => {
                let len = usize::try_from(value).ok().filter(|&len| len <= rest.len());
                len.map(|len| {
                    let (bytes, rest) = rest.split_at(len);
                    self.0 = rest;
                    Field::Bytes(u64::from(key), bytes)
                })
            }
            _ => None,
        };
        Some(field)
    }

    /// The message's only field, when it is a length-delimited one with key `expected`.
    fn only(mut self, expected: u64) -> Option<&'a [u8]> {
        match self.next_field()?? {
            Field::Bytes(key, bytes) if key == expected && self.0.is_empty() => Some(bytes),
            _ => None,
        }
    }
}

/// Reads the fields of a message whose fields the fast path knows are tags 1 to 3, each at
/// most once, handing each to `read`, which stores it and says its tag (`None`: a field it
/// does not take). `None` for a repeated field, or anything else unusual.
fn read_fields<'a>(
    bytes: &'a [u8],
    mut read: impl FnMut(Field<'a>) -> Option<usize>,
) -> Option<()> {
    let mut seen = [false; 3];
    let mut fields = Fields(bytes);
    while let Some(field) = fields.next_field() {
        let tag = read(field?)?;
        if std::mem::replace(seen.get_mut(tag.checked_sub(1)?)?, true) {
            return None;
        }
    }
    Some(())
}

/// Reads an `EvaluateRequest` that carries only packed token queries, each field of them at
/// most once; `None` for anything else.
pub(super) fn decode_request(bytes: &[u8]) -> Option<EvaluateRequest> {
    let batch = Fields(bytes).only(key(2, LEN))?;
    let packed_bytes = Fields(batch).only(key(2, LEN))?;
    let mut packed = PackedTokenQueries::default();
    read_fields(packed_bytes, |field| match field {
        Field::Varint(k, value) if k == key(1, VARINT) => {
            packed.first_query_id = value;
            Some(1)
        }
        Field::Bytes(k, bytes) if k == key(2, LEN) => {
            varint::read_packed_u32(bytes, &mut packed.token_counts).map(|()| 2)
        }
        Field::Bytes(k, bytes) if k == key(3, LEN) => {
            varint::read_packed_u32(bytes, &mut packed.vertices).map(|()| 3)
        }
        _ => None,
    })?;
    Some(EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries: Vec::new(),
            packed_tokens: Some(packed),
        })),
    })
}

/// Reads an `EvaluateResponse` that carries only packed verdicts without errors, each field
/// at most once; `None` for anything else.
pub(super) fn decode_response(bytes: &[u8]) -> Option<EvaluateResponse> {
    let packed_bytes = Fields(bytes).only(key(3, LEN))?;
    let mut packed = PackedVerdicts::default();
    read_fields(packed_bytes, |field| match field {
        Field::Varint(k, value) if k == key(1, VARINT) => {
            packed.first_query_id = value;
            Some(1)
        }
        Field::Bytes(k, bytes) if k == key(2, LEN) => {
            varint::read_packed_small_i32(bytes, &mut packed.outcomes).map(|()| 2)
        }
        Field::Bytes(k, bytes) if k == key(3, LEN) => {
            varint::read_packed_u64(bytes, &mut packed.nim_sums).map(|()| 3)
        }
        _ => None,
    })?;
    Some(EvaluateResponse {
        verdicts: Vec::new(),
        graph: None,
        packed_verdicts: Some(packed),
    })
}
