//! Compiles `proto/grundy/v1/*.proto` with protox (pure Rust, no `protoc` needed), generates
//! the prost messages and tonic client/server from the descriptor set, and writes the encoded
//! descriptor set to `$OUT_DIR/grundy_descriptor.bin` for gRPC server reflection.

use prost::Message;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = [
        "proto/grundy/v1/grundy.proto",
        "proto/grundy/v1/errors.proto",
    ];
    for proto in protos {
        println!("cargo:rerun-if-changed={proto}");
    }
    let descriptor_set = protox::compile(protos, ["proto"])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    // compile_fds ignores file_descriptor_set_path, so the bytes are written here.
    std::fs::write(
        out_dir.join("grundy_descriptor.bin"),
        descriptor_set.encode_to_vec(),
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // prost's encoding, with the hot packed messages written and read by hand.
        .codec_path("crate::wire::Codec")
        .compile_fds(descriptor_set)?;
    Ok(())
}
