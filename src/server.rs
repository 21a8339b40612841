//! Serving `grundy.v1` on a listener until a shutdown future resolves, with the standard
//! endpoints around it: `grpc.health.v1` health, server reflection v1, gzip/zstd compression,
//! optional bearer-token auth and TLS (mutual TLS with a client CA). Used by the
//! `grundy-server` binary, by the CLI's embedded server and by the tests.
//!
//! Shutdown drains: when `shutdown` resolves, health turns NOT_SERVING and new streams are
//! refused with UNAVAILABLE while the listener stays open (so probes see it); streams in
//! progress get up to `drain_timeout` to finish, then the rest are cancelled with UNAVAILABLE
//! "server shutting down", and the server closes its connections and returns.

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tonic::codec::CompressionEncoding;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Certificate, Identity, ServerTlsConfig};
use tonic_health::ServingStatus;
use tower::util::{MapRequestLayer, MapResponseLayer};

use crate::auth::BearerAuth;
use crate::error::is_message_size_error;
use crate::proto::{self, grundy_service_server::GrundyServiceServer};
use crate::service::{Grundy, ServiceConfig, stamp_arrival};

/// Default largest gRPC message, in either direction: 256 MiB, enough for a graph of about
/// 50 million edges in one message (packed varints take 1 to 5 bytes per target). Larger
/// graphs go through `PutGraph` in chunks.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 256 << 20;

/// Default of [`ServerConfig::drain_timeout`].
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// How long cancelled streams get to deliver their final status, and connections to close,
/// once the drain is over.
const CLOSE_GRACE: Duration = Duration::from_secs(3);

/// The gRPC service name of `grundy.v1.GrundyService`, as health checks name it.
pub const SERVICE_NAME: &str = "grundy.v1.GrundyService";

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub service: ServiceConfig,
    pub max_message_bytes: usize,
    /// How long in-flight streams may run on after shutdown begins.
    pub drain_timeout: Duration,
    /// When set, every call except health checks must carry `authorization: Bearer <token>`.
    pub auth_token: Option<String>,
    /// When set, the server speaks TLS only.
    pub tls: Option<TlsConfig>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            service: ServiceConfig::default(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
            auth_token: None,
            tls: None,
        }
    }
}

/// The server's TLS material, PEM-encoded.
#[derive(Clone)]
pub struct TlsConfig {
    /// Certificate chain, leaf first.
    pub cert_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
    /// CA certificate(s) of the clients: when set, clients must present a certificate it
    /// signed (mutual TLS).
    pub client_ca_pem: Option<Vec<u8>>,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("TlsConfig")
            .field("mutual", &self.client_ca_pem.is_some())
            .finish_non_exhaustive()
    }
}

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("{0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("cannot build the reflection service: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
}

/// Serves until `shutdown` resolves, then drains (see the module documentation).
pub async fn run(
    listener: TcpListener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    let service = Grundy::new(config.service.clone());
    run_service(listener, service, &config, shutdown).await
}

