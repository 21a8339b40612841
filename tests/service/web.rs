//! The playground side of the server (`--web`), over real HTTP/1.1 on 127.0.0.1: the page,
//! `POST /render` behind the bearer token, and a gRPC-Web call translated by tonic-web.
//! (tests/browser drives the page itself in Chromium.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::http1::exchange;
use crate::support::server::{PATIENCE, TestServer, sample_graph, serve, service_config, tokens};
use grundy::generate::{Shape, graph};
use grundy::proto::{self, PutGraphRequest, PutGraphResponse};
use grundy::service::WebConfig;
use grundy::service::{ServerConfig, ServiceConfig, WorkKind};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TOKEN: &str = "let-me-in";

async fn web_server() -> TestServer {
    serve(ServerConfig {
        service: service_config(),
        auth_token: Some(TOKEN.into()),
        web: Some(WebConfig::default()),
        ..ServerConfig::default()
    })
    .await
}

#[tokio::test]
async fn the_page_is_served_without_a_token_and_render_needs_one() {
    let server = web_server().await;
    let (status, headers, body) = exchange(&server, "GET / HTTP/1.1", b"").await;
    assert_eq!(status, 200, "{headers}");
    assert!(headers.contains("text/html"), "{headers}");
    assert!(
        String::from_utf8(body)
            .unwrap()
            .contains("grundy playground")
    );
    let (status, headers, _) = exchange(&server, "GET /vendor/grundy-rpc.js HTTP/1.1", b"").await;
    assert_eq!(status, 200);
    assert!(headers.contains("text/javascript"), "{headers}");
    let (status, _, _) = exchange(&server, "GET /nothing-here HTTP/1.1", b"").await;
    assert_ne!(status, 200);
    // What a browser asks for on its own, and the page on opening, answers without error.
    let (status, headers, _) = exchange(&server, "GET /favicon.ico HTTP/1.1", b"").await;
    assert_eq!(status, 200, "{headers}");
    assert!(headers.contains("image/svg+xml"), "{headers}");
    let (status, headers, _) = exchange(&server, "GET /preload HTTP/1.1", b"").await;
    assert_eq!(status, 204, "{headers}");

    let request = br#"{"out_degrees":[1,0],"targets":[1],"values":[{"finite":1},{"finite":0}]}"#;
    let (status, _, body) = exchange(&server, "POST /render HTTP/1.1", request).await;
    assert_eq!(status, 401);
    assert!(
        String::from_utf8(body)
            .unwrap()
            .contains("missing bearer token")
    );

    let head = format!("POST /render HTTP/1.1\r\nAuthorization: Bearer {TOKEN}");
    let (status, headers, body) = exchange(&server, &head, request).await;
    assert_eq!(status, 200, "{headers}");
    assert!(headers.contains("image/svg+xml"), "{headers}");
    let svg = String::from_utf8(body).unwrap();
    assert!(svg.contains("data-vertex=\"1\" data-value=\"0\" data-outcome=\"lose\""));

    let bad = br#"{"out_degrees":[1],"targets":[3],"values":[{"finite":0}]}"#;
    let (status, _, body) = exchange(&server, &head, bad).await;
    assert_eq!(status, 400);
    assert_eq!(
        String::from_utf8(body).unwrap().trim(),
        "graph: targets[0] = 3 is out of range (vertex_count 1)"
    );
}

#[tokio::test]
async fn grpc_web_over_http1_reaches_the_service_with_the_token() {
    let server = web_server().await;
    let message = PutGraphRequest {
        chunk: Some(sample_graph()),
    }
    .encode_to_vec();
    let mut frame = vec![0u8];
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(&message);
    let head = "POST /grundy.v1.GrundyService/PutGraph HTTP/1.1\r\n\
                Content-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1";

    let (status, headers, _) = exchange(&server, head, &frame).await;
    assert_eq!(status, 200, "{headers}");
    assert!(
        headers.contains("grpc-status: 16"),
        "UNAUTHENTICATED: {headers}"
    );

    let head = format!("{head}\r\nAuthorization: Bearer {TOKEN}");
    let (status, headers, body) = exchange(&server, &head, &frame).await;
    assert_eq!(status, 200, "{headers}");
    // A data frame with the response, then a trailers frame with grpc-status 0.
    assert_eq!(body[0], 0, "a data frame first");
    let length = u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize;
    let response = PutGraphResponse::decode(&body[5..5 + length]).unwrap();
    let summary: proto::GraphSummary = response.graph.unwrap();
    assert_eq!(summary.vertex_count, sample_graph().vertex_count);
    assert_eq!(response.graph_id.len(), 64);
    let trailers = &body[5 + length..];
    assert_eq!(trailers[0], 0x80, "then the trailers frame");
    let trailers = String::from_utf8_lossy(&trailers[5..]).to_ascii_lowercase();
    assert!(trailers.contains("grpc-status:0"), "{trailers}");
}

