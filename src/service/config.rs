//! The server's settings as plain structs with their defaults: [`ServiceConfig`] for the
//! service (limits, buffers, cache, pool sizes) inside [`ServerConfig`] for the transport
//! (message size, drain, auth, TLS). `grundy-server`'s flags fill them ([`super::args`]); the
//! CLI's embedded server and the tests build them directly.

use std::num::NonZeroU32;
use std::time::Duration;

use super::convert::AnalysisCaps;
use super::store::GraphStore;
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
/// Default of [`ServiceConfig::start_timeout`].
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(10);
/// Default of [`ServiceConfig::stream_idle_timeout`]: 5 minutes (as Envoy's stream idle
/// timeout).
pub const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Default of [`ServiceConfig::analysis_queue_timeout`].
pub const DEFAULT_ANALYSIS_QUEUE_TIMEOUT: Duration = Duration::from_secs(30);
/// Default of [`ServiceConfig::failed_graphs`].
pub const DEFAULT_FAILED_GRAPHS: usize = 4096;

/// Tunables of the service.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Engine limits (work per vertex, ...).
    pub limits: Limits,
    /// Response messages buffered per stream before the server waits for the client.
    pub response_buffer: usize,
    /// Graph analyses running at once; more wait for a permit.
    pub compute_concurrency: usize,
    /// Longest wait for an analysis, search or render permit: a request still waiting then
    /// is refused with UNAVAILABLE (retryable), so that a burst of expensive graphs, or other
    /// clients' long searches, cannot make it queue without end.
    pub analysis_queue_timeout: Duration,
    /// Graph ids whose analysis failed a limit (the cyclic work budget, a value overflow)
    /// remembered, most recent first: sent again, such a graph is refused at once.
    pub failed_graphs: usize,
    /// How long a `PutGraph` or `Evaluate` stream may send nothing before its first message
    /// (the `start` or first chunk) is whole, before it is ended with DEADLINE_EXCEEDED,
    /// freeing its slot; also how long the message of a unary call, or a `POST /render`
    /// body, may bring nothing.
    pub start_timeout: Duration,
    /// How long an `Evaluate` stream whose client has read every answer, or a `PutGraph`
    /// stream between chunks, may send nothing before it is ended with DEADLINE_EXCEEDED,
    /// freeing its slot; `None`: never.
    pub stream_idle_timeout: Option<Duration>,
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
    /// Where registered graphs are kept behind the cache; `None`: in memory, at most
    /// `cache_bytes` of graphs (shared with the cached analyses, not copied).
    pub store: Option<GraphStore>,
    /// The caps on a stream's position analysis (`EvaluateStart.analysis`).
    pub analysis: AnalysisCaps,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            // Room for the responses of a whole group of batches (one query per message):
            // tonic writes the responses that are ready together, in fewer DATA frames.
            response_buffer: 64,
            compute_concurrency: cores(),
            analysis_queue_timeout: DEFAULT_ANALYSIS_QUEUE_TIMEOUT,
            failed_graphs: DEFAULT_FAILED_GRAPHS,
            start_timeout: DEFAULT_START_TIMEOUT,
            stream_idle_timeout: Some(DEFAULT_STREAM_IDLE_TIMEOUT),
            // Batches are short: a few more than the cores keep every core busy while
            // finished batches travel back to their streams.
            evaluation_concurrency: 2 * cores(),
            batch_response_size: 4096,
            max_vertices: DEFAULT_MAX_VERTICES,
            max_edges: DEFAULT_MAX_EDGES,
            max_queries_per_stream: DEFAULT_MAX_QUERIES_PER_STREAM,
            max_concurrent_streams: DEFAULT_MAX_CONCURRENT_STREAMS,
            cache_bytes: DEFAULT_CACHE_BYTES,
            store: None,
            analysis: AnalysisCaps::default(),
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
    /// (HTTP/1.1 accepted) and `POST /render` (see `crate::service::web`).
    pub web: Option<WebConfig>,
    /// HTTP/2 keepalive and connection ageing.
    pub connections: ConnectionConfig,
    /// Serve server reflection (v1 and v1alpha). On for every server others connect to; a
    /// server reached only through its owner's in-memory pipes (the CLI's, for one run) does
    /// without it: building it decodes every descriptor, most of a small run's start-up.
    pub reflection: bool,
    /// Serve JSON over HTTP beside gRPC (`crate::service::json`). On for every server others
    /// connect to; one reached only by its owner's gRPC client (the CLI's) does without it:
    /// building its routes decodes every descriptor too.
    pub json: bool,
    /// When set, each client may send at most this many requests (`--rate-limit`).
    pub rate_limit: Option<RateLimit>,
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
            connections: ConnectionConfig::default(),
            reflection: true,
            json: true,
            rate_limit: None,
        }
    }
}

/// Default of [`ConnectionConfig::keepalive_interval`].
pub const DEFAULT_KEEPALIVE_INTERVAL: Duration = Duration::from_secs(60);
/// Default of [`ConnectionConfig::keepalive_timeout`].
pub const DEFAULT_KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);
/// Default of `--max-connection-age` (the library default is no limit, see
/// [`ConnectionConfig`]).
pub const DEFAULT_MAX_CONNECTION_AGE: Duration = Duration::from_secs(30 * 60);

/// Connection management for load balancers: HTTP/2 pings find dead peers and keep idle
/// connections open through NATs; an age limit sends GOAWAY so that long-lived clients
/// reconnect and spread over replicas added since. The default has no age limit (the
/// embedded server of the CLI must never cut its own stream); `grundy-server`'s flags default
/// to [`DEFAULT_MAX_CONNECTION_AGE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionConfig {
    /// Ping a connection idle this long; `None`: no pings.
    pub keepalive_interval: Option<Duration>,
    /// Close a connection whose ping is not answered within this.
    pub keepalive_timeout: Duration,
    /// Send GOAWAY to a connection this old; `None`: no limit.
    pub max_age: Option<Duration>,
    /// After GOAWAY, close the connection this much later even if streams are still open;
    /// `None`: wait for them.
    pub max_age_grace: Option<Duration>,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        Self {
            keepalive_interval: Some(DEFAULT_KEEPALIVE_INTERVAL),
            keepalive_timeout: DEFAULT_KEEPALIVE_TIMEOUT,
            max_age: None,
            max_age_grace: None,
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

/// A rate: `count` requests per `period` (one second or one minute), `count` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests per period, and the burst allowed.
    pub count: NonZeroU32,
    /// The period: one second or one minute.
    pub period: Duration,
}

impl RateLimit {
    /// Parses `50`, `50/s` or `600/min`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (count, period) = match text.split_once('/') {
            None => (text, Duration::from_secs(1)),
            Some((count, "s")) => (count, Duration::from_secs(1)),
            Some((count, "min")) => (count, Duration::from_secs(60)),
            Some(_) => return Err(format!("{text:?}: write N, N/s or N/min")),
        };
        let count = count
            .trim()
            .parse::<NonZeroU32>()
            .map_err(|_| format!("{text:?}: the count must be a whole number from 1"))?;
        Ok(Self { count, period })
    }
}

impl std::fmt::Display for RateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = if self.period >= Duration::from_secs(60) {
            "min"
        } else {
            "s"
        };
        write!(f, "{}/{unit}", self.count)
    }
}
