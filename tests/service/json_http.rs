//! JSON over HTTP on the gRPC port, over real HTTP/1.1 (and one call over HTTP/2) on
//! 127.0.0.1: every route's answer against the gRPC answer to the same request, NDJSON sent
//! as it is produced, and each class of error with its HTTP status and `google.rpc.Status`.

use std::time::Duration;

use grundy::proto::{
    self, EvaluateBatchResponse, GetValuesRequest, GetValuesResponse, evaluate_start::GraphSource,
};
use grundy::service::ServerConfig;
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, SerializeOptions};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::analysis::{analysis_graph_and_a_large_dag, analysis_start};
use crate::support::http1::exchange;
use crate::support::server::{
    PATIENCE, TestServer, batch_request, chunks, put, sample_graph, sample_outcome, serve,
    server_config, tokens,
};

const TOKEN: &str = "json-token";

fn pool() -> DescriptorPool {
    DescriptorPool::decode(proto::FILE_DESCRIPTOR_SET).unwrap()
}

/// `message` (of the proto type `name`) in proto3 JSON, as a client would write it.
pub(crate) fn to_json<M: Message>(name: &str, message: &M) -> Value {
    let descriptor = pool().get_message_by_name(name).unwrap();
    let dynamic = DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice()).unwrap();
    let mut serializer = serde_json::Serializer::new(Vec::new());
    dynamic
        .serialize_with_options(&mut serializer, &SerializeOptions::new())
        .unwrap();
    serde_json::from_slice(&serializer.into_inner()).unwrap()
}

/// The JSON `value` read back as the proto type `name`.
fn from_json<M: Message + Default>(name: &str, value: &Value) -> M {
    let descriptor = pool().get_message_by_name(name).unwrap();
    let dynamic = DynamicMessage::deserialize(descriptor, value).unwrap();
    M::decode(dynamic.encode_to_vec().as_slice()).unwrap()
}

/// One JSON request over HTTP/1.1: (status, headers, body as JSON or as text).
async fn call(server: &TestServer, head: &str, body: &[u8]) -> (u16, String, Value) {
    let (status, headers, body) = exchange(server, head, body).await;
    let json = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into()));
    (status, headers, json)
}

/// The verdicts of an `EvaluateBatch` answer in JSON (an array of responses).
fn verdicts_of(answer: &Value) -> Vec<proto::Verdict> {
    let responses = answer.as_array().expect("an array of responses");
    responses
        .iter()
        .flat_map(|response| {
            from_json::<EvaluateBatchResponse>("grundy.v1.EvaluateBatchResponse", response).verdicts
        })
        .collect()
}

/// The verdicts gRPC gives for the same request.
async fn grpc_verdicts(
    server: &TestServer,
    request: proto::EvaluateBatchRequest,
) -> Vec<proto::Verdict> {
    let mut stream = server
        .client()
        .await
        .evaluate_batch(request)
        .await
        .unwrap()
        .into_inner();
    let mut verdicts = Vec::new();
    while let Some(response) = stream.message().await.unwrap() {
        verdicts.extend(response.verdicts);
    }
    verdicts
}

/// The `google.rpc.Status` body's BadRequest field and ErrorInfo reason.
fn violation_and_reason(status: &Value) -> (String, String) {
    let details = status["details"].as_array().expect("details");
    let of_type = |name: &str| {
        details
            .iter()
            .find(|d| d["@type"] == format!("type.googleapis.com/google.rpc.{name}"))
    };
    let field = of_type("BadRequest").map_or(String::new(), |d| {
        d["fieldViolations"][0]["field"].as_str().unwrap().into()
    });
    let reason =
        of_type("ErrorInfo").map_or(String::new(), |d| d["reason"].as_str().unwrap().into());
    (field, reason)
}