/// Like [`run`] with a service state the caller keeps a handle to (tests inspect it; the
/// binary serves its metrics).
pub async fn run_service(
    listener: TcpListener,
    service: Grundy,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_service_status(SERVICE_NAME, ServingStatus::Serving)
        .await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let auth = BearerAuth::new(config.auth_token.as_deref(), service.metrics().clone());
    let grundy = GrundyServiceServer::new(service.clone())
        .max_decoding_message_size(config.max_message_bytes)
        .max_encoding_message_size(config.max_message_bytes)
        .accept_compressed(CompressionEncoding::Gzip)
        .accept_compressed(CompressionEncoding::Zstd)
        .send_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Zstd);

    let mut builder = tonic::transport::Server::builder();
    if let Some(tls) = &config.tls {
        let mut tls_config =
            ServerTlsConfig::new().identity(Identity::from_pem(&tls.cert_pem, &tls.key_pem));
        if let Some(client_ca) = &tls.client_ca_pem {
            tls_config = tls_config.client_ca_root(Certificate::from_pem(client_ca));
        }
        builder = builder.tls_config(tls_config)?;
    }
    let remap: fn(http::Response<tonic::body::Body>) -> http::Response<tonic::body::Body> =
        remap_message_size_status;
    let stamp: fn(http::Request<tonic::body::Body>) -> http::Request<tonic::body::Body> =
        stamp_arrival;
    let router = builder
        .layer(MapResponseLayer::new(remap))
        // Before tonic's grpc-timeout timer starts, so that deadlines end as DEADLINE_EXCEEDED.
        .layer(MapRequestLayer::new(stamp))
        // Health stays open for probes; everything else needs the token when one is set.
        .add_service(health_service)
        .add_service(InterceptedService::new(grundy, auth.clone()))
        .add_service(InterceptedService::new(reflection, auth));

    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    let (stop_serving, stopped) = oneshot::channel::<()>();
    let server = router.serve_with_incoming_shutdown(incoming, async {
        let _ = stopped.await;
    });
    tokio::pin!(server);
    tokio::select! {
        result = &mut server => return result.map_err(ServerError::from),
        () = shutdown => {}
    }

    tracing::info!(
        streams = service.active_streams(),
        drain_timeout = ?config.drain_timeout,
        "shutting down: NOT_SERVING, refusing new streams, draining"
    );
    health
        .set_service_status("", ServingStatus::NotServing)
        .await;
    health
        .set_service_status(SERVICE_NAME, ServingStatus::NotServing)
        .await;
    service.begin_drain();
    let drained = tokio::select! {
        () = service.wait_idle() => true,
        () = tokio::time::sleep(config.drain_timeout) => false,
        result = &mut server => return result.map_err(ServerError::from),
    };
    if !drained {
        tracing::warn!(
            streams = service.active_streams(),
            "drain timeout: cancelling the remaining streams"
        );
        service.cancel_streams();
        if tokio::time::timeout(CLOSE_GRACE, service.wait_idle())
            .await
            .is_err()
        {
            tracing::warn!(
                streams = service.active_streams(),
                "streams still running after cancellation"
            );
        }
    }
    let _ = stop_serving.send(());
    match tokio::time::timeout(CLOSE_GRACE, &mut server).await {
        Ok(result) => result?,
        // Health watches and idle clients may hold connections open: stop waiting for them.
        Err(_) => tracing::info!("connections still open after the grace period; closing"),
    }
    tracing::info!("server stopped");
    Ok(())
}

/// tonic refuses a request message over `max_message_bytes` with OUT_OF_RANGE before the
/// handler runs (unary requests); the API promises RESOURCE_EXHAUSTED naming the limit, so the
/// trailers-only response is rewritten here. (Streamed requests are rewritten by the service,
/// see [`crate::error::request_stream_status`].)
fn remap_message_size_status(
    mut response: http::Response<tonic::body::Body>,
) -> http::Response<tonic::body::Body> {
    let headers = response.headers_mut();
    let is_out_of_range = headers
        .get("grpc-status")
        .is_some_and(|status| status.as_bytes() == b"11");
    if !is_out_of_range {
        return response;
    }
    let message = headers
        .get("grpc-message")
        .and_then(|m| m.to_str().ok())
        .map(percent_decode)
        .unwrap_or_default();
    if !is_message_size_error(tonic::Code::OutOfRange, &message) {
        return response;
    }
    let message = percent_encode(&format!("max_message_bytes: {message}"));
    headers.insert("grpc-status", http::HeaderValue::from_static("8"));
    if let Ok(value) = http::HeaderValue::from_str(&message) {
        headers.insert("grpc-message", value);
    }
    response
}

/// grpc-message is percent-encoded (the gRPC HTTP/2 protocol).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| char::from(b).to_digit(16);
            if let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                decoded.push((high * 16 + low) as u8);
                i += 3;
                continue;
            }
        }
        decoded.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

fn percent_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if (0x20..0x7f).contains(&byte) && byte != b'%' {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_coding_round_trips() {
        let text = "max_message_bytes: 100% of 5 bytes ∞";
        assert_eq!(percent_decode(&percent_encode(text)), text);
        assert_eq!(percent_decode("a%20b%"), "a b%");
    }
}
