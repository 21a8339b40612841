//! Serving `grundy.v1` on a listener until a shutdown future resolves. Used by the
//! `grundy-server` binary, by the CLI's embedded server and by the tests.

use std::future::Future;

use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;

use crate::proto::grundy_service_server::GrundyServiceServer;
use crate::service::{Grundy, ServiceConfig};

/// Default largest gRPC message, in either direction: 256 MiB, enough for a graph of about
/// 50 million edges in one message (packed varints take 1 to 5 bytes per target).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 256 << 20;

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub service: ServiceConfig,
    pub max_message_bytes: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            service: ServiceConfig::default(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

/// Serves until `shutdown` resolves, then stops accepting connections and lets in-flight
/// streams finish.
pub async fn run(
    listener: TcpListener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let service = Grundy::new(config.service.clone());
    run_service(listener, service, &config, shutdown).await
}

/// Like [`run`] with a service state the caller keeps a handle to (tests inspect it).
pub async fn run_service(
    listener: TcpListener,
    service: Grundy,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    let service = GrundyServiceServer::new(service)
        .max_decoding_message_size(config.max_message_bytes)
        .max_encoding_message_size(config.max_message_bytes);
    tonic::transport::Server::builder()
        .add_service(service)
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await
}
