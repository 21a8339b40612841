//! The generated `grundy.v1` messages, client and server (from `proto/grundy/v1/`), and
//! [`Sent`], the form in which the server's verdict streams carry their responses.
#![allow(clippy::all, missing_docs)]
tonic::include_proto!("grundy.v1");
// The server, whose `Evaluate` and `EvaluateBatch` streams carry `Sent` responses (see
// `build.rs`).
include!(concat!(env!("OUT_DIR"), "/server/grundy.v1.rs"));

mod sent;

pub use sent::{EncodedVerdicts, Sent};

/// Encoded `FileDescriptorSet` of the `grundy.v1` protos, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/grundy_descriptor.bin"));
