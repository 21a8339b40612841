//! grundy: evaluate impartial combinatorial games on directed graphs, over gRPC.
//!
//! - [`engine`]: the pure game engine (no async, no gRPC): graphs, Grundy tables, verdicts;
//! - [`proto`]: the generated `grundy.v1` messages, client and server;
//! - [`convert`]: the only place protobuf types meet engine types, validating every field;
//! - [`error`]: the one mapping from engine errors to gRPC statuses;
//! - [`service`]: the tonic service implementation;
//! - [`server`]: `run(listener, shutdown)`, used by `grundy-server` and the embedded CLI server;
//! - [`judge`]: streaming parsers for the judge formats and the judge's output formatting;
//! - [`cli`]: the `grundy` client: judge files in, RPCs out, judge output back.

pub mod engine;

pub mod proto {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("grundy.v1");

    /// Encoded `FileDescriptorSet` of the `grundy.v1` protos, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/grundy_descriptor.bin"));
}

pub mod convert;
pub mod error;
pub mod server;
pub mod service;
pub mod judge;
pub mod cli;
