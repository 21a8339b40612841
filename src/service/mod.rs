//! Everything `grundy-server` runs: the `grundy.v1.GrundyService` implementation and the
//! server around it. Dependencies run one way: this module uses [`crate::engine`] and
//! [`crate::proto`], never the client or the CLI.
//!
//! - `server`: `run(listener, config, shutdown)`: the router (health, reflection,
//!   compression, auth, TLS) and the draining shutdown;
//! - `config`: the settings as plain structs and their defaults; `args`: `grundy-server`'s
//!   flags that fill them; `logging`: the log setup;
//! - `handlers`: the four RPCs, one file each, over `rpc`: the per-RPC guard (slot,
//!   deadline, cancellation, span, metrics), the one response-stream helper, and a request's
//!   lifetime: client deadlines, clients that leave mid-stream (counted as CANCELLED, or
//!   DEADLINE_EXCEEDED at their deadline), when its body last brought bytes (the start and
//!   idle timeouts' clock);
//! - `state`: [`GameService`], the state streams share, and admission; `lifecycle`: serving,
//!   draining, cancelling; `bounded_status`: client text that reflection quotes whole in a status, cut to an
//!   excerpt;
//! - `graphs`: resolving a stream's graph (by id, inline, in `PutGraph` chunks);
//!   `graph_id`: content-addressed ids; `registry`: the byte-bounded LRU of analysed graphs
//!   with single-flight computation, cancelled when no request waits for it any more, and
//!   the bounded memory of graphs that failed a limit; `blocking`: the one bounded pool for
//!   CPU work, with a bounded wait for an analysis slot;
//! - `store`: the graph store behind the registry (memory, `--store-dir` files, Redis),
//!   with the verified stored encoding;
//! - `convert`: the only place protobuf types meet engine types; `answer`: a stream's
//!   query batches answered with it, verdicts handed over early and fitted to messages; `error`: the one mapping
//!   from errors to gRPC statuses;
//! - `auth`: bearer tokens; `metrics`: Prometheus metrics and their exporter;
//!   `telemetry`: OTLP trace export and `traceparent` propagation;
//! - `web`: the browser playground served with `--web`: its files and `POST /render`.
//! - `json`: JSON over HTTP on the gRPC port, transcoded from the proto's `google.api.http`
//!   routes and served by calling the gRPC services in process.

mod answer;
mod args;
mod auth;
mod blocking;
mod bounded_status;
mod config;
mod convert;
mod error;
mod excerpt;
mod flag_values;
mod front;
mod graph_id;
mod graphs;
mod handlers;
mod json;
mod lifecycle;
mod limit;
mod logging;
mod metrics;
mod metrics_exporter;
mod rate_limit;
mod registry;
mod remoteness;
mod rpc;
mod server;
mod state;
mod store;
mod telemetry;
mod tls_files;
mod web;

// The service's public API, in one list.
pub use args::{ConfigError, ServerArgs};
pub use config::{
    ConnectionConfig, DEFAULT_ANALYSIS_QUEUE_TIMEOUT, DEFAULT_CACHE_BYTES,
    DEFAULT_CYCLIC_WORK_BUDGET, DEFAULT_DRAIN_TIMEOUT, DEFAULT_FAILED_GRAPHS,
    DEFAULT_KEEPALIVE_INTERVAL, DEFAULT_KEEPALIVE_TIMEOUT, DEFAULT_MAX_CONCURRENT_STREAMS,
    DEFAULT_MAX_CONNECTION_AGE, DEFAULT_MAX_EDGES, DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_QUERIES_PER_STREAM, DEFAULT_MAX_VERTICES, DEFAULT_START_TIMEOUT, RateLimit,
    ServerConfig, ServiceConfig, TlsConfig,
};
pub(crate) use convert::picture::position_drawing;
pub use convert::{AnalysisCaps, DEFAULT_ANALYSIS_MAX_MOVES, game_from_proto};
pub use flag_values::{MIN_MESSAGE_BYTES, parse_message_bytes};
pub use graph_id::graph_id_sync;
pub use logging::{LogFormat, init_tracing, init_tracing_with};
pub use metrics::{Metrics, WorkKind};
pub use metrics_exporter::serve as serve_metrics;

pub use registry::Registry;
pub use server::{SERVICE_NAME, ServerError, http2_transport, run, run_service, serve_connections};
pub use state::GameService;
pub use store::{
    Backend, DirStore, EncodedGraph, GraphId, GraphStore, MemoryStore, RedisStore, StoreConfig,
    StoreError, StoreFuture, StoredBytes, StoredGraph, decode_sync,
};
pub use telemetry::{BoxedLayer, Telemetry, TelemetryError};
pub use tls_files::{TlsFile, TlsFileError};
pub use web::{Preload, WebConfig};
