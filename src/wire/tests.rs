//! The hand-written paths against prost: byte-identical output, identical reading of
//! everything they accept (including damaged bytes), and a refusal of every other shape.

// The deprecated analysis columns are still coded as prost codes them.
#![allow(deprecated)]

use proptest::prelude::*;
use prost::Message;

use super::packed::{
    decode_request, decode_response, encode_request, encode_response, request_len, response_len,
};
use super::put_graph::{decode_put_graph, encode_put_graph, put_graph_len};
use crate::proto::evaluate_start::GraphSource;
use crate::proto::{
    EvaluateRequest, EvaluateResponse, EvaluateStart, Graph, PackedQueryError, PackedTokenQueries,
    PackedVerdicts, PutGraphRequest, Query, QueryBatch, QueryError, evaluate_request::Payload,
};

/// Numbers of every varint length, small ones most often (as vertex ids and counts are).
fn number() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => 0u64..128,
        3 => 0u64..20_000,
        1 => 0u64..(1 << 28),
        1 => any::<u64>(),
    ]
}

fn packed_queries() -> impl Strategy<Value = PackedTokenQueries> {
    (
        prop_oneof![Just(0u64), number()],
        proptest::collection::vec(number(), 0..40),
        proptest::collection::vec(number(), 0..200),
    )
        .prop_map(|(first_query_id, counts, vertices)| PackedTokenQueries {
            first_query_id,
            token_counts: counts.into_iter().map(|c| c as u32).collect(),
            vertices: vertices.into_iter().map(|v| v as u32).collect(),
        })
}

fn packed_request(packed: PackedTokenQueries) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries: Vec::new(),
            packed_tokens: Some(packed),
        })),
    }
}

/// Packed verdicts in the judge's shape, or now and then with one of the deprecated analysis
/// columns filled (which the codec leaves to prost).
fn packed_verdicts() -> impl Strategy<Value = PackedVerdicts> {
    (
        prop_oneof![Just(0u64), number()],
        proptest::collection::vec(prop_oneof![8 => 0i32..4, 1 => any::<i32>()], 0..100),
        proptest::collection::vec(number(), 0..100),
        proptest::collection::vec((0u32..100, "[a-z ]{0,12}"), 0..3),
        prop_oneof![3 => Just(None), 1 => (0usize..9, number()).prop_map(Some)],
    )
        .prop_map(|(first_query_id, outcomes, nim_sums, errors, deprecated)| {
            let mut packed = PackedVerdicts {
                first_query_id,
                outcomes,
                nim_sums,
                errors: errors
                    .into_iter()
                    .map(|(index, message)| PackedQueryError {
                        index,
                        error: Some(QueryError {
                            field: "tokens.vertices[0]".into(),
                            message,
                        }),
                    })
                    .collect(),
                ..Default::default()
            };
            if let Some((column, value)) = deprecated {
                let small = value as u32;
                match column {
                    0 => packed.remotenesses.push(small),
                    1 => packed.over_budget.push(small),
                    2 => packed.move_counts.push(small),
                    3 => packed.move_sources.push(small),
                    4 => packed.move_targets.push(small),
                    5 => packed.move_outcomes.push((value % 4) as i32),
                    6 => packed.move_remotenesses.push(small),
                    7 => packed.move_over_budget.push(small),
                    _ => packed.moves_omitted.push(value),
                }
            }
            packed
        })
}

fn packed_response(packed: PackedVerdicts) -> EvaluateResponse {
    EvaluateResponse {
        verdicts: Vec::new(),
        graph: None,
        packed_verdicts: Some(packed),
    }
}

