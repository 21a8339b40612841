//! `PutGraphRequest` chunks and `Graph` messages by hand: a graph's arrays sized once,
//! written in one loop each and read in one loop each (`fixed_targets` copied), byte for byte
//! as prost writes and reads them. As in [`super::packed`], the messages are taken apart and
//! built with their fields named exhaustively, so a field added to the proto stops this file
//! from compiling until the codec handles it.

use bytes::BufMut;

use super::fields::{Field, Fields, read_fields};
use super::fixed32;
use super::packed::{Column, SizedColumns, write_only_field};
use super::size::{LEN, VARINT, field_len, key};
use super::tags::{graph as graph_tag, put_graph_request};
use super::varint;
use crate::proto::{Graph, PutGraphRequest};

/// A `PutGraphRequest` chunk's columns, sized; `None` for a request without a chunk.
fn put_graph_columns(request: &PutGraphRequest) -> Option<SizedColumns<'_, 4>> {
    let PutGraphRequest { chunk } = request;
    let Graph {
        vertex_count,
        out_degrees,
        targets,
        split_counts,
        fixed_targets,
    } = chunk.as_ref()?;
    Some(SizedColumns::new(
        (graph_tag::VERTEX_COUNT, u64::from(*vertex_count)),
        [
            (graph_tag::OUT_DEGREES, Column::U32(out_degrees)),
            (graph_tag::TARGETS, Column::U32(targets)),
            (graph_tag::SPLIT_COUNTS, Column::U32(split_counts)),
            (graph_tag::FIXED_TARGETS, Column::Fixed32(fixed_targets)),
        ],
    ))
}

/// The encoded size of a `PutGraphRequest` with a chunk, in one pass over its arrays; `None`
/// for one without.
pub(super) fn put_graph_len(request: &PutGraphRequest) -> Option<usize> {
    put_graph_columns(request).map(|graph| field_len(graph.len))
}

/// Writes a `PutGraphRequest` with a chunk (a graph's arrays, each sized once and written in
/// one loop); false for one without, which prost writes.
pub(super) fn encode_put_graph(request: &PutGraphRequest, buf: &mut impl BufMut) -> bool {
    write_only_field(put_graph_request::CHUNK, put_graph_columns(request), buf)
}

/// Reads a `PutGraphRequest` whose chunk has each field at most once, packed; `None` for
/// anything else.
pub(super) fn decode_put_graph(bytes: &[u8]) -> Option<PutGraphRequest> {
    let graph_bytes = Fields(bytes).only(key(put_graph_request::CHUNK, LEN))?;
    Some(PutGraphRequest {
        chunk: Some(decode_graph(graph_bytes)?),
    })
}

/// Reads a `Graph` each of whose fields comes at most once, packed; `None` for anything else.
pub(super) fn decode_graph(bytes: &[u8]) -> Option<Graph> {
    let mut vertex_count = 0;
    let mut out_degrees = Vec::new();
    let mut targets = Vec::new();
    let mut split_counts = Vec::new();
    let mut fixed_targets = Vec::new();
    read_fields(bytes, |field| {
        use graph_tag::*;
        match field {
            Field::Varint(k, value) if k == key(VERTEX_COUNT, VARINT) => {
                vertex_count = u32::try_from(value).ok()?;
                Some(VERTEX_COUNT)
            }
            Field::Bytes(k, bytes) if k == key(OUT_DEGREES, LEN) => {
                varint::read_packed_u32(bytes, &mut out_degrees).map(|()| OUT_DEGREES)
            }
            Field::Bytes(k, bytes) if k == key(TARGETS, LEN) => {
                varint::read_packed_u32(bytes, &mut targets).map(|()| TARGETS)
            }
            Field::Bytes(k, bytes) if k == key(SPLIT_COUNTS, LEN) => {
                varint::read_packed_u32(bytes, &mut split_counts).map(|()| SPLIT_COUNTS)
            }
            Field::Bytes(k, bytes) if k == key(FIXED_TARGETS, LEN) => {
                fixed32::read_packed(bytes, &mut fixed_targets).map(|()| FIXED_TARGETS)
            }
            _ => None,
        }
    })?;
    Some(Graph {
        vertex_count,
        out_degrees,
        targets,
        split_counts,
        fixed_targets,
    })
}
