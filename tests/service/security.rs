//! Who may call: bearer-token auth (health checks exempt), TLS and mutual TLS with a test CA,
//! JSON over HTTP/1.1 on TLS, and the real CLI connecting over mutual TLS with a token.
//! In-process servers on a loopback port, driven through generated clients (or raw HTTP/1.1)
//! over real sockets.

use std::process::{Command, Stdio};
use std::sync::Arc;

use crate::support::http1::{exchange, exchange_on};
use crate::support::server::{
    batch, health_of, next, sample_graph, serve, server_config, start, tokens,
};
use crate::support::tls::{TempDir, pki};
use grundy::client::{self, ConnectionArgs};
use grundy::proto::grundy_service_client::GrundyServiceClient;
use grundy::service::{ServerConfig, TlsConfig};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;

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

/// JSON over HTTP/1.1 on a TLS connection answers what the same request answers in
/// plaintext. The client offers no ALPN protocol (the server announces only h2, which an
/// HTTP/1.1 client such as `curl --http1.1` does not ask for).
#[tokio::test]
async fn json_over_tls_answers_as_in_plaintext() {
    let pki = pki();
    let tls = TlsConfig {
        cert_pem: pki.server_cert_pem.into_bytes(),
        key_pem: pki.server_key_pem.into_bytes(),
        client_ca_pem: None,
    };
    let server = serve(ServerConfig {
        tls: Some(tls),
        ..server_config()
    })
    .await;
    let plain = serve(server_config()).await;
    let head = "POST /v1/graphs HTTP/1.1";
    let body = br#"{"vertexCount": 2, "outDegrees": [1, 0], "targets": [1]}"#;

    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(pki.ca_pem.as_bytes()).unwrap())
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let socket = tokio::net::TcpStream::connect(server.address)
        .await
        .unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    let session = connector.connect(name, socket).await.unwrap();
    let (status, headers, answer) = exchange_on(session, "localhost", head, body).await;
    assert_eq!(status, 200, "{headers}");
    let (_, _, plaintext) = exchange(&plain, head, body).await;
    let json = |bytes: &[u8]| serde_json::from_slice::<serde_json::Value>(bytes).unwrap();
    assert_eq!(json(&answer), json(&plaintext));
    assert!(json(&answer)["graphId"].is_string(), "{}", json(&answer));
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
