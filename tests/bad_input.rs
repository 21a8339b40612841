//! Bad-input tier: every kind of malformed RPC over real sockets, table-driven. Each case
//! names the status code the API documents (`proto/grundy/v1/grundy.proto`, README "The
//! API") and a piece of the message that names the field (and index, or the limit). After
//! every case the same client must still get a valid stream answered: one bad request never
//! disturbs the server.
//!
//! Malformed queries are answered in-band (a `Verdict.error` naming `field[index]`), so they
//! have their own table, on one stream that must go on after each. Bytes that are not a
//! gRPC message at all are sent raw over HTTP/2 with the `h2` crate.

mod support;

use bytes::Bytes;
use grundy::engine::Limits;
use grundy::proto::{
    self, EvaluateBatchRequest, EvaluateRequest, EvaluateStart, GetValuesRequest,
    PackedTokenQueries, PutGraphRequest, Query, QueryBatch, evaluate_request::Payload,
    evaluate_start::GraphSource, grundy_service_client::GrundyServiceClient, query::Position,
};
use grundy::server::ServerConfig;
use grundy::service::ServiceConfig;
use support::server::{
    PATIENCE, TestServer, batch, chain, next, sample_graph, serve, start, tokens,
    tournament_with_self_loop,
};
use tonic::transport::Channel;
use tonic::{Code, Status};

const MAX_VERTICES: u32 = 10_000;
const MAX_EDGES: u64 = 100_000;
const MAX_QUERIES: u64 = 1_000;
const MAX_MESSAGE_BYTES: usize = 1 << 20;

fn config() -> ServerConfig {
    ServerConfig {
        service: ServiceConfig {
            compute_concurrency: 2,
            max_vertices: MAX_VERTICES,
            max_edges: MAX_EDGES,
            max_queries_per_stream: MAX_QUERIES,
            limits: Limits {
                cyclic_work_budget: 1_000_000,
                ..Limits::default()
            },
            ..ServiceConfig::default()
        },
        max_message_bytes: MAX_MESSAGE_BYTES,
        ..ServerConfig::default()
    }
}

/// One malformed call and what it must get.
struct Case {
    name: &'static str,
    call: Call,
    code: Code,
    message: &'static str,
}

enum Call {
    Evaluate(Vec<EvaluateRequest>),
    Batch(EvaluateBatchRequest),
    Put(Vec<PutGraphRequest>),
    Values(GetValuesRequest),
}

fn graph(vertex_count: u32, out_degrees: &[u32], targets: &[u32], splits: &[u32]) -> proto::Graph {
    proto::Graph {
        vertex_count,
        out_degrees: out_degrees.to_vec(),
        targets: targets.to_vec(),
        split_counts: splits.to_vec(),
    }
}

fn start_id(graph_id: &str) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::GraphId(graph_id.into())),
            explain: false,
        })),
    }
}

fn packed(token_counts: Vec<u32>, vertices: Vec<u32>) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries: vec![],
            packed_tokens: Some(PackedTokenQueries {
                first_id: 0,
                token_counts,
                vertices,
            }),
        })),
    }
}

fn chunk(graph: proto::Graph) -> PutGraphRequest {
    PutGraphRequest { chunk: Some(graph) }
}

/// A split-count game whose vertex 0 needs about 2^55 steps (64 successors of independent
/// values, K = 20): over any work budget.
fn too_hard_split_game() -> proto::Graph {
    let mut out_degrees = vec![64u32];
    let mut targets: Vec<u32> = (1..=64).collect();
    let mut split_counts = vec![20u32];
    for j in 1..=64u32 {
        out_degrees.push(j - 1);
        targets.extend(1..j);
        split_counts.push(j - 1);
    }
    graph(65, &out_degrees, &targets, &split_counts)
}

fn many_queries(count: u64) -> Vec<Query> {
    (0..count).map(|id| tokens(id, &[0])).collect()
}