/// The render request of the largest graph the route draws: 300 vertices, 2,900 random edges
/// (cycles included), every value 0.
fn largest_render_request() -> Vec<u8> {
    let drawn = graph(Shape::Cyclic, 300, 2900, 7);
    let offsets = drawn.offsets();
    let out_degrees: Vec<u32> = offsets.windows(2).map(|w| w[1] - w[0]).collect();
    let values = vec![serde_json::json!({ "finite": 0 }); 300];
    let request = serde_json::json!({
        "out_degrees": out_degrees,
        "targets": drawn.targets(),
        "values": values,
    });
    request.to_string().into_bytes()
}

/// Drawings run on the work pool, not on the runtime threads that serve every connection:
/// with four of the largest drawings asked for at once (two drawn, two queued for a render
/// permit), a trivial gRPC call is answered before the first drawing is. (Drawn on the
/// runtime, two drawings held both of its threads, and the call waited for them.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_call_is_answered_while_drawings_run() {
    const DRAWINGS: usize = 4;
    let server = web_server().await;
    let server = Arc::new(server);
    let mut client = server.client().await;
    let body = Arc::new(largest_render_request());
    let drawn = Arc::new(AtomicUsize::new(0));
    let mut drawings = Vec::new();
    for _ in 0..DRAWINGS {
        let (server, body, drawn) = (server.clone(), body.clone(), drawn.clone());
        drawings.push(tokio::spawn(async move {
            let head = format!("POST /render HTTP/1.1\r\nAuthorization: Bearer {TOKEN}");
            let (status, headers, _) = exchange(&server, &head, &body).await;
            drawn.fetch_add(1, Ordering::SeqCst);
            assert_eq!(status, 200, "{headers}");
        }));
    }
    let metrics = server.service.metrics().clone();
    let deadline = Instant::now() + PATIENCE;
    while metrics.work_jobs_running(WorkKind::Render) < 2 {
        assert!(Instant::now() < deadline, "the drawings never started");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let request = proto::EvaluateBatchRequest {
        start: Some(proto::EvaluateStart {
            graph_source: Some(proto::evaluate_start::GraphSource::Graph(sample_graph())),
            explain: false,
            analysis: None,
            play_convention: 0,
        }),
        queries: vec![tokens(1, &[0])],
    };
    let mut request = tonic::Request::new(request);
    let bearer = format!("Bearer {TOKEN}").parse().unwrap();
    request.metadata_mut().insert("authorization", bearer);
    let call = tokio::time::timeout(PATIENCE, client.evaluate_batch(request));
    let mut answers = call.await.expect("answered in time").unwrap().into_inner();
    let mut verdicts = 0;
    for _ in 0..4 {
        match tokio::time::timeout(PATIENCE, answers.message()).await {
            Ok(Ok(Some(answer))) => verdicts += answer.verdicts.len(),
            Ok(Ok(None)) => break,
            other => panic!("{other:?}"),
        }
    }
    let finished_first = drawn.load(Ordering::SeqCst);
    assert_eq!(verdicts, 1);
    assert_eq!(
        finished_first, 0,
        "the gRPC call waited for {finished_first} drawings"
    );
    for drawing in drawings {
        tokio::time::timeout(PATIENCE, drawing)
            .await
            .expect("every drawing in time")
            .unwrap();
    }
}

/// A server whose render bodies must keep coming: a pause of 300 ms ends one.
async fn impatient_web_server() -> TestServer {
    serve(ServerConfig {
        service: ServiceConfig {
            start_timeout: Duration::from_millis(300),
            ..service_config()
        },
        auth_token: Some(TOKEN.into()),
        web: Some(WebConfig::default()),
        ..ServerConfig::default()
    })
    .await
}

/// The head of a `POST /render` announcing `length` bytes of body, on a connection of its
/// own that the server closes after its answer.
async fn render_head(server: &TestServer, length: usize) -> tokio::net::TcpStream {
    let mut stream = tokio::net::TcpStream::connect(server.address)
        .await
        .unwrap();
    let head = format!(
        "POST /render HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Length: {length}\r\nConnection: close\r\n\r\n",
        server.address
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// The status code and the text of the server's answer on `stream`.
async fn answer(stream: &mut tokio::net::TcpStream) -> (u16, String) {
    let mut response = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut response))
        .await
        .expect("the server answers in time")
        .unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    (text[9..12].parse().unwrap(), text)
}

/// A render body that stops mid-way is answered with 408 once it has brought nothing for the
/// start timeout (the server no longer holds it), and a body announced over the limit is
/// refused with 413 before any of it is read.
#[tokio::test]
async fn a_stalled_or_oversized_render_body_is_refused_without_waiting_for_it() {
    let server = impatient_web_server().await;
    let mut stalled = render_head(&server, 1000).await;
    stalled.write_all(&[b' '; 500]).await.unwrap();
    let sent = Instant::now();
    let (status, text) = answer(&mut stalled).await;
    assert_eq!(status, 408, "{text}");
    assert!(text.contains("start_timeout"), "{text}");
    assert!(sent.elapsed() >= Duration::from_millis(300), "{text}");

    let mut oversized = render_head(&server, 2 << 20).await;
    let (status, text) = answer(&mut oversized).await;
    assert_eq!(status, 413, "{text}");
    assert!(text.contains("1048576 bytes"), "{text}");
}
