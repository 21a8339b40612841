//! Operating the server: health, reflection, compression, draining shutdown, metrics, and
//! the real `grundy-server` binary (its JSON log and SIGTERM, its `--help`). Most tests run an
//! in-process server on a loopback port and drive it through generated clients over real
//! sockets.

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::process::ChildGuard;
use crate::support::server::{
    PATIENCE, batch, health_of, next, open_stream, sample_graph, serve, server_config, start,
    tokens,
};
use grundy::proto::{
    self, EvaluateBatchRequest, EvaluateStart, Query, evaluate_request::Payload,
    evaluate_start::GraphSource, grundy_service_client::GrundyServiceClient,
};
use grundy::service::ServerConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;
use tonic::codec::CompressionEncoding;
use tonic::transport::Channel;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

#[tokio::test]
async fn health_reports_serving_then_not_serving_while_draining() {
    let mut server = serve(server_config()).await;
    let channel = server.channel().await;
    for service in ["", "grundy.v1.GrundyService"] {
        assert_eq!(
            health_of(channel.clone(), service).await.unwrap(),
            ServingStatus::Serving
        );
    }
    // A stream in flight when the shutdown begins.
    let mut client = server.client().await;
    let mut stream = open_stream(&mut client, sample_graph()).await;
    server.begin_shutdown();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while health_of(channel.clone(), "").await.unwrap() != ServingStatus::NotServing {
        assert!(
            tokio::time::Instant::now() < deadline,
            "NOT_SERVING in time"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        health_of(channel.clone(), "grundy.v1.GrundyService")
            .await
            .unwrap(),
        ServingStatus::NotServing
    );
    // New streams are refused...
    let (_held, rx) = mpsc::channel(1);
    let refused = client.evaluate(ReceiverStream::new(rx)).await.unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable);
    assert!(refused.message().contains("shutting down"), "{refused:?}");
    // ... while the one in flight is still served to its end.
    stream
        .requests
        .send(batch(vec![tokens(1, &[0])]))
        .await
        .unwrap();
    let verdicts = next(&mut stream.responses).await.unwrap().verdicts;
    assert_eq!(verdicts[0].outcome(), proto::Outcome::Win);
    drop(stream.requests);
    assert!(stream.responses.message().await.unwrap().is_none());
    // Nothing left to drain: the server returns long before the 30 s drain timeout.
    server.stopped().await.unwrap();
}

#[tokio::test]
async fn drain_timeout_cancels_remaining_streams_with_unavailable() {
    let mut server = serve(ServerConfig {
        drain_timeout: Duration::from_millis(200),
        ..server_config()
    })
    .await;
    let mut client = server.client().await;
    let mut stream = open_stream(&mut client, sample_graph()).await;
    // A health watch: it sees NOT_SERVING, and its endless stream does not hold the exit up.
    let mut watch = HealthClient::new(server.channel().await)
        .watch(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    let status_of = |m: Option<tonic_health::pb::HealthCheckResponse>| m.unwrap().status();
    assert_eq!(
        status_of(watch.message().await.unwrap()),
        ServingStatus::Serving
    );
    server.begin_shutdown();
    let watched = tokio::time::timeout(PATIENCE, watch.message())
        .await
        .unwrap();
    assert_eq!(status_of(watched.unwrap()), ServingStatus::NotServing);
    let status = next(&mut stream.responses).await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert_eq!(status.message(), "server shutting down");
    server.stopped().await.unwrap();
    assert_eq!(server.service.active_streams(), 0);
}

#[tokio::test]
async fn reflection_lists_the_services_and_serves_their_descriptors() {
    use tonic_reflection::pb::v1::{
        ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
        server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
    };
    let server = serve(server_config()).await;
    let mut reflection = ServerReflectionClient::new(server.channel().await);
    let requests = vec![
        ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        },
        ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::FileContainingSymbol(
                "grundy.v1.VertexValue".into(),
            )),
        },
    ];
    let mut responses = reflection
        .server_reflection_info(tokio_stream::iter(requests))
        .await
        .unwrap()
        .into_inner();
    let listed = responses.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = listed.message_response else {
        panic!("expected a service list, got {listed:?}");
    };
    let names: Vec<&str> = list.service.iter().map(|s| s.name.as_str()).collect();
    for expected in [
        "grundy.v1.GrundyService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let file = responses.message().await.unwrap().unwrap();
    let Some(MessageResponse::FileDescriptorResponse(files)) = file.message_response else {
        panic!("expected a file descriptor, got {file:?}");
    };
    assert!(!files.file_descriptor_proto.is_empty());
}

