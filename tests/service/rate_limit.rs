//! `--rate-limit`: each client (its valid token, else its address) gets its own budget of
//! requests; past it gRPC calls end RESOURCE_EXHAUSTED with a `RetryInfo`, JSON requests get
//! 429 with `Retry-After`, and other clients and health checks are served on. The rates are
//! per minute, so that no budget refills while a test runs.

use std::net::SocketAddr;
use std::time::Duration;

use grundy::proto::GetValuesRequest;
use grundy::service::{RateLimit, ServerConfig};
use tokio::net::TcpSocket;
use tonic::Code;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
use tonic_types::StatusExt;

use crate::support::http1::{exchange_at, exchange_on};
use crate::support::server::{TestServer, serve, server_config};

/// A server allowing `rate` per client.
async fn limited(rate: &str, auth_token: Option<&str>) -> TestServer {
    serve(ServerConfig {
        rate_limit: Some(RateLimit::parse(rate).unwrap()),
        auth_token: auth_token.map(str::to_string),
        ..server_config()
    })
    .await
}

/// `GET /v1/graphs/{unknown}/values` from the source address `from`, with `authorization`:
/// (HTTP status, headers, body).
async fn get_from(
    server: &TestServer,
    from: &str,
    authorization: Option<&str>,
) -> (u16, String, Vec<u8>) {
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::new(from.parse().unwrap(), 0))
        .unwrap();
    let stream = socket.connect(server.address).await.unwrap();
    let mut head = format!("GET /v1/graphs/{}/values HTTP/1.1", "0".repeat(64));
    if let Some(value) = authorization {
        head.push_str(&format!("\r\nAuthorization: {value}"));
    }
    exchange_on(stream, &server.address.to_string(), &head, b"").await
}

#[tokio::test]
async fn a_client_over_its_rate_is_refused_with_a_retry_delay_in_both_protocols() {
    let server = limited("3/min", None).await;
    let mut client = server.client().await;
    let request = || GetValuesRequest {
        graph_id: "0".repeat(64),
        ..Default::default()
    };
    // Three requests pass the limit (and fail on their own account: no such graph).
    for _ in 0..3 {
        let status = client.get_values(request()).await.unwrap_err();
        assert_eq!(status.code(), Code::NotFound, "{status:?}");
    }
    let status = client.get_values(request()).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    let details = status.get_error_details();
    let info = details.error_info().expect("ErrorInfo");
    assert_eq!(info.reason, "RATE_LIMITED");
    assert_eq!(info.metadata["limit"], "rate_limit");
    assert_eq!(info.metadata["limit_value"], "3/min");
    let delay = details.retry_info().and_then(|retry| retry.retry_delay);
    let delay = delay.expect("a RetryInfo delay");
    assert!(
        delay > Duration::ZERO && delay <= Duration::from_secs(20),
        "{delay:?}"
    );
    assert!(
        status.message().contains("rate_limit = 3/min"),
        "{status:?}"
    );

    // The same address over JSON: 429 with Retry-After, the same reason.
    let (code, headers, body) = get_from(&server, "127.0.0.1", None).await;
    assert_eq!(code, 429, "{}", String::from_utf8_lossy(&body));
    let retry_after = headers
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("retry-after: ")
                .map(str::to_string)
        })
        .expect("Retry-After");
    let seconds: u64 = retry_after.trim().parse().unwrap();
    assert!((1..=20).contains(&seconds), "{seconds}");
    let error: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let reasons: Vec<_> = error["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|detail| detail["reason"].as_str())
        .collect();
    assert_eq!(reasons, ["RATE_LIMITED"], "{error}");

    // Another address has a budget of its own; health checks are never counted.
    let (code, _, body) = get_from(&server, "127.0.0.2", None).await;
    assert_eq!(code, 404, "{}", String::from_utf8_lossy(&body));
    let mut health = HealthClient::new(server.channel().await);
    let check = HealthCheckRequest {
        service: String::new(),
    };
    health.check(check).await.unwrap();
}

#[tokio::test]
async fn holders_of_the_token_share_one_budget_and_a_wrong_token_mints_none() {
    let server = limited("2/min", Some("secret")).await;
    let bearer = Some("Bearer secret");
    for _ in 0..2 {
        let (code, _, body) = get_from(&server, "127.0.0.1", bearer).await;
        assert_eq!(code, 404, "{}", String::from_utf8_lossy(&body));
    }
    // The token's budget is spent, from whatever address it comes.
    let (code, _, _) = get_from(&server, "127.0.0.3", bearer).await;
    assert_eq!(code, 429);
    // A wrong token counts against its address, which still has its budget: refused by the
    // token check, not the limit.
    let (code, _, _) = get_from(&server, "127.0.0.3", Some("Bearer guess")).await;
    assert_eq!(code, 401);
    // Without the limit nothing changes: a server with no --rate-limit refuses nothing.
    let open = serve(server_config()).await;
    for _ in 0..5 {
        let (code, _, _) = exchange_at(
            open.address,
            &format!("GET /v1/graphs/{}/values HTTP/1.1", "0".repeat(64)),
            b"",
        )
        .await;
        assert_eq!(code, 404);
    }
}