fn graph_chunk() -> impl Strategy<Value = PutGraphRequest> {
    let column = || proptest::collection::vec(number(), 0..100);
    (
        prop_oneof![Just(0u64), number()],
        column(),
        column(),
        column(),
        // Fixed-width targets take any value, and often none (as when `targets` are sent).
        prop_oneof![
            Just(Vec::new()),
            proptest::collection::vec(any::<u32>(), 0..100)
        ],
    )
        .prop_map(
            |(vertex_count, out_degrees, targets, split_counts, fixed_targets)| {
                let narrow = |values: Vec<u64>| values.into_iter().map(|v| v as u32).collect();
                PutGraphRequest {
                    chunk: Some(Graph {
                        vertex_count: vertex_count as u32,
                        out_degrees: narrow(out_degrees),
                        targets: narrow(targets),
                        split_counts: narrow(split_counts),
                        fixed_targets,
                    }),
                }
            },
        )
}

/// `bytes` with up to three bytes changed and a possibly shorter end.
fn damaged(bytes: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = bytes.len().max(1);
    (
        proptest::collection::vec((0..len, any::<u8>()), 0..3),
        0..=bytes.len(),
    )
        .prop_map(move |(changes, keep)| {
            let mut bytes = bytes.clone();
            for (at, byte) in changes {
                if let Some(slot) = bytes.get_mut(at) {
                    *slot = byte;
                }
            }
            bytes.truncate(keep.max(bytes.len().saturating_sub(4)));
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn requests_are_written_as_prost_writes_them(packed in packed_queries()) {
        let short = packed.token_counts.iter().chain(&packed.vertices).all(|&n| n < 1 << 28)
            && packed.first_query_id < 1 << 63;
        let request = packed_request(packed);
        let mut ours = Vec::new();
        prop_assert!(encode_request(&request, &mut ours));
        prop_assert_eq!(&ours, &request.encode_to_vec());
        prop_assert_eq!(request_len(&request), Some(ours.len()));
        // Read back by the fast path whenever every varint is short enough for it.
        prop_assert_eq!(decode_request(&ours), short.then_some(request));
    }

    #[test]
    fn responses_are_written_as_prost_writes_them(packed in packed_verdicts()) {
        // The deprecated analysis columns are left to prost, written and read.
        let judge_shape = packed
            == PackedVerdicts {
                first_query_id: packed.first_query_id,
                outcomes: packed.outcomes.clone(),
                nim_sums: packed.nim_sums.clone(),
                errors: packed.errors.clone(),
                ..Default::default()
            };
        let fast = judge_shape
            && packed.errors.is_empty()
            && packed.outcomes.iter().all(|&o| (0..128).contains(&o))
            && packed.nim_sums.iter().all(|&n| n < 1 << 63)
            && packed.first_query_id < 1 << 63;
        let response = packed_response(packed);
        let mut ours = Vec::new();
        prop_assert_eq!(encode_response(&response, &mut ours), judge_shape);
        if judge_shape {
            prop_assert_eq!(&ours, &response.encode_to_vec());
            prop_assert_eq!(response_len(&response), Some(ours.len()));
        } else {
            prop_assert_eq!(response_len(&response), None);
        }
        let encoded = response.encode_to_vec();
        prop_assert_eq!(decode_response(&encoded), fast.then_some(response));
    }

    #[test]
    fn graph_chunks_are_written_as_prost_writes_them(request in graph_chunk()) {
        let chunk = request.chunk.as_ref().unwrap();
        let short = chunk.out_degrees.iter().chain(&chunk.targets).chain(&chunk.split_counts)
            .all(|&n| n < 1 << 28);
        let mut ours = Vec::new();
        prop_assert!(encode_put_graph(&request, &mut ours));
        prop_assert_eq!(&ours, &request.encode_to_vec());
        prop_assert_eq!(put_graph_len(&request), Some(ours.len()));
        prop_assert_eq!(decode_put_graph(&ours), short.then_some(request));
    }

    #[test]
    fn graph_chunks_read_back_as_prost_reads_them(
        bytes in graph_chunk().prop_flat_map(|request| damaged(request.encode_to_vec()))
    ) {
        if let Some(ours) = decode_put_graph(&bytes) {
            prop_assert_eq!(Ok(ours), PutGraphRequest::decode(&bytes[..]));
        }
    }

    #[test]
    fn requests_read_back_as_prost_reads_them(
        bytes in packed_queries().prop_flat_map(|p| damaged(packed_request(p).encode_to_vec()))
    ) {
        if let Some(ours) = decode_request(&bytes) {
            prop_assert_eq!(Ok(ours), EvaluateRequest::decode(&bytes[..]));
        }
    }

    #[test]
    fn responses_read_back_as_prost_reads_them(
        bytes in packed_verdicts().prop_flat_map(|p| damaged(packed_response(p).encode_to_vec()))
    ) {
        if let Some(ours) = decode_response(&bytes) {
            prop_assert_eq!(Ok(ours), EvaluateResponse::decode(&bytes[..]));
        }
    }
}

#[test]
fn one_byte_columns_longer_than_a_stage_are_written_as_prost_writes_them() {
    // Outcomes and nim-sums all under 0x80 (a byte a value, written as low bytes), over
    // several stages; then one nim-sum of two bytes, which takes the varint loop.
    let count = 3 * super::varint::STAGE + 5;
    let mut packed = PackedVerdicts {
        first_query_id: 1,
        outcomes: (0..count).map(|i| (i % 4) as i32).collect(),
        nim_sums: (0..count).map(|i| (i * 7 % 128) as u64).collect(),
        ..Default::default()
    };
    for round in 0..2 {
        let response = packed_response(packed.clone());
        let mut ours = Vec::new();
        assert!(encode_response(&response, &mut ours));
        assert_eq!(ours, response.encode_to_vec(), "round {round}");
        assert_eq!(decode_response(&ours), Some(response));
        packed.nim_sums[count / 2] = 200;
    }
}

#[test]
fn common_shapes_take_the_fast_path() {
    let request = packed_request(PackedTokenQueries {
        first_query_id: 7,
        token_counts: vec![2, 0, 1],
        vertices: vec![5, 300, 1 << 20],
    });
    assert_eq!(decode_request(&request.encode_to_vec()), Some(request));
    let response = packed_response(PackedVerdicts {
        first_query_id: 7,
        outcomes: vec![1, 2, 3],
        nim_sums: vec![0, 1 << 40, 3],
        ..Default::default()
    });
    assert_eq!(decode_response(&response.encode_to_vec()), Some(response));
    let analysed = packed_response(PackedVerdicts {
        first_query_id: 7,
        outcomes: vec![1, 2],
        nim_sums: vec![1, 0],
        remotenesses: vec![1, 0],
        move_counts: vec![1, 0],
        move_sources: vec![0],
        move_targets: vec![1],
        move_outcomes: vec![1],
        move_remotenesses: vec![0],
        moves_omitted: vec![0, 0],
        ..Default::default()
    });
    // The deprecated analysis columns are left to prost.
    assert_eq!(decode_response(&analysed.encode_to_vec()), None);
    let upload = PutGraphRequest {
        chunk: Some(Graph {
            vertex_count: 3,
            out_degrees: vec![2, 0, 1],
            targets: vec![1, 2, 300],
            split_counts: Vec::new(),
            fixed_targets: Vec::new(),
        }),
    };
    assert_eq!(decode_put_graph(&upload.encode_to_vec()), Some(upload));
    let empty = packed_request(PackedTokenQueries::default());
    assert_eq!(decode_request(&empty.encode_to_vec()), Some(empty));
}

#[test]
fn other_shapes_are_left_to_prost() {
    let start = EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart::default())),
    };
    let mixed = EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries: vec![Query::default()],
            packed_tokens: Some(PackedTokenQueries::default()),
        })),
    };
    let without_packed = EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch::default())),
    };
    let by_id = EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::GraphId("an id".into())),
            ..Default::default()
        })),
    };
    for request in [
        start,
        by_id,
        mixed,
        without_packed,
        EvaluateRequest::default(),
    ] {
        assert!(!encode_request(&request, &mut Vec::new()));
        assert_eq!(decode_request(&request.encode_to_vec()), None);
    }
    let with_summary = EvaluateResponse {
        graph: Some(Default::default()),
        ..Default::default()
    };
    assert!(!encode_response(&with_summary, &mut Vec::new()));
    assert_eq!(decode_response(&with_summary.encode_to_vec()), None);
    let with_error = packed_response(PackedVerdicts {
        errors: vec![PackedQueryError::default()],
        ..Default::default()
    });
    assert_eq!(decode_response(&with_error.encode_to_vec()), None);
    // A packed field sent twice (prost concatenates) and a field unknown to the fast path.
    let twice = [0x12, 0x08, 0x12, 0x06, 0x1a, 0x01, 0x05, 0x1a, 0x01, 0x06];
    assert_eq!(decode_request(&twice), None);
    let merged = packed_request(PackedTokenQueries {
        vertices: vec![5, 6],
        ..Default::default()
    });
    assert_eq!(EvaluateRequest::decode(&twice[..]), Ok(merged));
    let empty_upload = PutGraphRequest::default();
    assert!(!encode_put_graph(&empty_upload, &mut Vec::new()));
    assert_eq!(decode_put_graph(&empty_upload.encode_to_vec()), None);
    // Unpacked repeated numbers (valid protobuf; prost reads them).
    let unpacked = [0x0a, 0x04, 0x18, 0x05, 0x18, 0x06];
    assert_eq!(decode_put_graph(&unpacked), None);
    assert_eq!(
        PutGraphRequest::decode(&unpacked[..])
            .unwrap()
            .chunk
            .unwrap()
            .targets,
        vec![5, 6]
    );
    // Fixed-width targets whose length is not a multiple of four.
    let cut_fixed = [0x0a, 0x05, 0x2a, 0x03, 0x01, 0x02, 0x03];
    assert_eq!(decode_put_graph(&cut_fixed), None);
    assert!(PutGraphRequest::decode(&cut_fixed[..]).is_err());
    let unknown = [0x12, 0x04, 0x12, 0x02, 0x28, 0x01];
    assert_eq!(decode_request(&unknown), None);
    assert!(EvaluateRequest::decode(&unknown[..]).is_ok());
}

