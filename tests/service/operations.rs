//! Operating the server: health, reflection, compression, limits, deadlines, cancellation,
//! draining shutdown, metrics, bearer-token auth, TLS and mutual TLS, a bounded wait for an
//! analysis slot, responses under `max_message_bytes`. Most tests run an in-process server on
//! a loopback port and drive it through generated clients over real sockets; a few run the
//! real binaries (the CLI over mutual TLS, the server's JSON log and SIGTERM, its `--help`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::process::ChildGuard;
use crate::support::server::{
    PATIENCE, batch, chain, grpc_frame, next, open_stream, sample_graph, sample_outcome, serve,
    serve_service, server_config, service_config, small_limits, start, tokens,
    tournament_with_self_loop,
};
use grundy::client::{self, ConnectionArgs};
use grundy::engine::Limits;
use grundy::proto::{
    self, EvaluateBatchRequest, EvaluateRequest, EvaluateStart, PackedTokenQueries, Query,
    QueryBatch, evaluate_request::Payload, evaluate_start::GraphSource,
    grundy_service_client::GrundyServiceClient,
};
use grundy::service::ServiceConfig;
use grundy::service::{ServerConfig, TlsConfig};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;
use tonic::codec::CompressionEncoding;
use tonic::transport::Channel;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
use tonic_types::StatusExt;

async fn health_of(channel: Channel, service: &str) -> Result<ServingStatus, tonic::Status> {
    let response = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: service.into(),
        })
        .await?;
    Ok(response.into_inner().status())
}

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

#[tokio::test]
async fn graph_and_query_limits_name_the_limit_and_its_value() {
    let server = serve(small_limits()).await;
    let mut client = server.client().await;
    let refused = |status: tonic::Status, limit: &str| {
        assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
        assert!(status.message().contains(limit), "{status:?}");
    };

    let (held, rx) = mpsc::channel(1);
    held.send(start(chain(11))).await.unwrap();
    let status = client.evaluate(ReceiverStream::new(rx)).await.unwrap_err();
    refused(status, "max_vertices = 10");

    let mut dense = chain(10);
    dense.out_degrees = vec![2; 10];
    dense.targets = (0..20).map(|i| i % 10).collect();
    let (held, rx) = mpsc::channel(1);
    held.send(start(dense)).await.unwrap();
    let status = client.evaluate(ReceiverStream::new(rx)).await.unwrap_err();
    refused(status, "max_edges = 12");

    // Queries per stream: the first batches are answered, the one crossing the limit ends it.
    let mut stream = open_stream(&mut client, sample_graph()).await;
    let three = || batch((0..3).map(|i| tokens(i, &[0])).collect());
    stream.requests.send(three()).await.unwrap();
    assert_eq!(next(&mut stream.responses).await.unwrap().verdicts.len(), 3);
    stream.requests.send(three()).await.unwrap();
    refused(
        next(&mut stream.responses).await.unwrap_err(),
        "max_queries_per_stream = 5",
    );

    let six = (0..6).map(|i| tokens(i, &[0])).collect();
    let status = client
        .evaluate_batch(EvaluateBatchRequest {
            start: Some(EvaluateStart {
                graph_source: Some(GraphSource::Graph(sample_graph())),
                explain: false,
                analysis: None,
            }),
            queries: six,
        })
        .await
        .unwrap_err();
    refused(status, "max_queries_per_stream = 5");

    // Messages over max_message_bytes, unary and streamed.
    let big: Vec<Query> = (0..3).map(|i| tokens(i, &vec![0; 30_000])).collect();
    let status = client
        .evaluate_batch(EvaluateBatchRequest {
            start: Some(EvaluateStart {
                graph_source: Some(GraphSource::Graph(sample_graph())),
                explain: false,
                analysis: None,
            }),
            queries: big.clone(),
        })
        .await
        .unwrap_err();
    refused(status, "max_message_bytes");
    assert!(status_mentions_value(&client, &big).await);
}

/// The streamed form of an oversized message: RESOURCE_EXHAUSTED naming the limit and value.
async fn status_mentions_value(client: &GrundyServiceClient<Channel>, big: &[Query]) -> bool {
    let mut client = client.clone();
    let mut stream = open_stream(&mut client, sample_graph()).await;
    stream.requests.send(batch(big.to_vec())).await.unwrap();
    let status = next(&mut stream.responses).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    status.message().contains("max_message_bytes") && status.message().contains("65536")
}