#[tokio::test]
async fn evaluate_inline_answers_what_grpc_answers_in_canonical_json() {
    let server = serve(server_config()).await;
    let request = batch_request(
        GraphSource::Graph(sample_graph()),
        (0..4).map(|v| tokens(u64::from(v), &[v])).collect(),
    );
    let body = to_json("grundy.v1.EvaluateBatchRequest", &request).to_string();
    let (status, headers, answer) =
        call(&server, "POST /v1:evaluate HTTP/1.1", body.as_bytes()).await;
    assert_eq!(status, 200, "{answer}");
    assert!(
        headers
            .to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{headers}"
    );
    let verdicts = verdicts_of(&answer);
    assert_eq!(verdicts, grpc_verdicts(&server, request).await);
    let outcomes: Vec<_> = verdicts.iter().map(|v| v.outcome).collect();
    assert_eq!(outcomes, (0..4).map(sample_outcome).collect::<Vec<_>>());
    // Zeros are written, 64-bit integers as strings, enums by name, names in lowerCamelCase.
    let lose = &answer[1]["verdicts"][1];
    assert_eq!(lose["queryId"], "1");
    assert_eq!(lose["nimSum"], "0");
    assert_eq!(lose["outcome"], "OUTCOME_LOSE");
    assert_eq!(answer[0]["graph"]["edgeCount"], "3");
}

#[tokio::test]
async fn put_graph_takes_one_body_or_an_array_of_chunks_then_evaluates_by_id() {
    let server = serve(server_config()).await;
    let graph = analysis_graph_and_a_large_dag(30);
    let expected = put(&mut server.client().await, chunks(&graph, 1_000_000))
        .await
        .unwrap();

    let one = to_json("grundy.v1.Graph", &graph).to_string();
    let (status, _, answer) = call(&server, "POST /v1/graphs HTTP/1.1", one.as_bytes()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["graphId"], expected.graph_id.as_str());
    assert_eq!(answer["alreadyRegistered"], true);

    let parts: Vec<Value> = chunks(&graph, 7)
        .iter()
        .map(|chunk| to_json("grundy.v1.Graph", chunk.chunk.as_ref().unwrap()))
        .collect();
    assert!(parts.len() > 3);
    let array = Value::Array(parts).to_string();
    let (status, _, answer) = call(&server, "POST /v1/graphs HTTP/1.1", array.as_bytes()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["graphId"], expected.graph_id.as_str());

    let queries: Vec<_> = (0..35)
        .map(|v| tokens(u64::from(v), &[v, (v * 7) % 35]))
        .collect();
    let body = json!({ "queries": queries.iter().map(|q| to_json("grundy.v1.Query", q)).collect::<Vec<_>>() });
    let head = format!("POST /v1/graphs/{}:evaluate HTTP/1.1", expected.graph_id);
    let (status, _, answer) = call(&server, &head, body.to_string().as_bytes()).await;
    assert_eq!(status, 200, "{answer}");
    let by_id = batch_request(GraphSource::GraphId(expected.graph_id.clone()), queries);
    assert_eq!(verdicts_of(&answer), grpc_verdicts(&server, by_id).await);

    // The path gives the graph: a body that gives one too is refused.
    let both = json!({ "start": { "graph": to_json("grundy.v1.Graph", &graph) } }).to_string();
    let (status, _, answer) = call(&server, &head, both.as_bytes()).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(violation_and_reason(&answer).0, "start.graph_id");
}

#[tokio::test]
async fn get_values_takes_its_fields_as_query_parameters_over_http1_and_http2() {
    let server = serve(server_config()).await;
    let graph = analysis_graph_and_a_large_dag(30);
    let id = put(&mut server.client().await, chunks(&graph, 1_000_000))
        .await
        .unwrap()
        .graph_id;
    let request = GetValuesRequest {
        graph_id: id.clone(),
        first_vertex: 3,
        vertex_limit: 20,
        page_size: 6,
        summary_only: false,
        play_convention: 0,
    };
    let mut stream = server
        .client()
        .await
        .get_values(request)
        .await
        .unwrap()
        .into_inner();
    let mut expected = Vec::new();
    while let Some(response) = stream.message().await.unwrap() {
        expected.push(response);
    }
    assert_eq!(expected.len(), 5);

    // Proto names and JSON names alike.
    let path = format!("/v1/graphs/{id}/values?first_vertex=3&vertexLimit=20&page_size=6");
    let (status, _, answer) = call(&server, &format!("GET {path} HTTP/1.1"), b"").await;
    assert_eq!(status, 200, "{answer}");
    let pages: Vec<GetValuesResponse> = answer
        .as_array()
        .unwrap()
        .iter()
        .map(|page| from_json("grundy.v1.GetValuesResponse", page))
        .collect();
    assert_eq!(pages, expected);

    let mut h2 = server.raw_client().await;
    let request = http::Request::get(format!("{}{path}", server.url()))
        .body(())
        .unwrap();
    let (response, _) = h2.send_request(request, true).unwrap();
    let response = tokio::time::timeout(PATIENCE, response)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    while let Some(data) = body.data().await {
        bytes.extend_from_slice(&data.unwrap());
    }
    assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap(), answer);

    let (status, _, answer) = call(
        &server,
        &format!("GET /v1/graphs/{id}/values?page_size=x HTTP/1.1"),
        b"",
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(violation_and_reason(&answer).0, "page_size");
}

