//! Bad-input tier: every kind of malformed RPC over real sockets, table-driven. Each case
//! names the status code the API documents (`proto/grundy/v1/grundy.proto`, README "The
//! API") and a piece of the message that names the field (and index, or the limit). After
//! every case the same client must still get a valid stream answered: one bad request never
//! disturbs the server.
//!
//! Malformed queries are answered in-band (a `Verdict.error` naming `field[index]`), so they
//! have their own table, on one stream that must go on after each. Bytes that are not a
//! gRPC message at all are sent raw over HTTP/2 with the `h2` crate.

#[path = "../support/mod.rs"]
mod support;

mod cases;

use bytes::Bytes;
use cases::{Call, Case, config, evaluate_cases, other_cases, packed};
use grundy::proto::{self, Query, grundy_service_client::GrundyServiceClient, query::Position};
use support::server::{
    PATIENCE, TestServer, batch, chain, grpc_frame, next, raw_answer, sample_graph, serve, start,
    tokens,
};
use tonic::transport::Channel;
use tonic::{Code, Status};

/// The final status of `call`, or `Ok` if it succeeded.
async fn status_of(client: &mut GrundyServiceClient<Channel>, call: Call) -> Result<(), Status> {
    match call {
        Call::Evaluate(requests) => {
            let mut stream = client
                .evaluate(tokio_stream::iter(requests))
                .await?
                .into_inner();
            drain(&mut stream).await
        }
        Call::Batch(request) => {
            drain(&mut client.evaluate_batch(request).await?.into_inner()).await
        }
        Call::Put(chunks) => client.put_graph(tokio_stream::iter(chunks)).await.map(drop),
        Call::Values(request) => drain(&mut client.get_values(request).await?.into_inner()).await,
    }
}

async fn drain<T>(stream: &mut tonic::Streaming<T>) -> Result<(), Status> {
    loop {
        match tokio::time::timeout(PATIENCE, stream.message()).await {
            Ok(Ok(Some(_))) => continue,
            Ok(Ok(None)) => return Ok(()),
            Ok(Err(status)) => return Err(status),
            Err(_) => panic!("the stream neither ended nor answered within {PATIENCE:?}"),
        }
    }
}

/// The server still answers a valid stream: the docs/games.md sample's first two verdicts.
async fn assert_serves(client: &mut GrundyServiceClient<Channel>, after: &str) {
    let requests = vec![
        start(sample_graph()),
        batch(vec![tokens(1, &[0]), tokens(2, &[1, 3])]),
    ];
    let mut stream = client
        .evaluate(tokio_stream::iter(requests))
        .await
        .unwrap_or_else(|s| panic!("after {after}: a valid stream was refused: {s}"))
        .into_inner();
    next(&mut stream).await.expect("the summary");
    let response = next(&mut stream).await.expect("the verdicts");
    let outcomes: Vec<i32> = response.verdicts.iter().map(|v| v.outcome).collect();
    let expected = vec![proto::Outcome::Win as i32, proto::Outcome::Lose as i32];
    assert_eq!(outcomes, expected, "after {after}");
}

