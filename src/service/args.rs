//! `grundy-server`'s flags, each also settable by a `GRUNDY_*` environment variable (the flag
//! wins), turned into a [`ServerConfig`] by reading the files they name.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::config::ConnectionConfig;
use super::config::RateLimit;
use super::config::{
    DEFAULT_CACHE_BYTES, DEFAULT_CYCLIC_WORK_BUDGET, DEFAULT_MAX_CONCURRENT_STREAMS,
    DEFAULT_MAX_EDGES, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_QUERIES_PER_STREAM,
    DEFAULT_MAX_VERTICES, ServerConfig, ServiceConfig,
};
use super::convert::{AnalysisCaps, DEFAULT_ANALYSIS_MAX_MOVES};
use super::flag_values::{
    parse_bytes, parse_duration, parse_duration_or_off, parse_message_bytes, parse_positive,
    parse_socket_address,
};
use super::logging::LogFormat;
use super::store::{GraphStore, StoreConfig, StoreError, check_redis_url, max_encoded_bytes};
use super::tls_files::{self, TlsFileError};
use crate::engine::Limits;
use crate::token::{TokenFileError, read_token_file};

/// Serve the grundy.v1 game evaluation API over gRPC.
///
/// Every option can also be set by the environment variable shown with it; a flag on the
/// command line wins. Logs go to stderr, filtered by RUST_LOG (default "info").
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "grundy-server", version)]
pub struct ServerArgs {
    /// Address to listen on for gRPC. Loopback by default: expose it deliberately (and then
    /// with --auth-token-file and TLS).
    #[arg(long, env = "GRUNDY_LISTEN", default_value = "127.0.0.1:50051",
          value_parser = parse_socket_address)]
    pub listen: SocketAddr,

    /// Address to serve Prometheus metrics on (plain HTTP, path /metrics). Off when unset.
    #[arg(long, env = "GRUNDY_METRICS_LISTEN", value_parser = parse_socket_address)]
    pub metrics_listen: Option<SocketAddr>,

    /// Log format on stderr: "text" for people, "json" (one object per line) for collectors.
    #[arg(long, env = "GRUNDY_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Export traces over OTLP/gRPC to this collector, http:// or https:// (e.g.
    /// "http://127.0.0.1:4317"): one span per RPC, with children for analyses and
    /// evaluations, continuing the caller's trace from its W3C `traceparent` header. Unset: no
    /// traces, no cost.
    #[arg(long, env = "GRUNDY_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,

    /// Largest gRPC message accepted or sent, in bytes (suffixes KiB, MiB, GiB accepted).
    /// Larger requests are refused with RESOURCE_EXHAUSTED; graphs larger than one message
    /// go through PutGraph in chunks.
    #[arg(long, env = "GRUNDY_MAX_MESSAGE_BYTES", value_parser = parse_message_bytes,
          default_value_t = DEFAULT_MAX_MESSAGE_BYTES)]
    pub max_message_bytes: usize,

    /// Largest vertex count of a graph (RESOURCE_EXHAUSTED beyond).
    #[arg(long, env = "GRUNDY_MAX_VERTICES", default_value_t = DEFAULT_MAX_VERTICES)]
    pub max_vertices: u32,

    /// Largest edge count of a graph (RESOURCE_EXHAUSTED beyond).
    #[arg(long, env = "GRUNDY_MAX_EDGES", default_value_t = DEFAULT_MAX_EDGES)]
    pub max_edges: u64,

    /// Work allowed to analyse one cyclic token-sliding graph, in edge visits of its staged
    /// labelling (RESOURCE_EXHAUSTED beyond, naming the stage reached). About a billion
    /// visits a second on one core; random sparse graphs need under twice their edge count,
    /// dense graphs with large values up to about V^3 / 2.
    #[arg(long, env = "GRUNDY_MAX_CYCLIC_WORK", default_value_t = DEFAULT_CYCLIC_WORK_BUDGET)]
    pub max_cyclic_work: u64,

    /// Most queries one Evaluate or EvaluateBatch stream may carry (RESOURCE_EXHAUSTED
    /// beyond, after the verdicts of the batches before).
    #[arg(long, env = "GRUNDY_MAX_QUERIES_PER_STREAM",
          default_value_t = DEFAULT_MAX_QUERIES_PER_STREAM)]
    pub max_queries_per_stream: u64,

    /// Most RPCs in progress at once; more are refused with RESOURCE_EXHAUSTED.
    #[arg(long, env = "GRUNDY_MAX_CONCURRENT_STREAMS",
          default_value_t = DEFAULT_MAX_CONCURRENT_STREAMS, value_parser = parse_positive)]
    pub max_concurrent_streams: usize,

    /// Graph analyses computed at once (CPU-bound, on the blocking pool); 0 means one per
    /// CPU core.
    #[arg(long, env = "GRUNDY_COMPUTE_CONCURRENCY", default_value_t = 0)]
    pub compute_concurrency: usize,

    /// Longest wait for a free analysis slot (see --compute-concurrency), search slot (the
    /// batches of a stream with explain or analysis) or render slot (`POST /render`, with
    /// --web): a request still waiting then gets UNAVAILABLE (503 for a render), to retry
    /// later or elsewhere.
    #[arg(long, env = "GRUNDY_ANALYSIS_QUEUE_TIMEOUT", value_parser = parse_duration,
          default_value = "30s")]
    pub analysis_queue_timeout: Duration,

    /// Most moves listed per verdict of a stream that asks for the position analysis
    /// (`EvaluateStart.analysis`); the moves left out are counted. A stream may ask for
    /// fewer.
    #[arg(long, env = "GRUNDY_ANALYSIS_MAX_MOVES", default_value_t = DEFAULT_ANALYSIS_MAX_MOVES)]
    pub analysis_max_moves: u32,

    /// Most positions the exact remoteness search of one query (several tokens) may visit;
    /// over it, the verdict says the remoteness is over the budget and answers the rest. A
    /// stream may ask for less.
    #[arg(long, env = "GRUNDY_ANALYSIS_POSITION_BUDGET",
          default_value_t = crate::engine::DEFAULT_POSITION_BUDGET)]
    pub analysis_position_budget: u64,

    /// Most work the remoteness search of one query may do, in units of a token copied or
    /// compared (a position of k tokens generated costs k + 8), and as much again to settle
    /// what it found: what keeps a query under a second of one core (0.1-0.3 s measured) and some 40 MB
    /// whatever its width and the graph's out-degrees. Over it, as over the position budget,
    /// the verdict says the remoteness is over the budget.
    #[arg(long, env = "GRUNDY_ANALYSIS_WORK_BUDGET",
          default_value_t = crate::engine::DEFAULT_WORK_BUDGET)]
    pub analysis_work_budget: u64,

    /// How long a new Evaluate or PutGraph stream may send nothing before its first message
    /// (`start`, or the first chunk) is whole, before it is ended with DEADLINE_EXCEEDED
    /// (each frame of a large first message still arriving starts it again); so is the
    /// message of a unary call (EvaluateBatch, GetValues) that stops arriving, and a POST
    /// /render body that brings nothing for as long is ended with 408.
    #[arg(long, env = "GRUNDY_START_TIMEOUT", value_parser = parse_duration, default_value = "10s")]
    pub start_timeout: Duration,

    /// How long an Evaluate stream whose client has read every answer, or a PutGraph stream
    /// between chunks, may send nothing before it is ended with DEADLINE_EXCEEDED, freeing its
    /// slot of --max-concurrent-streams ("off": never).
    #[arg(long, env = "GRUNDY_STREAM_IDLE_TIMEOUT", value_parser = parse_duration_or_off,
          default_value = "5m")]
    pub stream_idle_timeout: Duration,

    /// Bound of the cache of analysed graphs, in bytes (suffixes KiB, MiB, GiB accepted).
    /// Least recently used graphs are evicted first. A graph whose table is larger than the
    /// bound is not cached: PutGraph refuses it with RESOURCE_EXHAUSTED, while Evaluate and
    /// EvaluateBatch with the graph inline still answer, computing it anew for each stream.
    /// 0 caches nothing, so PutGraph always fails.
    #[arg(long, env = "GRUNDY_CACHE_BYTES", value_parser = parse_bytes,
          default_value_t = DEFAULT_CACHE_BYTES)]
    pub cache_bytes: usize,

    /// On SIGTERM or Ctrl-C, how long streams in progress may run on before they are
    /// cancelled with UNAVAILABLE (e.g. "30s", "500ms", "2m", or seconds).
    #[arg(long, env = "GRUNDY_DRAIN_TIMEOUT", value_parser = parse_duration, default_value = "30s")]
    pub drain_timeout: Duration,

    /// At most this many requests from one client (its bearer token, or its address without
    /// one): N (per second), N/s or N/min, N at once. Over it: RESOURCE_EXHAUSTED with a
    /// RetryInfo (HTTP 429 with Retry-After). Health checks are not counted. Off by default.
    #[arg(long, env = "GRUNDY_RATE_LIMIT", value_parser = RateLimit::parse)]
    pub rate_limit: Option<RateLimit>,

    /// File holding a bearer token: every call except health checks must then send
    /// `authorization: Bearer <token>`, else UNAUTHENTICATED.
    #[arg(long, env = "GRUNDY_AUTH_TOKEN_FILE")]
    pub auth_token_file: Option<PathBuf>,

    /// PEM certificate chain of the server: serve TLS only (needs --tls-key).
    #[arg(long, env = "GRUNDY_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key of --tls-cert.
    #[arg(long, env = "GRUNDY_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// PEM CA certificate(s) of the clients: require mutual TLS, clients presenting a
    /// certificate signed by one of them (needs --tls-cert).
    #[arg(long, env = "GRUNDY_TLS_CLIENT_CA", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,

    /// Also serve the browser playground on the --listen port: the page at `/`, gRPC-Web
    /// (HTTP/1.1 accepted) and `POST /render`. Same token and TLS as the gRPC API.
    #[arg(long, env = "GRUNDY_WEB")]
    pub web: bool,
    /// Keep registered graphs in files under this directory (created if missing): ids
    /// survive restarts. Without --store-dir or --store-url they are kept in memory (at most
    /// --cache-bytes of graphs, shared with the cached analyses).
    #[arg(long, env = "GRUNDY_STORE_DIR", conflicts_with = "store_url")]
    pub store_dir: Option<PathBuf>,

    /// Keep registered graphs in Redis, shared by every replica using the same URL:
    /// `redis://[:PASSWORD@]HOST[:PORT][/DB]` (not rediss://: no TLS to Redis). While Redis
    /// is unreachable, PutGraph and lookups of uncached ids fail with UNAVAILABLE; inline
    /// graphs still work.
    #[arg(long, env = "GRUNDY_STORE_URL")]
    pub store_url: Option<String>,

    /// With --store-url: forget a graph this long after its last PutGraph (e.g. "168h");
    /// unset keeps graphs until they are deleted.
    #[arg(long, env = "GRUNDY_STORE_TTL", value_parser = parse_duration, requires = "store_url")]
    pub store_ttl: Option<Duration>,

    /// Send an HTTP/2 ping on a connection idle this long ("off": never), to find dead
    /// clients and keep idle connections open through NATs and load balancers.
    #[arg(long, env = "GRUNDY_HTTP2_KEEPALIVE_INTERVAL", value_parser = parse_duration_or_off,
          default_value = "60s")]
    pub http2_keepalive_interval: Duration,

    /// Close a connection whose keepalive ping is not answered within this.
    #[arg(long, env = "GRUNDY_HTTP2_KEEPALIVE_TIMEOUT", value_parser = parse_duration,
          default_value = "20s")]
    pub http2_keepalive_timeout: Duration,

    /// Ask a connection this old to go away (GOAWAY; "off": never), so that long-lived
    /// clients reconnect and spread over replicas added since. Streams in progress go on.
    #[arg(long, env = "GRUNDY_MAX_CONNECTION_AGE", value_parser = parse_duration_or_off,
          default_value = "30m")]
    pub max_connection_age: Duration,

    /// After a connection was asked to go away for its age, close it this much later even
    /// with streams still open. Unset: wait for its streams however long they run.
    #[arg(long, env = "GRUNDY_MAX_CONNECTION_AGE_GRACE", value_parser = parse_duration)]
    pub max_connection_age_grace: Option<Duration>,
}

