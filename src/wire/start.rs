//! The first message of an `Evaluate` stream with its graph inline, read by hand: the graph's
//! arrays (every out-degree and target of a test case) in one loop each, as `PutGraph` chunks
//! are read, instead of prost's varint call per element.
//!
//! As in [`super::packed`], only the common shape is taken (a `start` with a graph, and
//! perhaps `explain`, `analysis` and `play_convention`, each field at most once); anything else, a graph id or an
//! unknown field among them, goes to prost whole, and every message is built with its fields
//! named exhaustively, so a field added to the proto stops this file from compiling.

use prost::Message;

use super::fields::{Field, Fields, read_fields};
use super::put_graph::decode_graph;
use super::size::{LEN, VARINT, key};
use super::tags::{evaluate_request, evaluate_start};
use crate::proto::evaluate_request::Payload;
use crate::proto::evaluate_start::GraphSource;
use crate::proto::{AnalysisOptions, EvaluateRequest, EvaluateStart};

/// Reads an `EvaluateRequest` whose only field is a `start` with an inline graph; `None` for
/// anything else.
pub(super) fn decode_start(bytes: &[u8]) -> Option<EvaluateRequest> {
    let start = Fields(bytes).only(key(evaluate_request::START, LEN))?;
    let mut graph = None;
    let mut explain = false;
    let mut analysis = None;
    let mut play_convention = 0;
    read_fields(start, |field| {
        use evaluate_start::*;
        match field {
            Field::Bytes(k, bytes) if k == key(GRAPH, LEN) => {
                graph = Some(decode_graph(bytes)?);
                Some(GRAPH)
            }
            // prost reads a bool as any varint, true when not zero.
            Field::Varint(k, value) if k == key(EXPLAIN, VARINT) => {
                explain = value != 0;
                Some(EXPLAIN)
            }
            // prost reads an enum as an int32 varint: the low 32 bits.
            Field::Varint(k, value) if k == key(PLAY_CONVENTION, VARINT) => {
                play_convention = value as i32;
                Some(PLAY_CONVENTION)
            }
            // A few bytes: prost reads them.
            Field::Bytes(k, bytes) if k == key(ANALYSIS, LEN) => {
                analysis = Some(AnalysisOptions::decode(bytes).ok()?);
                Some(ANALYSIS)
            }
            _ => None,
        }
    })?;
    // Without a graph (an id, or neither) the message is small: prost reads it.
    let graph = graph?;
    Some(EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::Graph(graph)),
            explain,
            analysis,
            play_convention,
        })),
    })
}
