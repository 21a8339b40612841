//! The OpenAPI document of JSON over HTTP: served at `/v1/openapi.json`, the very bytes of
//! `docs/openapi.json`, behind the token as every route.

use grundy::service::ServerConfig;

use crate::support::http1::exchange;
use crate::support::server::{serve, server_config};

#[tokio::test]
async fn the_openapi_document_is_served_as_docs_has_it_and_needs_the_token() {
    let kept = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/openapi.json")).unwrap();
    let server = serve(server_config()).await;
    let (status, headers, body) = exchange(&server, "GET /v1/openapi.json HTTP/1.1", b"").await;
    assert_eq!(status, 200);
    assert!(
        headers
            .to_ascii_lowercase()
            .contains("content-type: application/json")
    );
    assert!(body == kept, "the served document is not docs/openapi.json");
    let (status, _, _) = exchange(&server, "POST /v1/openapi.json HTTP/1.1", b"{}").await;
    assert_eq!(status, 405);

    let guarded = serve(ServerConfig {
        auth_token: Some("secret".into()),
        ..server_config()
    })
    .await;
    let (status, _, _) = exchange(&guarded, "GET /v1/openapi.json HTTP/1.1", b"").await;
    assert_eq!(status, 401);
    let head = "GET /v1/openapi.json HTTP/1.1\r\nAuthorization: Bearer secret";
    let (status, _, body) = exchange(&guarded, head, b"").await;
    assert_eq!(status, 200);
    assert!(body == kept);
}
