//! grundy: evaluate impartial combinatorial games on directed graphs, over gRPC.
//!
//! - [`engine`]: the pure game engine (no async, no gRPC): graphs, Grundy tables, verdicts;
//! - [`proto`]: the generated `grundy.v1` messages, client and server;
//! - [`convert`]: the only place protobuf types meet engine types, validating every field;
//! - [`error`]: the one mapping from engine errors to gRPC statuses;
//! - [`service`]: the tonic service implementation: stream plumbing, limits, deadlines,
//!   cancellation, one tracing span per RPC;
//! - [`registry`]: content-addressed graph ids and the byte-bounded LRU cache of analysed
//!   graphs, with single-flight computation;
//! - [`auth`]: bearer-token authentication (constant-time comparison);
//! - [`metrics`]: Prometheus metrics and their tiny HTTP exporter;
//! - [`server`]: `run(listener, config, shutdown)`: health, reflection, compression, auth, TLS,
//!   draining shutdown; used by `grundy-server`, the embedded CLI server and the tests;
//! - [`config`]: `grundy-server`'s flags (each with a `GRUNDY_*` environment variable) and
//!   log setup;
//! - [`client`]: connecting to a server: TLS, mutual TLS, bearer token (the CLI's flags);
//! - [`judge`]: streaming parsers for the judge formats and the judge's output formatting;
//! - [`cli`]: the `grundy` client: judge files in, RPCs out, judge output back;
//! - [`generate`]: seeded generators of graphs and judge files (benchmarks, tests).

pub mod engine;

pub mod proto {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("grundy.v1");

    /// Encoded `FileDescriptorSet` of the `grundy.v1` protos, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/grundy_descriptor.bin"));
}

pub mod auth;
pub mod cli;
pub mod client;
pub mod config;
pub mod convert;
pub mod error;
pub mod generate;
pub mod judge;
pub mod metrics;
pub mod registry;
pub mod server;
pub mod service;