/// Why the flags could not be turned into a configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A TLS file could not be read, or does not hold what its flag takes.
    #[error(transparent)]
    Tls(#[from] TlsFileError),
    /// The token file gives no usable token.
    #[error(transparent)]
    Token(#[from] TokenFileError),
    /// `--store-url` is no Redis URL (the message says the form to write).
    #[error("invalid --store-url: {0}")]
    StoreUrl(String),
    /// The graph store could not be opened (directory not creatable).
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ServerArgs {
    /// The server's configuration, reading the token and TLS files.
    pub fn server_config(&self) -> Result<ServerConfig, ConfigError> {
        if let Some(url) = &self.store_url {
            check_redis_url(url).map_err(ConfigError::StoreUrl)?;
        }
        let defaults = ServiceConfig::default();
        let service = ServiceConfig {
            limits: Limits {
                cyclic_work_budget: self.max_cyclic_work,
                ..defaults.limits
            },
            max_vertices: self.max_vertices,
            max_edges: self.max_edges,
            max_queries_per_stream: self.max_queries_per_stream,
            max_concurrent_streams: self.max_concurrent_streams,
            compute_concurrency: match self.compute_concurrency {
                0 => defaults.compute_concurrency,
                n => n,
            },
            analysis_queue_timeout: self.analysis_queue_timeout,
            analysis: AnalysisCaps {
                max_moves: self.analysis_max_moves,
                position_budget: self.analysis_position_budget,
                work_budget: self.analysis_work_budget,
            },
            start_timeout: self.start_timeout,
            stream_idle_timeout: off_as_none(self.stream_idle_timeout),
            cache_bytes: self.cache_bytes,
            store: self
                .store_config()
                .map(|config| {
                    let max_entry = max_encoded_bytes(self.max_vertices, self.max_edges);
                    GraphStore::open(&config, max_entry)
                })
                .transpose()?,
            ..defaults
        };
        let auth_token = match &self.auth_token_file {
            Some(path) => Some(read_token_file(path)?),
            None => None,
        };
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => {
                Some(tls_files::load(cert, key, self.tls_client_ca.as_deref())?)
            }
            _ => None,
        };
        Ok(ServerConfig {
            service,
            max_message_bytes: self.max_message_bytes,
            drain_timeout: self.drain_timeout,
            auth_token,
            tls,
            web: self.web.then(crate::service::web::WebConfig::default),
            connections: ConnectionConfig {
                keepalive_interval: off_as_none(self.http2_keepalive_interval),
                keepalive_timeout: self.http2_keepalive_timeout,
                max_age: off_as_none(self.max_connection_age),
                max_age_grace: self.max_connection_age_grace,
            },
            reflection: true,
            json: true,
            rate_limit: self.rate_limit,
        })
    }

    /// The store the flags ask for; `None`: the default, in memory.
    fn store_config(&self) -> Option<StoreConfig> {
        match (&self.store_dir, &self.store_url) {
            (Some(path), _) => Some(StoreConfig::Dir { path: path.clone() }),
            (None, Some(url)) => Some(StoreConfig::Redis {
                url: url.clone(),
                ttl: self.store_ttl,
            }),
            (None, None) => None,
        }
    }
}

/// `None` for a zero duration (a feature turned off).
fn off_as_none(duration: Duration) -> Option<Duration> {
    (!duration.is_zero()).then_some(duration)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::config::{
        DEFAULT_KEEPALIVE_INTERVAL, DEFAULT_KEEPALIVE_TIMEOUT, DEFAULT_MAX_CONNECTION_AGE,
    };
    use clap::{CommandFactory, Parser};

    #[test]
    fn connection_defaults_match_the_documented_constants() {
        let args = ServerArgs::try_parse_from(["grundy-server"]).expect("defaults parse");
        let connections = args.server_config().expect("a config").connections;
        assert_eq!(
            connections.keepalive_interval,
            Some(DEFAULT_KEEPALIVE_INTERVAL)
        );
        assert_eq!(connections.keepalive_timeout, DEFAULT_KEEPALIVE_TIMEOUT);
        assert_eq!(connections.max_age, Some(DEFAULT_MAX_CONNECTION_AGE));
        assert_eq!(connections.max_age_grace, None);
        let off = ServerArgs::try_parse_from(["grundy-server", "--max-connection-age", "off"]);
        let off = off.expect("parses").server_config().expect("a config");
        assert_eq!(off.connections.max_age, None);
        let ttl_alone = ServerArgs::try_parse_from(["grundy-server", "--store-ttl", "1h"]);
        assert!(ttl_alone.is_err(), "--store-ttl needs --store-url");
    }

    #[test]
    fn the_kubernetes_config_map_sets_only_real_flags() {
        let manifest = include_str!("../../deploy/kubernetes/configmap.yaml");
        let known: Vec<String> = ServerArgs::command()
            .get_arguments()
            .filter_map(|arg| arg.get_env().map(|e| e.to_string_lossy().into_owned()))
            .collect();
        let mut checked = 0;
        for line in manifest.lines() {
            let Some((key, _)) = line.trim().split_once(':') else {
                continue;
            };
            if key.starts_with("GRUNDY_") {
                assert!(
                    known.iter().any(|k| k == key),
                    "{key} is no grundy-server flag"
                );
                checked += 1;
            }
        }
        assert!(checked >= 10, "only {checked} GRUNDY_* keys found");
    }

    #[test]
    fn every_flag_has_an_environment_variable_and_help() {
        ServerArgs::command().debug_assert();
        for arg in ServerArgs::command().get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            let env = arg
                .get_env()
                .unwrap_or_else(|| panic!("--{id} has no env var"));
            assert!(env.to_string_lossy().starts_with("GRUNDY_"), "--{id}");
            assert!(arg.get_help().is_some(), "--{id} has no help");
        }
    }
}