/// An analysis stream whose second query is a slow search: the quick verdict's line is sent
/// on its own while the slow one is still being searched (read before it, in a read of its
/// own).
#[tokio::test]
async fn ndjson_lines_are_sent_as_produced() {
    let server = serve(server_config()).await;
    let start = analysis_start(
        analysis_graph_and_a_large_dag(40),
        Some(proto::AnalysisOptions {
            max_moves: 0,
            position_budget: 200_000,
        }),
    );
    let Some(proto::evaluate_request::Payload::Start(start)) = start.payload else {
        unreachable!()
    };
    let request = proto::EvaluateBatchRequest {
        start: Some(start),
        queries: vec![tokens(0, &[0, 2]), tokens(1, &[5, 5, 5, 6, 6])],
    };
    let body = to_json("grundy.v1.EvaluateBatchRequest", &request).to_string();
    let mut stream = tokio::net::TcpStream::connect(server.address)
        .await
        .unwrap();
    let head = format!(
        "POST /v1:evaluate HTTP/1.1\r\nHost: x\r\nAccept: application/x-ndjson\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut buffer = vec![0; 1 << 16];
    let quick_verdict = "\"queryId\":\"0\"";
    while !String::from_utf8_lossy(&received).contains(quick_verdict) {
        let read = tokio::time::timeout(PATIENCE, stream.read(&mut buffer))
            .await
            .unwrap()
            .unwrap();
        assert!(read > 0, "the answer ended early");
        received.extend_from_slice(&buffer[..read]);
    }
    let text = String::from_utf8_lossy(&received).to_string();
    assert!(
        text.to_ascii_lowercase()
            .contains("content-type: application/x-ndjson"),
        "{text}"
    );
    assert!(
        !text.contains("\"queryId\":\"1\""),
        "the slow verdict came with the quick one: {text}"
    );
    stream.read_to_end(&mut received).await.unwrap();
    let text = String::from_utf8_lossy(&received);
    let body = &text[text.find("\r\n\r\n").unwrap() + 4..];
    let lines: Vec<Value> = String::from_utf8(crate::support::http1::dechunk(body.as_bytes()))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(
        verdicts_of(&Value::Array(lines)),
        grpc_verdicts(&server, request).await
    );
}

/// Slow searches past the `timeout` parameter: with NDJSON the summary line goes, then the
/// error as the last line; as an array, nothing but the error, with its HTTP status.
#[tokio::test]
async fn an_error_after_the_first_message_ends_ndjson_and_replaces_the_array() {
    let server = serve(server_config()).await;
    let start = analysis_start(
        analysis_graph_and_a_large_dag(40),
        Some(proto::AnalysisOptions {
            max_moves: 0,
            position_budget: 200_000,
        }),
    );
    let Some(proto::evaluate_request::Payload::Start(start)) = start.payload else {
        unreachable!()
    };
    let slow: Vec<_> = (0..20).map(|id| tokens(id, &[5, 5, 5, 6, 6])).collect();
    let request = proto::EvaluateBatchRequest {
        start: Some(start),
        queries: slow,
    };
    let body = to_json("grundy.v1.EvaluateBatchRequest", &request).to_string();
    let head = "POST /v1:evaluate?timeout=1s HTTP/1.1\r\nAccept: application/x-ndjson";
    let (status, _, text) = call(&server, head, body.as_bytes()).await;
    assert_eq!(status, 200);
    let text = text.as_str().expect("lines").to_string();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(lines[0]["graph"].is_object(), "{text}");
    let last = lines.last().unwrap();
    assert_eq!(last["error"]["code"], 4, "{text}");
    assert_eq!(violation_and_reason(&last["error"]).1, "DEADLINE_EXCEEDED");

    let (status, _, answer) = call(
        &server,
        "POST /v1:evaluate?timeout=1s HTTP/1.1",
        body.as_bytes(),
    )
    .await;
    assert_eq!(status, 504, "{answer}");
    assert_eq!(answer["code"], 4);
}

#[tokio::test]
async fn malformed_json_is_refused_with_its_path_line_column_and_byte() {
    let server = serve(server_config()).await;
    let body = "{\"start\": {\"graph\": {\n  \"vertexCount\": 3,\n  \"outDegrees\": [1, 1 0]}}}";
    let (status, _, answer) = call(&server, "POST /v1:evaluate HTTP/1.1", body.as_bytes()).await;
    assert_eq!(status, 400, "{answer}");
    let message = answer["message"].as_str().unwrap();
    let byte = body.find(" 0]").unwrap() + 1;
    let column = byte - body.rfind('\n').unwrap();
    assert!(
        message.contains(&format!("line 3, column {column}, byte {byte}")),
        "{message}"
    );
    let (field, reason) = violation_and_reason(&answer);
    assert!(field.starts_with("start.graph.outDegrees"), "{field}");
    assert_eq!(reason, "INVALID_REQUEST");
}

#[tokio::test]
async fn unknown_fields_and_wrong_types_are_refused_by_name() {
    let server = serve(server_config()).await;
    let cases = [
        (
            r#"{"start": {"graph": {"vertexCounts": 3}}}"#,
            "start.graph.vertexCounts",
            "vertexCounts",
        ),
        (
            r#"{"start": {"graph": {"vertexCount": "three"}}}"#,
            "start.graph.vertexCount",
            "invalid",
        ),
        (
            r#"{"start": {"explain": 1}}"#,
            "start.explain",
            "invalid type",
        ),
        (
            r#"{"queries": [{"id": "1", "tokens": {"vertices": [-1]}}]}"#,
            "queries[0].tokens.vertices[0]",
            "",
        ),
        (
            r#"{"start": {"graph": {"vertexCount": 1e400}}}"#,
            "start.graph.vertexCount",
            "",
        ),
        (
            r#"{"start": {"graph": {"vertexCount": 123456789012345678901234567890}}}"#,
            "start.graph.vertexCount",
            "",
        ),
    ];
    for (body, field, text) in cases {
        let (status, _, answer) =
            call(&server, "POST /v1:evaluate HTTP/1.1", body.as_bytes()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(violation_and_reason(&answer).0, field, "{body}: {answer}");
        assert!(
            answer["message"].as_str().unwrap().contains(text),
            "{body}: {answer}"
        );
    }
}

#[tokio::test]
async fn deep_nesting_is_refused_at_once() {
    let server = serve(server_config()).await;
    for body in [
        "[".repeat(1_000_000),
        format!("{{\"queries\": {}", "[".repeat(1_000_000)),
        "{\"start\":".repeat(100_000),
    ] {
        let (status, _, answer) = call(&server, "POST /v1/graphs HTTP/1.1", body.as_bytes()).await;
        assert_eq!(status, 400, "{answer}");
        let (status, _, answer) =
            call(&server, "POST /v1:evaluate HTTP/1.1", body.as_bytes()).await;
        assert_eq!(status, 400, "{answer}");
        assert_eq!(answer["code"], 3);
    }
}

#[tokio::test]
async fn unknown_graphs_routes_and_methods_get_404_and_405() {
    let server = serve(server_config()).await;
    let (status, _, answer) = call(&server, "GET /v1/graphs/feed/values HTTP/1.1", b"").await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(violation_and_reason(&answer).1, "UNKNOWN_GRAPH");
    let (status, _, answer) = call(&server, "GET /v2/anything HTTP/1.1", b"").await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(violation_and_reason(&answer).1, "UNKNOWN_ROUTE");
    let (status, headers, answer) = call(&server, "GET /v1:evaluate HTTP/1.1", b"").await;
    assert_eq!(status, 405, "{answer}");
    assert!(
        headers.to_ascii_lowercase().contains("allow: post"),
        "{headers}"
    );
}

#[tokio::test]
async fn the_bearer_token_is_required_as_for_grpc() {
    let server = serve(ServerConfig {
        auth_token: Some(TOKEN.into()),
        ..server_config()
    })
    .await;
    let body = r#"{"vertexCount": 2, "outDegrees": [1, 0], "targets": [1]}"#;
    let (status, _, answer) = call(&server, "POST /v1/graphs HTTP/1.1", body.as_bytes()).await;
    assert_eq!(status, 401, "{answer}");
    assert_eq!(violation_and_reason(&answer).1, "UNAUTHENTICATED");
    // Not even a malformed body is read without the token.
    let (status, _, _) = call(&server, "POST /v1/graphs HTTP/1.1", b"{{{").await;
    assert_eq!(status, 401);
    let head = format!("POST /v1/graphs HTTP/1.1\r\nAuthorization: Bearer {TOKEN}");
    let (status, _, answer) = call(&server, &head, body.as_bytes()).await;
    assert_eq!(status, 200, "{answer}");
}

/// Over the limit by `Content-Length`: 413 before a byte of the body is sent. Chunked (no
/// length): 413 once the bytes counted pass it, without waiting for the rest.
#[tokio::test]
async fn a_body_over_the_limit_is_413_by_length_or_as_it_arrives() {
    let server = serve(ServerConfig {
        max_message_bytes: 1000,
        ..server_config()
    })
    .await;
    let answer = |mut stream: tokio::net::TcpStream| async move {
        let mut received = vec![0; 4096];
        let read = tokio::time::timeout(PATIENCE, stream.read(&mut received))
            .await
            .unwrap()
            .unwrap();
        String::from_utf8_lossy(&received[..read]).to_string()
    };
    let mut stream = tokio::net::TcpStream::connect(server.address)
        .await
        .unwrap();
    let head = "POST /v1/graphs HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let text = answer(stream).await;
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(
        text.contains("MESSAGE_TOO_LARGE") && text.contains("json_body_bytes"),
        "{text}"
    );

    let mut stream = tokio::net::TcpStream::connect(server.address)
        .await
        .unwrap();
    let head = "POST /v1/graphs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 600, " ".repeat(600));
    stream.write_all(chunk.as_bytes()).await.unwrap();
    stream.write_all(chunk.as_bytes()).await.unwrap();
    let text = answer(stream).await;
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
}

/// A body that stops arriving is ended after the start timeout, as a unary gRPC message is.
#[tokio::test]
async fn a_stalled_body_is_ended_by_the_start_timeout() {
    let mut config = server_config();
    config.service.start_timeout = Duration::from_millis(200);
    let server = serve(config).await;
    let mut stream = tokio::net::TcpStream::connect(server.address)
        .await
        .unwrap();
    let head = "POST /v1/graphs HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"vertexCount\"";
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut received = vec![0; 4096];
    let read = tokio::time::timeout(PATIENCE, stream.read(&mut received))
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&received[..read]);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("START_TIMEOUT"), "{text}");
    let metrics = server.service.metrics().encode();
    let line = r#"grundy_requests_total{rpc="PutGraph",code="DEADLINE_EXCEEDED",reason="START_TIMEOUT",protocol="json"} 1"#;
    assert!(metrics.contains(line), "{line} in {metrics}");
}

