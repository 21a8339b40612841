//! The `grundy.v1` messages in proto3 JSON, read and written by serde code that `build.rs`
//! generates from the descriptors (`build/json_codegen.rs`), straight into and out of the
//! prost structs: [`Generated`] names each message, reads one from JSON into its protobuf
//! bytes and writes one from its protobuf bytes as JSON.

pub(crate) use self::code::Generated;

#[allow(clippy::all, dead_code, deprecated, unused_imports, unused_mut)]
mod code {
    use super::super::scalars::{
        Bool, Decimal, Decimals, EnumName, EnumNames, EnumSeed, I32, I64, List, Message, Nullable,
        Text, U32, U64, WriteError, encode, write,
    };

    include!(concat!(env!("OUT_DIR"), "/grundy.v1.json.rs"));
}

/// The generated code against prost-reflect's dynamic mapping (the routes' documented
/// behaviour): the same bytes from the same JSON, the same error text from bad JSON, and the
/// same JSON from the same message.
#[cfg(test)]
mod tests {
    use bytes::BytesMut;
    use prost::Message as _;
    use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, SerializeOptions};

    use super::Generated;
    use crate::proto;

    fn pool() -> DescriptorPool {
        DescriptorPool::decode(proto::FILE_DESCRIPTOR_SET).unwrap()
    }

    /// (the encoding, or the error text) of `json` read as `name`, by the generated code and
    /// by prost-reflect.
    fn both_read(name: &str, json: &str) -> (Result<Vec<u8>, String>, Result<Vec<u8>, String>) {
        let generated = Generated::by_name(name).unwrap();
        let mut out = BytesMut::new();
        let mut deserializer = serde_json::Deserializer::from_str(json);
        let ours = generated
            .read_json(&mut deserializer, &mut out)
            .and_then(|()| deserializer.end())
            .map(|()| out.to_vec())
            .map_err(|error| error.to_string());
        let descriptor = pool().get_message_by_name(name).unwrap();
        let options = DeserializeOptions::new().deny_unknown_fields(true);
        let mut deserializer = serde_json::Deserializer::from_str(json);
        let theirs =
            DynamicMessage::deserialize_with_options(descriptor, &mut deserializer, &options)
                .and_then(|message| deserializer.end().map(|()| message.encode_to_vec()))
                .map_err(|error| error.to_string());
        (ours, theirs)
    }

    #[test]
    fn requests_read_as_the_dynamic_mapping_reads_them() {
        let cases = [
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"graph": {"vertexCount": 4, "outDegrees": [2,0,1,0], "targets": [1,2,3]}, "explain": true}, "queries": [{"id": 1, "tokens": {"vertices": [0]}}, {"id": "2", "tokens": {"vertices": [1, 3]}}]}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"graph_id": "ab", "analysis": {"max_moves": 3, "positionBudget": "18446744073709551615"}}}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"graph": {}, "graphId": "x"}}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"graph": null, "graphId": "x"}}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"explain": 1}}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"graph": {"vertexCounts": 3}}}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"graph": {"vertexCount": "three"}}}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"graph": {"vertexCount": 1e400}}}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"graph": {"vertexCount": 123456789012345678901234567890}}}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"graph": {"vertexCount": 2.0, "targets": [1.5]}}}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"graph": {"vertexCount": 4294967296}}}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"queries": [{"id": "1", "tokens": {"vertices": [-1]}}]}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"queries": [{"id": -1}]}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"queries": [{"tokens": {"vertices": [1, null]}}]}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"queries": [{"tokens": {"vertices": 5}}]}"#,
            ),
            ("grundy.v1.EvaluateBatchRequest", r#"{"queries": [null]}"#),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"queries": null, "start": null}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"queries": [{"id": 1}], "queries": [{"id": 2}]}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"queries": [{"tokens": {}, "denseValues": {"values": ["7", 8]}}]}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"queries": [{"sparse_values": {"vertices": [1], "values": [" 1"]}}]}"#,
            ),
            ("grundy.v1.EvaluateBatchRequest", r#"{"start": [1]}"#),
            ("grundy.v1.EvaluateBatchRequest", r#"[]"#),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"graph": {"vertexCount": 3, "vertexCount": null}}}"#,
            ),
            (
                "grundy.v1.EvaluateBatchRequest",
                r#"{"start": {"graph": {"outDegrees": [1, 1 0]}}}"#,
            ),
            (
                "grundy.v1.EvaluateRequest",
                r#"{"start": {"explain": false}, "queries": {}}"#,
            ),
            (
                "grundy.v1.Graph",
                r#"{"vertexCount": 2, "outDegrees": [1, 0], "fixedTargets": [1], "split_counts": [1, "2"]}"#,
            ),
            (
                "grundy.v1.GetValuesRequest",
                r#"{"graphId": "\u0041b", "summaryOnly": true, "page_size": "5"}"#,
            ),
            (
                "grundy.v1.PackedVerdicts",
                r#"{"outcomes": ["OUTCOME_WIN", 2, 7], "moveOutcomes": []}"#,
            ),
            ("grundy.v1.PackedVerdicts", r#"{"outcomes": ["WIN"]}"#),
            ("grundy.v1.PackedVerdicts", r#"{"outcomes": [1.0]}"#),
            ("grundy.v1.Verdict", r#"{"remoteness": 1, "remoteness": 2}"#),
            (
                "grundy.v1.Verdict",
                r#"{"remoteness": 0, "bestMove": {"split": {"oddTargets": [1]}}}"#,
            ),
        ];
        let mut refused = 0;
        for (name, json) in cases {
            let (ours, theirs) = both_read(name, json);
            assert_eq!(ours, theirs, "{name}: {json}");
            refused += usize::from(ours.is_err());
        }
        // Both kinds of case are there: read and refused.
        assert!((10..cases.len() - 5).contains(&refused), "{refused}");
    }

    #[test]
    fn responses_are_written_as_the_dynamic_mapping_writes_them() {
        let summary = proto::GraphSummary {
            vertex_count: 4,
            edge_count: 3,
            graph_id: "ab".into(),
            ..Default::default()
        };
        let verdict = proto::Verdict {
            query_id: u64::MAX,
            outcome: proto::Outcome::Win as i32,
            nim_sum: 2,
            error: Some(proto::QueryError {
                field: "queries[0]".into(),
                message: "\"quoted\" \u{1}".into(),
            }),
            best_move: Some(proto::Move {
                kind: Some(proto::r#move::Kind::Token(proto::TokenMove::default())),
            }),
            remoteness: Some(0),
            remoteness_unknown: 9,
            moves: vec![proto::AnalysedMove {
                r#move: Some(proto::Move {
                    kind: Some(proto::r#move::Kind::Split(proto::SplitMove {
                        odd_targets: vec![1, 2],
                        ..Default::default()
                    })),
                }),
                outcome: proto::Outcome::Draw as i32,
                remoteness: None,
                over_budget: true,
            }],
            moves_omitted: 0,
        };
        let batch = proto::EvaluateBatchResponse {
            verdicts: vec![verdict, proto::Verdict::default()],
            graph: Some(summary.clone()),
        };
        let values = proto::GetValuesResponse {
            graph: None,
            first_vertex: 1,
            values: vec![
                proto::VertexValue {
                    value: Some(proto::vertex_value::Value::Finite(0)),
                    counter: None,
                    remoteness: Some(1),
                    outcome: Some(proto::Outcome::Win.into()),
                },
                proto::VertexValue {
                    value: Some(proto::vertex_value::Value::Infinite(proto::InfiniteValue {
                        finite_followers: vec![0, 5],
                    })),
                    counter: Some(7),
                    remoteness: None,
                    outcome: None,
                },
            ],
        };
        #[allow(deprecated)]
        let packed = proto::PackedVerdicts {
            outcomes: vec![1, 2, 11],
            nim_sums: vec![0, u64::MAX],
            moves_omitted: vec![3],
            ..Default::default()
        };
        let put = proto::PutGraphResponse {
            graph_id: "ab".into(),
            graph: Some(summary),
            already_registered: true,
        };
        let messages: [(&str, Vec<u8>); 5] = [
            ("grundy.v1.EvaluateBatchResponse", batch.encode_to_vec()),
            ("grundy.v1.EvaluateBatchResponse", Vec::new()),
            ("grundy.v1.GetValuesResponse", values.encode_to_vec()),
            ("grundy.v1.PackedVerdicts", packed.encode_to_vec()),
            ("grundy.v1.PutGraphResponse", put.encode_to_vec()),
        ];
        for (name, bytes) in messages {
            let mut ours = Vec::new();
            Generated::by_name(name)
                .unwrap()
                .write_json(&bytes, &mut ours)
                .unwrap();
            let descriptor = pool().get_message_by_name(name).unwrap();
            let message = DynamicMessage::decode(descriptor, bytes.as_slice()).unwrap();
            let mut theirs = serde_json::Serializer::new(Vec::new());
            let options = SerializeOptions::new().skip_default_fields(false);
            message
                .serialize_with_options(&mut theirs, &options)
                .unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(theirs.into_inner()).unwrap(),
                "{name}"
            );
        }
    }

    /// Every `grundy.v1` message of a route, and those in their fields, take the generated
    /// path (another package's would go through the descriptors).
    #[test]
    fn every_message_of_the_service_has_generated_code() {
        let pool = pool();
        let service = pool.get_service_by_name("grundy.v1.GrundyService").unwrap();
        for method in service.methods() {
            for message in [method.input(), method.output()] {
                for field in message.fields() {
                    if let prost_reflect::Kind::Message(inner) = field.kind()
                        && inner.package_name() == "grundy.v1"
                    {
                        assert!(
                            Generated::by_name(inner.full_name()).is_some(),
                            "{}",
                            inner.full_name()
                        );
                    }
                }
                assert!(
                    message.package_name() != "grundy.v1"
                        || Generated::by_name(message.full_name()).is_some(),
                    "{}",
                    message.full_name()
                );
            }
        }
    }
}
