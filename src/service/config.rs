//! The server's settings as plain structs with their defaults: [`ServiceConfig`] for the
//! service (limits, buffers, cache, pool sizes) inside [`ServerConfig`] for the transport
//! (message size, drain, auth, TLS). `grundy-server`'s flags fill them ([`super::args`]); the
//! CLI's embedded server and the tests build them directly.

use std::time::Duration;

use crate::engine::Limits;
use crate::service::web::WebConfig;

/// Default of [`ServiceConfig::max_vertices`].
pub const DEFAULT_MAX_VERTICES: u32 = 50_000_000;
/// Default of [`ServiceConfig::max_edges`].
pub const DEFAULT_MAX_EDGES: u64 = 500_000_000;
/// Default of [`ServiceConfig::max_queries_per_stream`].
pub const DEFAULT_MAX_QUERIES_PER_STREAM: u64 = 10_000_000_000;
/// Default of [`ServiceConfig::max_concurrent_streams`].
pub const DEFAULT_MAX_CONCURRENT_STREAMS: usize = 1024;
/// Default of `--max-cyclic-work`, [`Limits::cyclic_work_budget`].
pub use crate::engine::DEFAULT_CYCLIC_WORK_BUDGET;
/// Default of [`ServiceConfig::cache_bytes`]: 1 GiB.
pub const DEFAULT_CACHE_BYTES: usize = 1 << 30;
/// Default largest gRPC message, in either direction: 256 MiB, enough for a graph of about
/// 50 million edges in one message (packed varints take 1 to 5 bytes per target). Larger
/// graphs go through `PutGraph` in chunks.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 256 << 20;
/// Default of [`ServerConfig::drain_timeout`].
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Tunables of the service.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Engine limits (work per vertex, ...).
    pub limits: Limits,
    /// Response messages buffered per stream before the server waits for the client.
    pub response_buffer: usize,
    /// Graph analyses running at once; more wait for a permit.
    pub compute_concurrency: usize,
    /// Query batches evaluated at once, across all streams; more wait for a permit.
    pub evaluation_concurrency: usize,
    /// Verdicts per response message of `EvaluateBatch`.
    pub batch_response_size: usize,
    /// Largest vertex count of a graph.
    pub max_vertices: u32,
    /// Largest edge count of a graph.
    pub max_edges: u64,
    /// Most queries one stream (`Evaluate` or `EvaluateBatch`) may carry.
    pub max_queries_per_stream: u64,
    /// Most RPCs of this service in progress at once; more are refused.
    pub max_concurrent_streams: usize,
    /// Bound of the table cache, in bytes.
    pub cache_bytes: usize,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            response_buffer: 16,
            compute_concurrency: cores(),
            // Batches are short: a few more than the cores keep every core busy while
            // finished batches travel back to their streams.
            evaluation_concurrency: 2 * cores(),
            batch_response_size: 4096,
            max_vertices: DEFAULT_MAX_VERTICES,
            max_edges: DEFAULT_MAX_EDGES,
            max_queries_per_stream: DEFAULT_MAX_QUERIES_PER_STREAM,
            max_concurrent_streams: DEFAULT_MAX_CONCURRENT_STREAMS,
            cache_bytes: DEFAULT_CACHE_BYTES,
        }
    }
}

/// The machine's cores (2 when unknown).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Server settings: the service's, and the transport's around it.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The service's tunables.
    pub service: ServiceConfig,
    /// Largest gRPC message accepted or sent, in bytes.
    pub max_message_bytes: usize,
    /// How long in-flight streams may run on after shutdown begins.
    pub drain_timeout: Duration,
    /// When set, every call except health checks must carry `authorization: Bearer <token>`.
    pub auth_token: Option<String>,
    /// When set, the server speaks TLS only.
    pub tls: Option<TlsConfig>,
    /// When set, the browser playground is served on the same port: its page, gRPC-Web
    /// (HTTP/1.1 accepted) and `POST /render` (see [`crate::service::web`]).
    pub web: Option<WebConfig>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            service: ServiceConfig::default(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
            auth_token: None,
            tls: None,
            web: None,
        }
    }
}

/// The server's TLS material, PEM-encoded.
#[derive(Clone)]
pub struct TlsConfig {
    /// Certificate chain, leaf first.
    pub cert_pem: Vec<u8>,
    /// The private key of the leaf certificate.
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
