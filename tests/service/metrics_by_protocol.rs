//! The request metrics by protocol: one call each over gRPC, JSON over HTTP and gRPC-Web
//! (the playground's, over HTTP/1.1), each counted under its own `protocol` label on the
//! metrics endpoint.

use grundy::proto::evaluate_start::GraphSource;
use grundy::service::{ServerConfig, WebConfig, serve_metrics};
use prost::Message;
use tokio::sync::oneshot;

use crate::json_http::to_json;
use crate::support::http1::{exchange, exchange_at};
use crate::support::server::{
    PATIENCE, TestServer, batch_request, grpc_frame, sample_graph, serve, server_config, tokens,
};

#[tokio::test]
async fn grpc_json_and_grpc_web_calls_are_counted_by_protocol() {
    let server = serve(ServerConfig {
        web: Some(WebConfig::default()),
        ..server_config()
    })
    .await;
    let request = batch_request(
        GraphSource::Graph(sample_graph()),
        vec![tokens(1, &[0]), tokens(2, &[1])],
    );

    // gRPC, through the generated client.
    let mut answers = server
        .client()
        .await
        .evaluate_batch(request.clone())
        .await
        .unwrap()
        .into_inner();
    while answers.message().await.unwrap().is_some() {}
    // JSON over HTTP/1.1.
    let body = to_json("grundy.v1.EvaluateBatchRequest", &request).to_string();
    let (status, headers, _) =
        exchange(&server, "POST /v1:evaluate HTTP/1.1", body.as_bytes()).await;
    assert_eq!(status, 200, "{headers}");
    // gRPC-Web over HTTP/1.1, as the playground calls.
    let head = "POST /grundy.v1.GrundyService/EvaluateBatch HTTP/1.1\r\n\
                Content-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1";
    let frame = grpc_frame(0, &request.encode_to_vec());
    let (status, headers, body) = exchange(&server, head, &frame).await;
    assert_eq!(status, 200, "{headers}");
    let body = String::from_utf8_lossy(&body).to_ascii_lowercase();
    assert!(body.contains("grpc-status:0"), "{headers}\n{body}");
    server.wait_idle().await;

    let page = metrics_page(&server).await;
    for protocol in ["grpc", "json", "grpc-web"] {
        for expected in [
            format!(
                r#"grundy_requests_total{{rpc="EvaluateBatch",code="OK",reason="",protocol="{protocol}"}} 1"#
            ),
            format!(
                r#"grundy_rpc_duration_seconds_count{{rpc="EvaluateBatch",code="OK",protocol="{protocol}"}} 1"#
            ),
        ] {
            assert!(page.contains(&expected), "{expected} missing from\n{page}");
        }
    }
    // Three calls, three series: none counted twice (the JSON call is one gRPC call inside).
    let counted = page
        .lines()
        .filter(|line| line.starts_with("grundy_requests_total{"))
        .count();
    assert_eq!(counted, 3, "{page}");
}

/// The metrics page of `server`, from an exporter started for the purpose.
async fn metrics_page(server: &TestServer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let exporter = tokio::spawn(serve_metrics(
        listener,
        server.service.metrics().clone(),
        async {
            let _ = stopped.await;
        },
    ));
    let (status, _, page) = exchange_at(address, "GET /metrics HTTP/1.1", b"").await;
    assert_eq!(status, 200);
    let _ = stop.send(());
    tokio::time::timeout(PATIENCE, exporter)
        .await
        .unwrap()
        .unwrap();
    String::from_utf8(page).unwrap()
}

#[tokio::test]
async fn json_requests_refused_before_their_call_are_counted_too() {
    let server = serve(ServerConfig {
        auth_token: Some("secret".into()),
        ..server_config()
    })
    .await;
    let (status, _, _) = exchange(&server, "POST /v1:evaluate HTTP/1.1", b"{}").await;
    assert_eq!(status, 401);
    let head = "POST /v1/graphs HTTP/1.1\r\nAuthorization: Bearer secret";
    let (status, _, _) = exchange(&server, head, b"{\"vertexCount\": [").await;
    assert_eq!(status, 400);
    let page = metrics_page(&server).await;
    for expected in [
        r#"grundy_requests_total{rpc="EvaluateBatch",code="UNAUTHENTICATED",reason="UNAUTHENTICATED",protocol="json"} 1"#,
        r#"grundy_requests_total{rpc="PutGraph",code="INVALID_ARGUMENT",reason="INVALID_REQUEST",protocol="json"} 1"#,
    ] {
        assert!(page.contains(expected), "{expected} missing from\n{page}");
    }
}