#[tokio::test]
async fn compressed_requests_and_responses_are_accepted_and_sent() {
    let server = serve(server_config()).await;
    for encoding in [CompressionEncoding::Gzip, CompressionEncoding::Zstd] {
        let mut client = server
            .client()
            .await
            .send_compressed(encoding)
            .accept_compressed(encoding);
        let queries: Vec<Query> = (0..2000u64).map(|i| tokens(i, &[(i % 4) as u32])).collect();
        let response = client
            .evaluate_batch(EvaluateBatchRequest {
                start: Some(EvaluateStart {
                    graph_source: Some(GraphSource::Graph(sample_graph())),
                    explain: false,
                    analysis: None,
                    play_convention: 0,
                }),
                queries,
            })
            .await
            .unwrap();
        let name = match encoding {
            CompressionEncoding::Gzip => "gzip",
            _ => "zstd",
        };
        assert_eq!(
            response
                .metadata()
                .get("grpc-encoding")
                .map(|v| v.to_str().unwrap()),
            Some(name),
            "the server compressed its responses"
        );
        let mut stream = response.into_inner();
        let mut verdicts = 0;
        while let Some(message) = stream.message().await.unwrap() {
            verdicts += message.verdicts.len();
        }
        assert_eq!(verdicts, 2000);
    }
}

/// On a stream with moves, the search job encodes its verdicts as it finds them: they are
/// counted by outcome all the same, and their messages by size.
#[tokio::test]
async fn verdicts_a_search_job_encodes_are_counted_by_outcome() {
    let server = serve(server_config()).await;
    let mut client = server.client().await;
    let mut explain = start(sample_graph());
    if let Some(Payload::Start(start)) = &mut explain.payload {
        start.explain = true;
    }
    let queries = batch(vec![tokens(1, &[0]), tokens(2, &[1]), tokens(3, &[9])]);
    let mut responses = client
        .evaluate(tokio_stream::iter([explain, queries]))
        .await
        .unwrap()
        .into_inner();
    let mut verdicts = Vec::new();
    while let Some(message) = responses.message().await.unwrap() {
        verdicts.extend(message.verdicts);
    }
    assert_eq!(verdicts.len(), 3);
    assert!(verdicts[0].best_move.is_some(), "an explained win");
    server.wait_idle().await;
    let page = server.service.metrics().encode();
    for expected in [
        "grundy_queries_total{outcome=\"win\"} 1",
        "grundy_queries_total{outcome=\"lose\"} 1",
        "grundy_queries_total{outcome=\"error\"} 1",
        "grundy_work_slot_wait_seconds_count{kind=\"search\"} 1",
        "grundy_response_message_bytes_count{rpc=\"Evaluate\"} 2",
    ] {
        assert!(page.contains(expected), "{expected:?} missing from\n{page}");
    }
}