/// Every field number the hand-written paths use is the proto's, and the messages they
/// encode field by field have no field beyond those.
#[test]
fn field_numbers_are_those_of_the_compiled_proto() {
    use prost_types::FileDescriptorSet;
    let set = FileDescriptorSet::decode(crate::proto::FILE_DESCRIPTOR_SET).unwrap();
    let messages: Vec<_> = set
        .file
        .iter()
        .filter(|file| file.package() == "grundy.v1")
        .flat_map(|file| &file.message_type)
        .collect();
    let number = |message: &str, field: &str| {
        let message = messages.iter().find(|m| m.name() == message)?;
        let field = message.field.iter().find(|f| f.name() == field)?;
        u32::try_from(field.number()).ok()
    };
    for &(message, field, tag) in super::tags::ALL {
        assert_eq!(number(message, field), Some(tag), "{message}.{field}");
        assert!(
            tag < 16,
            "{message}.{field}: the fast path needs one-byte keys"
        );
    }
    for whole in [
        "PackedTokenQueries",
        "PackedVerdicts",
        "PutGraphRequest",
        "Graph",
    ] {
        let message = messages.iter().find(|m| m.name() == whole).unwrap();
        // Deprecated fields (never written) are left to prost, and need no constant.
        let deprecated = |field: &prost_types::FieldDescriptorProto| {
            field
                .options
                .as_ref()
                .is_some_and(|options| options.deprecated())
        };
        for field in message.field.iter().filter(|field| !deprecated(field)) {
            let known = super::tags::ALL
                .iter()
                .any(|&(m, f, _)| m == whole && f == field.name());
            assert!(known, "{whole}.{} has no constant", field.name());
        }
    }
}