#[tokio::test]
async fn concurrent_stream_limit_refuses_then_frees_the_slot_of_a_cancelled_stream() {
    let server = serve(ServerConfig {
        service: ServiceConfig {
            max_concurrent_streams: 1,
            ..server_config().service
        },
        ..server_config()
    })
    .await;
    let mut client = server.client().await;
    let stream = open_stream(&mut client, sample_graph()).await;
    assert_eq!(server.service.active_streams(), 1);
    let (held, rx) = mpsc::channel(1);
    held.send(start(sample_graph())).await.unwrap();
    let status = client.evaluate(ReceiverStream::new(rx)).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted);
    assert!(
        status.message().contains("max_concurrent_streams = 1"),
        "{status:?}"
    );
    // The client cancels its stream: the server stops working on it and frees the slot.
    drop(stream);
    server.wait_idle().await;
    let mut again = open_stream(&mut client, sample_graph()).await;
    again
        .requests
        .send(batch(vec![tokens(1, &[2])]))
        .await
        .unwrap();
    assert_eq!(
        next(&mut again.responses).await.unwrap().verdicts[0].nim_sum,
        1
    );
}

#[tokio::test]
async fn client_deadline_ends_an_idle_stream_with_deadline_exceeded() {
    let server = serve(server_config()).await;
    let mut client = server.client().await;
    let (tx, rx) = mpsc::channel(4);
    tx.send(start(sample_graph())).await.unwrap();
    let mut request = tonic::Request::new(ReceiverStream::new(rx));
    request.set_timeout(Duration::from_millis(300));
    let started = tokio::time::Instant::now();
    let mut responses = client.evaluate(request).await.unwrap().into_inner();
    assert!(next(&mut responses).await.unwrap().graph.is_some());
    // Send nothing more: the server must give up at the deadline, not wait forever.
    let status = next(&mut responses).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(started.elapsed() >= Duration::from_millis(250));
    server.wait_idle().await;
    drop(tx);
}

/// grpc-go, grpc-python and grpc-java clients reset a stream at their deadline (RST_STREAM
/// CANCEL), a moment before the server's own timer would end it: the server counts and logs
/// that as the deadline, not as a client that gave up.
#[tokio::test]
async fn a_client_leaving_at_its_deadline_is_counted_as_deadline_exceeded() {
    let server = serve(server_config()).await;
    let mut h2 = server.raw_client().await;
    let mut request = server.raw_evaluate_request();
    request
        .headers_mut()
        .insert("grpc-timeout", http::HeaderValue::from_static("1000m"));
    let (response, mut send) = h2.send_request(request, false).unwrap();
    let first = grpc_frame(0, &start(sample_graph()).encode_to_vec());
    send.send_data(bytes::Bytes::from(first), false).unwrap();
    let mut body = tokio::time::timeout(PATIENCE, response)
        .await
        .expect("response headers in time")
        .unwrap()
        .into_body();
    // The server's deadline is a second after the request arrived, so no later than a
    // second from now.
    let arrived_by = tokio::time::Instant::now();
    let summary = tokio::time::timeout(PATIENCE, body.data()).await;
    assert!(matches!(summary, Ok(Some(Ok(_)))), "{summary:?}");
    // The client's own timer, up to 80 ms before the server's could fire (or after it, on a
    // slow machine: DEADLINE_EXCEEDED either way).
    tokio::time::sleep_until(arrived_by + Duration::from_millis(920)).await;
    send.send_reset(h2::Reason::CANCEL);
    server.wait_idle().await;
    let text = server.service.metrics().encode();
    let line = r#"grundy_requests_total{rpc="Evaluate",code="DEADLINE_EXCEEDED",reason="DEADLINE_EXCEEDED"} 1"#;
    assert!(text.contains(line), "{text}");
}