async fn check_table(server: &TestServer, cases: Vec<Case>) {
    let mut client = server.client().await;
    let mut failures = Vec::new();
    let count = cases.len();
    for case in cases {
        match status_of(&mut client, case.call).await {
            Ok(()) => failures.push(format!(
                "{}: succeeded, expected {:?}",
                case.name, case.code
            )),
            Err(status) => {
                if status.code() != case.code || !status.message().contains(case.message) {
                    failures.push(format!(
                        "{}: got {:?} {:?}, expected {:?} containing {:?}",
                        case.name,
                        status.code(),
                        excerpt(status.message()),
                        case.code,
                        case.message
                    ));
                }
            }
        }
        assert_serves(&mut client, case.name).await;
    }
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn excerpt(text: &str) -> String {
    text.chars().take(200).collect()
}

#[tokio::test]
async fn malformed_evaluate_streams_get_the_documented_status() {
    let server = serve(config()).await;
    check_table(&server, evaluate_cases()).await;
}

#[tokio::test]
async fn malformed_batches_uploads_and_ids_get_the_documented_status() {
    let server = serve(config()).await;
    check_table(&server, other_cases()).await;
}

/// In-band errors: each malformed query gets a verdict naming the field and index, and the
/// next, valid query of the same stream is answered.
#[tokio::test]
async fn malformed_queries_are_answered_in_band_naming_field_and_index() {
    let server = serve(config()).await;
    let mut client = server.client().await;
    let dense = |values: &[u64]| {
        Some(Position::DenseValues(proto::DenseValues {
            values: values.to_vec(),
        }))
    };
    let sparse = |vertices: &[u32], values: &[u64]| {
        Some(Position::SparseValues(proto::SparseValues {
            vertices: vertices.to_vec(),
            values: values.to_vec(),
        }))
    };
    let token_list = |vertices: &[u32]| {
        Some(Position::Tokens(proto::TokenPosition {
            vertices: vertices.to_vec(),
        }))
    };
    let table: Vec<(Option<Position>, &str, &str)> = vec![
        (None, "position", "needs a position"),
        (token_list(&[0, 4]), "tokens.vertices[1]", "out of range"),
        (
            token_list(&[3, 2, u32::MAX]),
            "tokens.vertices[2]",
            "4294967295",
        ),
        (dense(&[1, 0, 0]), "dense_values.values", "has 3 entries"),
        (
            dense(&[1, 0, 0, 0, 9]),
            "dense_values.values",
            "has 5 entries",
        ),
        (
            sparse(&[0, 1], &[1]),
            "sparse_values.values",
            "must pair up",
        ),
        (
            sparse(&[0, 9], &[1, 1]),
            "sparse_values.vertices[1]",
            "out of range",
        ),
    ];
    let mut requests = vec![start(sample_graph())];
    for (i, (position, _, _)) in table.iter().enumerate() {
        let bad = Query {
            id: 2 * i as u64,
            position: position.clone(),
        };
        requests.push(batch(vec![bad, tokens(2 * i as u64 + 1, &[0])]));
    }
    requests.push(packed(vec![1, 2, 1], vec![0, 2, 8, 1]));
    let mut stream = client
        .evaluate(tokio_stream::iter(requests))
        .await
        .unwrap()
        .into_inner();
    next(&mut stream).await.expect("the summary");
    for (i, (_, field, message)) in table.iter().enumerate() {
        let response = next(&mut stream).await.expect("a response per batch");
        let [bad, good] = &response.verdicts[..] else {
            panic!("two verdicts per batch")
        };
        let error = bad
            .error
            .as_ref()
            .unwrap_or_else(|| panic!("query {i}: no error"));
        assert_eq!(
            (bad.query_id, error.field.as_str()),
            (2 * i as u64, *field),
            "query {i}"
        );
        assert!(
            error.message.contains(message),
            "query {i}: {:?}",
            error.message
        );
        assert_eq!(
            (good.query_id, good.outcome),
            (2 * i as u64 + 1, proto::Outcome::Win as i32)
        );
    }
    let packed = next(&mut stream)
        .await
        .unwrap()
        .packed_verdicts
        .expect("packed verdicts");
    assert_eq!(packed.errors.len(), 1);
    let error = packed.errors[0].error.as_ref().unwrap();
    assert_eq!(
        (packed.errors[0].index, error.field.as_str()),
        (1, "packed_tokens.vertices[2]")
    );
    assert_eq!(packed.outcomes[0], proto::Outcome::Win as i32);
    assert!(
        stream.message().await.unwrap().is_none(),
        "the stream ends cleanly"
    );
    assert_serves(&mut client, "in-band errors").await;
}

/// Bytes that are no valid gRPC request, sent raw over HTTP/2: the stream ends with an error
/// status (never a hang, never a dead server) and the server serves the next client.
#[tokio::test]
async fn raw_malformed_frames_end_the_stream_and_the_server_serves_on() {
    let server = serve(config()).await;
    let garbage: Vec<(&str, Vec<u8>)> = vec![
        ("not protobuf", grpc_frame(0, &[0xff; 16])),
        ("wrong wire type for start", grpc_frame(0, &[0x08, 0x01])),
        ("truncated frame", {
            let mut bytes = grpc_frame(0, &[0x0a, 0x00]);
            bytes[4] = 100; // claims 100 bytes, sends 2
            bytes
        }),
        (
            "compressed flag without grpc-encoding",
            grpc_frame(1, &[0x0a, 0x00]),
        ),
        ("half a frame header", vec![0, 0]),
    ];
    let mut client = server.client().await;
    for (name, body) in garbage {
        let (code, message) = raw_evaluate(&server, body).await;
        assert!(
            matches!(code, Some(Code::InvalidArgument | Code::Internal)),
            "{name}: got {code:?} {message:?}"
        );
        assert!(!message.is_empty(), "{name}: an empty message");
        assert_serves(&mut client, name).await;
    }
}

/// Undecodable request bytes are the client's fault: tonic reports them as INTERNAL ("failed
/// to decode Protobuf message", "Unexpected EOF decoding stream"), the code this API keeps for
/// server bugs, and the server rewrites them to INVALID_ARGUMENT, for the streamed requests
/// (`Evaluate`, `PutGraph`) as for the unary ones (`EvaluateBatch`, `GetValues`), which
/// tonic refuses before their handlers run.
#[tokio::test]
async fn raw_malformed_frames_are_invalid_argument() {
    let server = serve(config()).await;
    for method in ["Evaluate", "PutGraph", "EvaluateBatch", "GetValues"] {
        for body in [
            grpc_frame(0, &[0xff; 16]),
            grpc_frame(0, &[0x08, 0x01]),
            vec![0, 0],
        ] {
            let (code, message) = raw_call(&server, method, body).await;
            assert_eq!(code, Some(Code::InvalidArgument), "{method}: {message}");
        }
    }
}

/// A message that does not decode deep inside is named down to the field: tonic's decoder
/// text comes from the schema, not from the client, and is kept whole.
#[tokio::test]
async fn an_undecodable_field_is_named_by_its_path() {
    let server = serve(config()).await;
    // EvaluateRequest.start.graph, whose packed `targets` end inside a varint.
    let graph = [0x08, 0x02, 0x1a, 0x02, 0xff, 0xff];
    let start = [&[0x0a, graph.len() as u8][..], &graph].concat();
    let request = [&[0x0a, start.len() as u8][..], &start].concat();
    let (code, message) = raw_evaluate(&server, grpc_frame(0, &request)).await;
    assert_eq!(code, Some(Code::InvalidArgument), "{message}");
    // (grpc-message is percent-encoded; the names need no escapes.)
    for named in [
        "Graph.targets",
        "EvaluateStart.graph_source",
        "EvaluateRequest.payload",
    ] {
        assert!(message.contains(named), "{named} in {message}");
    }
}

/// Sends `body` as the whole request body of an `Evaluate` call; returns grpc-status and
/// grpc-message (from the headers of a trailers-only answer, or from the trailers).
async fn raw_evaluate(server: &TestServer, body: Vec<u8>) -> (Option<Code>, String) {
    raw_call(server, "Evaluate", body).await
}

/// [`raw_evaluate`] for a call of `method`.
async fn raw_call(server: &TestServer, method: &str, body: Vec<u8>) -> (Option<Code>, String) {
    let mut client = server.raw_client().await;
    let (response, mut send) = client
        .send_request(server.raw_request(method), false)
        .unwrap();
    send.send_data(Bytes::from(body), true).unwrap();
    let answer = raw_answer(response).await;
    (answer.code, answer.message)
}

/// A long chain and many streams do not matter: every case above used one connection, and
/// one more connection after all of them still works.
#[tokio::test]
async fn a_fresh_client_is_served_after_a_burst_of_bad_streams() {
    let server = serve(config()).await;
    let mut client = server.client().await;
    for case in evaluate_cases().into_iter().take(12) {
        let _ = status_of(&mut client, case.call).await;
    }
    let mut fresh = server.client().await;
    let requests = vec![start(chain(1000)), batch(vec![tokens(7, &[0])])];
    let mut stream = fresh
        .evaluate(tokio_stream::iter(requests))
        .await
        .unwrap()
        .into_inner();
    next(&mut stream).await.unwrap();
    let verdict = &next(&mut stream).await.unwrap().verdicts[0];
    // A chain of 1000 vertices: vertex 0 is 999 moves from the end, odd: WIN.
    assert_eq!(
        (verdict.query_id, verdict.outcome),
        (7, proto::Outcome::Win as i32)
    );
}