#[tokio::test]
async fn metrics_are_served_over_http() {
    let server = serve(server_config()).await;
    let mut client = server.client().await;
    let mut stream = open_stream(&mut client, sample_graph()).await;
    stream
        .requests
        .send(batch(vec![
            tokens(1, &[0]),
            tokens(2, &[1]),
            tokens(3, &[9]),
        ]))
        .await
        .unwrap();
    next(&mut stream.responses).await.unwrap();
    drop(stream.requests);
    assert!(stream.responses.message().await.unwrap().is_none());
    server.wait_idle().await;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let exporter = tokio::spawn(grundy::service::serve_metrics(
        listener,
        server.service.metrics().clone(),
        async {
            let _ = stopped.await;
        },
    ));
    let page = http_get(address, "/metrics").await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    for expected in [
        "grundy_requests_total{rpc=\"Evaluate\",code=\"OK\",reason=\"\",protocol=\"grpc\"} 1",
        "grundy_queries_total{outcome=\"win\"} 1",
        "grundy_queries_total{outcome=\"lose\"} 1",
        "grundy_queries_total{outcome=\"error\"} 1",
        // Series nothing has counted yet are there, at zero.
        "grundy_queries_total{outcome=\"draw\"} 0",
        "grundy_work_slot_wait_seconds_count{kind=\"search\"} 0",
        // No job runs once the stream is answered.
        "grundy_work_jobs_running{kind=\"analysis\"} 0",
        "grundy_work_jobs_running{kind=\"evaluation\"} 0",
        "grundy_work_jobs_running{kind=\"search\"} 0",
        "grundy_table_compute_seconds_count 1",
        "grundy_cache_misses_total 1",
        "grundy_cache_hits_total 0",
        "grundy_cache_entries 1",
        "grundy_inflight_streams 0",
        // Latency by method and code, slot waits by kind, message sizes by method: the
        // stream sent two messages (start, one batch) and got two (summary, verdicts).
        "grundy_rpc_duration_seconds_count{rpc=\"Evaluate\",code=\"OK\",protocol=\"grpc\"} 1",
        // The small graph is validated and hashed on the runtime; its analysis is one job.
        "grundy_work_slot_wait_seconds_count{kind=\"analysis\"} 1",
        "grundy_work_slot_wait_seconds_count{kind=\"evaluation\"} 1",
        "grundy_request_message_bytes_count{rpc=\"Evaluate\"} 2",
        "grundy_response_message_bytes_count{rpc=\"Evaluate\"} 2",
    ] {
        assert!(page.contains(expected), "{expected:?} missing from\n{page}");
    }
    // The size histograms hold the sizes: both request messages (a 4-vertex graph, three
    // one-token queries) are between 16 and 64 bytes.
    for bucket in [
        "grundy_request_message_bytes_bucket{le=\"16.0\",rpc=\"Evaluate\"} 0",
        "grundy_request_message_bytes_bucket{le=\"64.0\",rpc=\"Evaluate\"} 2",
    ] {
        assert!(page.contains(bucket), "{bucket:?} missing from\n{page}");
    }
    assert!(
        http_get(address, "/other")
            .await
            .starts_with("HTTP/1.1 404")
    );
    let _ = stop.send(());
    tokio::time::timeout(PATIENCE, exporter)
        .await
        .unwrap()
        .unwrap();
}

async fn http_get(address: SocketAddr, path: &str) -> String {
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: grundy\r\nConnection: close\r\n\r\n");
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(PATIENCE, socket.read_to_string(&mut response))
        .await
        .unwrap()
        .unwrap();
    response
}

async fn next_line(lines: &mut mpsc::UnboundedReceiver<String>) -> Option<String> {
    tokio::time::timeout(PATIENCE, lines.recv())
        .await
        .expect("a log line in time")
}