#[tokio::test]
async fn deadline_before_the_first_response_is_reported_by_the_tonic_client_itself() {
    // tonic's channel enforces grpc-timeout too, and its timer starts before the request is
    // sent, so it fires before the server's answer arrives: the call fails on the client side
    // with CANCELLED "Timeout expired" (see docs/operating.md), and the server frees the
    // stream. (Both timers may fire in the same millisecond tick: then the server's
    // DEADLINE_EXCEEDED could win, so that one is accepted too.)
    let timed_out = |status: &tonic::Status| match status.code() {
        Code::Cancelled => status.message() == "Timeout expired",
        Code::DeadlineExceeded => status.message().starts_with("deadline of"),
        _ => false,
    };
    let server = serve(server_config()).await;
    let mut client = server.client().await;
    // The client opens the stream and never sends `start`.
    let (_held, rx) = mpsc::channel::<EvaluateRequest>(1);
    let mut request = tonic::Request::new(ReceiverStream::new(rx));
    request.set_timeout(Duration::from_millis(50));
    let status = client.evaluate(request).await.unwrap_err();
    assert!(timed_out(&status), "{status:?}");
    server.wait_idle().await;
    // The graph's analysis outlasts the deadline (a dense cyclic graph: about 0.3 s). The
    // analysis still finishes and is cached, so the next request finds it.
    let k = 1000u32;
    let dense = tournament_with_self_loop(k);
    let request = |timeout| {
        let mut request = tonic::Request::new(EvaluateBatchRequest {
            start: Some(EvaluateStart {
                graph_source: Some(GraphSource::Graph(dense.clone())),
                explain: false,
                analysis: None,
            }),
            queries: vec![tokens(1, &[0])],
        });
        request.set_timeout(timeout);
        request
    };
    let status = client
        .evaluate_batch(request(Duration::from_millis(50)))
        .await
        .unwrap_err();
    assert!(timed_out(&status), "{status:?}");
    server.wait_idle().await;
    let mut stream = client
        .evaluate_batch(request(PATIENCE))
        .await
        .unwrap()
        .into_inner();
    assert!(next(&mut stream).await.unwrap().graph.unwrap().cyclic);
    let text = server.service.metrics().encode();
    assert!(
        text.contains("grundy_table_compute_seconds_count 1\n"),
        "{text}"
    );
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
        "grundy_requests_total{rpc=\"Evaluate\",code=\"OK\",reason=\"\"} 1",
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
        "grundy_rpc_duration_seconds_count{rpc=\"Evaluate\",code=\"OK\"} 1",
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

/// A scratch directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("grundy-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn write(&self, name: &str, content: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, content).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn bearer_token_is_required_except_for_health_checks() {
    let server = serve(ServerConfig {
        auth_token: Some("s3cret-token".into()),
        ..server_config()
    })
    .await;
    let channel = server.channel().await;
    // Probes need no token.
    assert_eq!(
        health_of(channel.clone(), "").await.unwrap(),
        ServingStatus::Serving
    );
    // No token, a wrong token: UNAUTHENTICATED, on the service and on reflection.
    let mut anonymous = GrundyServiceClient::new(channel.clone());
    let (_held, rx) = mpsc::channel(1);
    let status = anonymous
        .evaluate(ReceiverStream::new(rx))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    let dir = TempDir::new("auth");
    let wrong = ConnectionArgs {
        auth_token_file: Some(dir.write("wrong", b"s3cret-tokeN\n")),
        ..ConnectionArgs::default()
    };
    let mut client = client::connect(&server.url(), &wrong, 1 << 20)
        .await
        .unwrap();
    let (_held, rx) = mpsc::channel(1);
    let status = client.evaluate(ReceiverStream::new(rx)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    assert_eq!(status.message(), "invalid bearer token");
    {
        use tonic_reflection::pb::v1::{
            ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
        };
        let mut reflection = ServerReflectionClient::new(channel);
        let status = reflection
            .server_reflection_info(tokio_stream::iter(Vec::<ServerReflectionRequest>::new()))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::Unauthenticated);
    }
    // The right token (from a file, with its trailing newline) is accepted.
    let right = ConnectionArgs {
        auth_token_file: Some(dir.write("right", b"s3cret-token\n")),
        ..ConnectionArgs::default()
    };
    let mut client = client::connect(&server.url(), &right, 1 << 20)
        .await
        .unwrap();
    let (tx, rx) = mpsc::channel(4);
    tx.send(start(sample_graph())).await.unwrap();
    tx.send(batch(vec![tokens(7, &[0, 2])])).await.unwrap();
    drop(tx);
    let mut responses = client
        .evaluate(ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    next(&mut responses).await.unwrap();
    assert_eq!(next(&mut responses).await.unwrap().verdicts[0].nim_sum, 3);
    assert!(
        server
            .service
            .metrics()
            .encode()
            .contains("grundy_auth_failures_total 3")
    );
}

/// A test CA, and a server and a client certificate it signed (ECDSA P-256, via ring).
struct Pki {
    ca_pem: String,
    server_cert_pem: String,
    server_key_pem: String,
    client_cert_pem: String,
    client_key_pem: String,
}

fn pki() -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "grundy test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let server_key = KeyPair::generate().unwrap();
    let server_cert = CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()])
        .unwrap()
        .signed_by(&server_key, &*ca)
        .unwrap();
    let client_key = KeyPair::generate().unwrap();
    let mut client_params = CertificateParams::new(vec!["grundy-client".into()]).unwrap();
    client_params
        .distinguished_name
        .push(DnType::CommonName, "grundy-client");
    let client_cert = client_params.signed_by(&client_key, &*ca).unwrap();
    Pki {
        ca_pem: ca.pem(),
        server_cert_pem: server_cert.pem(),
        server_key_pem: server_key.serialize_pem(),
        client_cert_pem: client_cert.pem(),
        client_key_pem: client_key.serialize_pem(),
    }
}