fn evaluate_cases() -> Vec<Case> {
    use Code::*;
    let e = |name, requests, code, message| Case {
        name,
        call: Call::Evaluate(requests),
        code,
        message,
    };
    let g = |name, graph, code, message| e(name, vec![start(graph)], code, message);
    let sample = sample_graph;
    vec![
        g(
            "no vertices",
            graph(0, &[], &[], &[]),
            InvalidArgument,
            "vertex_count must be at least 1",
        ),
        g(
            "out_degrees short",
            graph(4, &[2, 0, 1], &[1, 2, 3], &[]),
            InvalidArgument,
            "out_degrees has 3 entries, expected vertex_count = 4",
        ),
        g(
            "out_degrees long",
            graph(4, &[2, 0, 1, 0, 0], &[1, 2, 3], &[]),
            InvalidArgument,
            "out_degrees has 5 entries",
        ),
        g(
            "targets short",
            graph(4, &[2, 0, 1, 0], &[1, 2], &[]),
            InvalidArgument,
            "targets has 2 entries, expected the sum of out_degrees = 3",
        ),
        g(
            "targets long",
            graph(4, &[2, 0, 1, 0], &[1, 2, 3, 0], &[]),
            InvalidArgument,
            "targets has 4 entries",
        ),
        g(
            "target out of range",
            graph(4, &[2, 0, 1, 0], &[1, 2, 7], &[]),
            InvalidArgument,
            "targets[2] = 7 is out of range (vertex_count 4)",
        ),
        g(
            "target u32::MAX",
            graph(2, &[1, 0], &[u32::MAX], &[]),
            InvalidArgument,
            "targets[0] = 4294967295 is out of range",
        ),
        g(
            "out_degrees overflow u32",
            graph(3, &[u32::MAX, u32::MAX, 2], &[], &[]),
            InvalidArgument,
            "8589934592 edges",
        ),
        g(
            "split_counts short",
            graph(4, &[2, 0, 1, 0], &[1, 2, 3], &[1, 1]),
            InvalidArgument,
            "split_counts has 2 entries, expected vertex_count = 4",
        ),
        g(
            "split cycle",
            graph(3, &[1, 1, 1], &[1, 2, 0], &[1, 1, 1]),
            InvalidArgument,
            "0 -> 1 -> 2 -> 0",
        ),
        g(
            "split self-loop",
            graph(2, &[1, 1], &[1, 1], &[1, 1]),
            InvalidArgument,
            "1 -> 1",
        ),
        g(
            "over max_vertices",
            graph(MAX_VERTICES + 1, &[], &[], &[]),
            ResourceExhausted,
            "max_vertices",
        ),
        g(
            "vertex_count u32::MAX",
            graph(u32::MAX, &[], &[], &[]),
            ResourceExhausted,
            "max_vertices = 10000",
        ),
        g(
            "over max_edges",
            graph(
                2,
                &[MAX_EDGES as u32 + 1, 0],
                &vec![1; MAX_EDGES as usize + 1],
                &[],
            ),
            ResourceExhausted,
            "max_edges = 100000",
        ),
        g(
            "over max_message_bytes",
            graph(2, &[1_100_000, 0], &vec![1; 1_100_000], &[]),
            ResourceExhausted,
            "max_message_bytes",
        ),
        g(
            "over the cyclic work budget",
            tournament_with_self_loop(300),
            ResourceExhausted,
            "max_cyclic_work = 1000000",
        ),
        g(
            "split game too hard",
            too_hard_split_game(),
            ResourceExhausted,
            "vertex",
        ),
        e(
            "empty graph_id",
            vec![start_id("")],
            NotFound,
            "not registered",
        ),
        e(
            "unknown graph_id",
            vec![start_id(&"0".repeat(64))],
            NotFound,
            "not registered",
        ),
        e(
            "graph_id with control bytes",
            vec![start_id("../\n\0\u{7f}é")],
            NotFound,
            "not registered",
        ),
        e(
            "start without a graph",
            vec![EvaluateRequest {
                payload: Some(Payload::Start(EvaluateStart::default())),
            }],
            InvalidArgument,
            "start.graph_source",
        ),
        e(
            "no message at all",
            vec![],
            InvalidArgument,
            "must carry `start`",
        ),
        e(
            "queries first",
            vec![batch(vec![tokens(1, &[0])])],
            InvalidArgument,
            "must carry `start`, not `queries`",
        ),
        e(
            "empty first message",
            vec![EvaluateRequest { payload: None }],
            InvalidArgument,
            "must carry `start`",
        ),
        e(
            "start twice",
            vec![start(sample()), start(sample())],
            InvalidArgument,
            "`start` may only be sent once",
        ),
        e(
            "empty later message",
            vec![start(sample()), EvaluateRequest { payload: None }],
            InvalidArgument,
            "neither `start` nor `queries`",
        ),
        e(
            "packed counts disagree",
            vec![start(sample()), packed(vec![2, 1], vec![0, 1])],
            InvalidArgument,
            "packed_tokens: token_counts add up to 3 but vertices has 2 entries",
        ),
        e(
            "packed counts overflow u32",
            vec![
                start(sample()),
                packed(vec![u32::MAX, u32::MAX, 2], vec![0]),
            ],
            InvalidArgument,
            "token_counts add up to 8589934592 but vertices has 1",
        ),
        e(
            "too many queries in one batch",
            vec![start(sample()), batch(many_queries(MAX_QUERIES + 1))],
            ResourceExhausted,
            "max_queries_per_stream = 1000",
        ),
        e(
            "too many queries over batches",
            vec![
                start(sample()),
                batch(many_queries(600)),
                batch(many_queries(600)),
            ],
            ResourceExhausted,
            "max_queries_per_stream",
        ),
        e(
            "too many packed queries",
            vec![
                start(sample()),
                packed(vec![0; MAX_QUERIES as usize + 1], vec![]),
            ],
            ResourceExhausted,
            "max_queries_per_stream",
        ),
    ]
}