#[tokio::test]
async fn server_binary_logs_json_and_exits_cleanly_on_sigterm() {
    let mut child = ChildGuard::spawn(
        Command::new(env!("CARGO_BIN_EXE_grundy-server"))
            .env("GRUNDY_LISTEN", "127.0.0.1:0")
            .env("GRUNDY_LOG_FORMAT", "json")
            .env("GRUNDY_DRAIN_TIMEOUT", "5s")
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let mut lines = crate::support::process::stderr_lines(&mut child.0);
    // {"timestamp":..,"level":"INFO","fields":{"message":"grundy-server listening","address":"127.0.0.1:PORT",..},..}
    let address = loop {
        let line = next_line(&mut lines)
            .await
            .expect("the server logs its address");
        if line.contains("grundy-server listening") {
            assert!(line.starts_with('{') && line.ends_with('}'), "JSON: {line}");
            let start = line.find("\"address\":\"").unwrap() + "\"address\":\"".len();
            let end = start + line[start..].find('"').unwrap();
            break line[start..end].to_string();
        }
    };
    let channel = Channel::from_shared(format!("http://{address}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    assert_eq!(
        health_of(channel.clone(), "").await.unwrap(),
        ServingStatus::Serving
    );
    let mut client = GrundyServiceClient::new(channel);
    let mut stream = open_stream(&mut client, sample_graph()).await;
    // One RPC, one JSON line with its span's fields.
    let status = Command::new("kill")
        .args(["-TERM", &child.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    // The stream in flight is still served during the drain, then the client half-closes.
    loop {
        let line = next_line(&mut lines)
            .await
            .expect("the server logs the drain");
        if line.contains("shutting down") {
            break;
        }
    }
    stream
        .requests
        .send(batch(vec![tokens(1, &[1])]))
        .await
        .unwrap();
    assert_eq!(
        next(&mut stream.responses).await.unwrap().verdicts[0].outcome(),
        proto::Outcome::Lose
    );
    drop(stream.requests);
    assert!(stream.responses.message().await.unwrap().is_none());
    let mut rpc_logged = false;
    while let Some(line) = next_line(&mut lines).await {
        if line.contains("rpc finished") {
            assert!(line.contains("\"rpc\":\"Evaluate\""), "{line}");
            assert!(line.contains("\"code\":\"OK\""), "{line}");
            assert!(line.contains("\"vertices\":4"), "{line}");
            rpc_logged = true;
        }
    }
    assert!(rpc_logged, "one log line per RPC");
    let exit = tokio::task::spawn_blocking(move || {
        let status = child.0.wait().unwrap();
        drop(child);
        status
    })
    .await
    .unwrap();
    assert!(exit.success(), "exit status {exit:?}");
}

#[test]
fn server_help_documents_every_flag_with_its_environment_variable() {
    let output = Command::new(env!("CARGO_BIN_EXE_grundy-server"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    for (flag, env) in [
        ("--listen", "GRUNDY_LISTEN"),
        ("--metrics-listen", "GRUNDY_METRICS_LISTEN"),
        ("--log-format", "GRUNDY_LOG_FORMAT"),
        ("--max-message-bytes", "GRUNDY_MAX_MESSAGE_BYTES"),
        ("--max-vertices", "GRUNDY_MAX_VERTICES"),
        ("--max-edges", "GRUNDY_MAX_EDGES"),
        ("--max-cyclic-work", "GRUNDY_MAX_CYCLIC_WORK"),
        ("--max-queries-per-stream", "GRUNDY_MAX_QUERIES_PER_STREAM"),
        ("--max-concurrent-streams", "GRUNDY_MAX_CONCURRENT_STREAMS"),
        ("--compute-concurrency", "GRUNDY_COMPUTE_CONCURRENCY"),
        ("--cache-bytes", "GRUNDY_CACHE_BYTES"),
        ("--drain-timeout", "GRUNDY_DRAIN_TIMEOUT"),
        ("--auth-token-file", "GRUNDY_AUTH_TOKEN_FILE"),
        ("--tls-cert", "GRUNDY_TLS_CERT"),
        ("--tls-key", "GRUNDY_TLS_KEY"),
        ("--tls-client-ca", "GRUNDY_TLS_CLIENT_CA"),
    ] {
        assert!(help.contains(flag), "{flag} missing from --help");
        assert!(
            help.contains(&format!("[env: {env}")),
            "{env} missing from --help"
        );
    }
}