/// Bodies being received hold their places from the first byte: past 16 of them (all but
/// whole, then nothing), the next JSON call is 429 with `Retry-After` at once rather than
/// read, and once they are gone calls are read again.
#[tokio::test]
async fn bodies_past_the_bound_are_refused_until_those_received_leave() {
    let server = serve(server_config()).await;
    let head = "POST /v1/graphs HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"vertexCount\"";
    let mut stalled = Vec::new();
    for _ in 0..16 {
        let mut stream = tokio::net::TcpStream::connect(server.address)
            .await
            .unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stalled.push(stream);
    }
    let body = br#"{"vertexCount": 1, "outDegrees": [0]}"#;
    let began = std::time::Instant::now();
    let (status, head, answer) = loop {
        let answered = call(&server, "POST /v1/graphs HTTP/1.1", body).await;
        if answered.0 == 429 || began.elapsed() > PATIENCE {
            break answered;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(status, 429, "{answer}");
    assert!(head.to_ascii_lowercase().contains("retry-after"), "{head}");
    assert_eq!(violation_and_reason(&answer).1, "TOO_MANY_STREAMS");
    drop(stalled);
    let began = std::time::Instant::now();
    loop {
        let (status, _, answer) = call(&server, "POST /v1/graphs HTTP/1.1", body).await;
        if status == 200 {
            break;
        }
        assert!(began.elapsed() < PATIENCE, "still refused: {answer}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