async fn tls_evaluate_works(url: &str, args: &ConnectionArgs) -> Result<(), String> {
    let mut client = client::connect(url, args, 1 << 20)
        .await
        .map_err(|e| e.to_string())?;
    let (tx, rx) = mpsc::channel(4);
    tx.send(start(sample_graph())).await.unwrap();
    tx.send(batch(vec![tokens(1, &[0])])).await.unwrap();
    drop(tx);
    let mut responses = client
        .evaluate(ReceiverStream::new(rx))
        .await
        .map_err(|s| s.to_string())?
        .into_inner();
    next(&mut responses).await.map_err(|s| s.to_string())?;
    let verdicts = next(&mut responses)
        .await
        .map_err(|s| s.to_string())?
        .verdicts;
    assert_eq!(verdicts[0].nim_sum, 2);
    Ok(())
}

#[tokio::test]
async fn tls_and_mutual_tls() {
    let pki = pki();
    let dir = TempDir::new("tls");
    let ca = dir.write("ca.pem", pki.ca_pem.as_bytes());
    let client_cert = dir.write("client.pem", pki.client_cert_pem.as_bytes());
    let client_key = dir.write("client.key", pki.client_key_pem.as_bytes());
    let trusting = ConnectionArgs {
        tls_ca: Some(ca.clone()),
        ..ConnectionArgs::default()
    };

    // Server-authenticated TLS.
    let server = serve(ServerConfig {
        tls: Some(TlsConfig {
            cert_pem: pki.server_cert_pem.clone().into_bytes(),
            key_pem: pki.server_key_pem.clone().into_bytes(),
            client_ca_pem: None,
        }),
        ..server_config()
    })
    .await;
    let https = format!("https://{}", server.address);
    tls_evaluate_works(&https, &trusting).await.unwrap();
    // By name too, when the name differs from the address dialled.
    let by_name = ConnectionArgs {
        tls_server_name: Some("localhost".into()),
        ..trusting.clone()
    };
    tls_evaluate_works(&https, &by_name).await.unwrap();
    // A client that does not trust the CA, and one that speaks plaintext, get nowhere.
    assert!(
        tls_evaluate_works(&https, &ConnectionArgs::default())
            .await
            .is_err()
    );
    assert!(
        tls_evaluate_works(&server.url(), &ConnectionArgs::default())
            .await
            .is_err()
    );
    drop(server);

    // Mutual TLS: a client certificate signed by the client CA is required.
    let server = serve(ServerConfig {
        tls: Some(TlsConfig {
            cert_pem: pki.server_cert_pem.into_bytes(),
            key_pem: pki.server_key_pem.into_bytes(),
            client_ca_pem: Some(pki.ca_pem.into_bytes()),
        }),
        ..server_config()
    })
    .await;
    let https = format!("https://{}", server.address);
    assert!(tls_evaluate_works(&https, &trusting).await.is_err());
    let with_certificate = ConnectionArgs {
        tls_cert: Some(client_cert),
        tls_key: Some(client_key),
        ..trusting
    };
    tls_evaluate_works(&https, &with_certificate).await.unwrap();
}

const CHESS_INPUT: &str = "4\n2 1 2\n0\n1 3\n0\n1 0\n2 0 2\n0\n";