fn other_cases() -> Vec<Case> {
    use Code::*;
    let b = |name, start, queries, code, message| Case {
        name,
        call: Call::Batch(EvaluateBatchRequest { start, queries }),
        code,
        message,
    };
    let inline = |graph| {
        Some(EvaluateStart {
            graph_source: Some(GraphSource::Graph(graph)),
            explain: false,
        })
    };
    let p = |name, chunks, code, message| Case {
        name,
        call: Call::Put(chunks),
        code,
        message,
    };
    let v = |name, graph_id: &str| Case {
        name,
        call: Call::Values(GetValuesRequest {
            graph_id: graph_id.into(),
            ..GetValuesRequest::default()
        }),
        code: NotFound,
        message: "not registered",
    };
    vec![
        b(
            "batch without start",
            None,
            vec![],
            InvalidArgument,
            "`start` is required",
        ),
        b(
            "batch with a bad graph",
            inline(graph(4, &[2, 0, 1, 0], &[1, 2, 7], &[])),
            vec![],
            InvalidArgument,
            "targets[2] = 7",
        ),
        b(
            "batch over max_queries_per_stream",
            inline(sample_graph()),
            many_queries(MAX_QUERIES + 1),
            ResourceExhausted,
            "max_queries_per_stream",
        ),
        b(
            "batch on an unknown id",
            Some(EvaluateStart {
                graph_source: Some(GraphSource::GraphId("nope".into())),
                explain: false,
            }),
            vec![],
            NotFound,
            "not registered",
        ),
        p(
            "no chunk",
            vec![],
            InvalidArgument,
            "PutGraph needs at least one chunk",
        ),
        p(
            "empty chunk",
            vec![PutGraphRequest { chunk: None }],
            InvalidArgument,
            "chunk.vertex_count",
        ),
        p(
            "first chunk without vertex_count",
            vec![chunk(graph(0, &[1], &[0], &[]))],
            InvalidArgument,
            "chunk.vertex_count",
        ),
        p(
            "vertex_count changes",
            vec![
                chunk(graph(4, &[2, 0], &[], &[])),
                chunk(graph(5, &[1, 0], &[], &[])),
            ],
            InvalidArgument,
            "chunk 1: vertex_count 5 differs from the first chunk's 4",
        ),
        p(
            "too many out_degrees",
            vec![
                chunk(graph(4, &[2, 0, 1], &[], &[])),
                chunk(graph(0, &[0, 0], &[], &[])),
            ],
            InvalidArgument,
            "chunk 1: out_degrees now has 5 entries, more than vertex_count 4",
        ),
        p(
            "too many split_counts",
            vec![
                chunk(graph(2, &[0, 0], &[], &[1])),
                chunk(graph(0, &[], &[], &[1, 1])),
            ],
            InvalidArgument,
            "chunk 1: split_counts now has 3 entries",
        ),
        p(
            "too few out_degrees",
            vec![chunk(graph(4, &[2, 0], &[1, 2], &[]))],
            InvalidArgument,
            "out_degrees has 2 entries, expected vertex_count = 4",
        ),
        p(
            "assembled target out of range",
            vec![
                chunk(graph(4, &[2, 0, 1, 0], &[1, 2], &[])),
                chunk(graph(0, &[], &[9], &[])),
            ],
            InvalidArgument,
            "targets[2] = 9 is out of range",
        ),
        p(
            "assembled targets short",
            vec![
                chunk(graph(4, &[2, 0, 1, 0], &[1], &[])),
                chunk(graph(0, &[], &[2], &[])),
            ],
            InvalidArgument,
            "targets has 2 entries, expected the sum of out_degrees = 3",
        ),
        p(
            "chunks over max_vertices",
            vec![chunk(graph(MAX_VERTICES + 1, &[], &[], &[]))],
            ResourceExhausted,
            "max_vertices",
        ),
        p(
            "chunks grow over max_edges",
            vec![
                chunk(graph(2, &[MAX_EDGES as u32 + 1, 0], &vec![1; 60_000], &[])),
                chunk(graph(0, &[], &vec![1; 60_000], &[])),
            ],
            ResourceExhausted,
            "max_edges",
        ),
        p(
            "chunk over max_message_bytes",
            vec![chunk(graph(2, &[1_100_000, 0], &vec![1; 1_100_000], &[]))],
            ResourceExhausted,
            "max_message_bytes",
        ),
        p(
            "split cycle across chunks",
            vec![
                chunk(graph(3, &[1, 1, 1], &[1], &[1, 1, 1])),
                chunk(graph(0, &[], &[2, 0], &[])),
            ],
            InvalidArgument,
            "0 -> 1 -> 2 -> 0",
        ),
        v("values of an empty id", ""),
        v("values of an unknown id", &"f".repeat(64)),
    ]
}

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