#[tokio::test]
async fn cli_connects_with_tls_and_a_token() {
    let pki = pki();
    let dir = TempDir::new("cli");
    let server = serve(ServerConfig {
        auth_token: Some("cli-token".into()),
        tls: Some(TlsConfig {
            cert_pem: pki.server_cert_pem.into_bytes(),
            key_pem: pki.server_key_pem.into_bytes(),
            client_ca_pem: Some(pki.ca_pem.clone().into_bytes()),
        }),
        ..server_config()
    })
    .await;
    let input = dir.write("sample.in", CHESS_INPUT.as_bytes());
    let ca = dir.write("ca.pem", pki.ca_pem.as_bytes());
    let cert = dir.write("client.pem", pki.client_cert_pem.as_bytes());
    let key = dir.write("client.key", pki.client_key_pem.as_bytes());
    let token = dir.write("token", b"cli-token\n");
    let url = format!("https://{}", server.address);
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_grundy"))
            .args(["judge", "chess", "--server", &url])
            .arg(&input)
            .arg("--tls-ca")
            .arg(&ca)
            .env("GRUNDY_CLIENT_CERT", &cert)
            .env("GRUNDY_CLIENT_KEY", &key)
            .env("GRUNDY_AUTH_TOKEN_FILE", &token)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "WIN\nWIN\n");
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

/// The wait for an analysis slot is bounded. With one slot and a 200 ms bound, of two
/// expensive graphs sent at once (each about a second of work), one is analysed (to the end
/// of its budget) and the other is refused with a retryable UNAVAILABLE naming the bound,
/// instead of queueing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_an_analysis_slot_is_bounded() {
    let server = serve_service(ServiceConfig {
        limits: Limits {
            cyclic_work_budget: 1 << 30,
            ..Limits::default()
        },
        compute_concurrency: 1,
        analysis_queue_timeout: Duration::from_millis(200),
        ..service_config()
    })
    .await;
    let mut calls = Vec::new();
    for k in 1800..1802 {
        let mut client = server.client().await;
        calls.push(tokio::spawn(async move {
            let requests = vec![start(tournament_with_self_loop(k))];
            client
                .evaluate(tokio_stream::iter(requests))
                .await
                .expect_err("over the budget or refused")
        }));
    }
    let mut statuses = Vec::new();
    for call in calls {
        statuses.push(
            tokio::time::timeout(PATIENCE, call)
                .await
                .expect("in time")
                .unwrap(),
        );
    }
    let mut codes: Vec<Code> = statuses.iter().map(|s| s.code()).collect();
    codes.sort_by_key(|&code| code as i32);
    assert_eq!(
        codes,
        [Code::ResourceExhausted, Code::Unavailable],
        "{statuses:?}"
    );
    let refused = statuses
        .iter()
        .find(|s| s.code() == Code::Unavailable)
        .unwrap();
    assert!(
        refused.message().contains("analysis_queue_timeout"),
        "{}",
        refused.message()
    );
    // Retryable, and a program can tell why without parsing the text.
    let details = refused.get_error_details();
    let info = details.error_info().expect("ErrorInfo");
    assert_eq!(info.reason, "ANALYSIS_QUEUE_FULL");
    assert_eq!(info.metadata["limit"], "analysis_queue_timeout");
    assert!(details.retry_info().is_some(), "RetryInfo");
}

/// With `max_message_bytes` 1 MiB, every response of an explain stream of 300,000 packed
/// queries stays under the limit, and the verdicts come in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_stay_under_max_message_bytes() {
    const LIMIT: usize = 1 << 20;
    const QUERIES: u32 = 300_000;
    let server = serve(ServerConfig {
        service: service_config(),
        max_message_bytes: LIMIT,
        ..ServerConfig::default()
    })
    .await;
    let mut client = GrundyServiceClient::new(server.channel().await)
        .max_decoding_message_size(LIMIT)
        .max_encoding_message_size(LIMIT);
    let explain = EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::Graph(sample_graph())),
            explain: true,
            analysis: None,
        })),
    };
    let packed = EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries: vec![],
            packed_tokens: Some(PackedTokenQueries {
                first_query_id: 0,
                token_counts: vec![1; QUERIES as usize],
                vertices: (0..QUERIES).map(|i| i % 4).collect(),
            }),
        })),
    };
    let mut stream = client
        .evaluate(tokio_stream::iter([explain, packed]))
        .await
        .unwrap()
        .into_inner();
    next(&mut stream).await.expect("the summary");
    let mut expected_id = 0u64;
    while let Some(response) = tokio::time::timeout(PATIENCE, stream.message())
        .await
        .expect("a response in time")
        .unwrap_or_else(|s| panic!("after {expected_id} verdicts: {s}"))
    {
        assert!(response.encoded_len() < LIMIT);
        for verdict in response.verdicts {
            assert_eq!(verdict.query_id, expected_id);
            assert_eq!(verdict.outcome, sample_outcome((expected_id % 4) as u32));
            expected_id += 1;
        }
    }
    assert_eq!(expected_id, u64::from(QUERIES));
}