/// The server still answers a valid stream: the GAMES.md sample's first two verdicts.
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
        ("not protobuf", frame(0, &[0xff; 16])),
        ("wrong wire type for start", frame(0, &[0x08, 0x01])),
        ("truncated frame", {
            let mut bytes = frame(0, &[0x0a, 0x00]);
            bytes[4] = 100; // claims 100 bytes, sends 2
            bytes
        }),
        (
            "compressed flag without grpc-encoding",
            frame(1, &[0x0a, 0x00]),
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

/// Undecodable request bytes are the client's fault, but tonic reports them as INTERNAL
/// ("failed to decode Protobuf message", "Unexpected EOF decoding stream"), the code this API
/// keeps for server bugs (`src/error.rs`). They should be INVALID_ARGUMENT.
#[tokio::test]
#[ignore = "issue 11: undecodable request bytes get INTERNAL instead of INVALID_ARGUMENT"]
async fn raw_malformed_frames_are_invalid_argument() {
    let server = serve(config()).await;
    for body in [frame(0, &[0xff; 16]), frame(0, &[0x08, 0x01]), vec![0, 0]] {
        let (code, message) = raw_evaluate(&server, body).await;
        assert_eq!(code, Some(Code::InvalidArgument), "{message}");
    }
}

/// A gRPC length-prefixed message.
fn frame(flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut bytes = vec![flags];
    bytes.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// Sends `body` as the whole request body of an `Evaluate` call; returns grpc-status and
/// grpc-message (from the headers of a trailers-only answer, or from the trailers).
async fn raw_evaluate(server: &TestServer, body: Vec<u8>) -> (Option<Code>, String) {
    let work = async {
        let tcp = tokio::net::TcpStream::connect(server.address)
            .await
            .unwrap();
        let (mut client, connection) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(connection);
        let request = http::Request::post(format!(
            "http://{}/grundy.v1.GrundyService/Evaluate",
            server.address
        ))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
        let (response, mut send) = client.send_request(request, false).unwrap();
        send.send_data(Bytes::from(body), true).unwrap();
        let (parts, mut body) = response.await.unwrap().into_parts();
        let mut headers = parts.headers;
        if !headers.contains_key("grpc-status") {
            while let Some(data) = body.data().await {
                let data = data.unwrap();
                let _ = body.flow_control().release_capacity(data.len());
            }
            headers = body.trailers().await.unwrap().unwrap_or_default();
        }
        let code = headers
            .get("grpc-status")
            .map(|v| Code::from_i32(v.to_str().unwrap().parse().unwrap()));
        let message = headers
            .get("grpc-message")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        (code, message)
    };
    tokio::time::timeout(PATIENCE, work)
        .await
        .expect("an answer in time")
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
