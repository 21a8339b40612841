//! Compiles `proto/grundy/v1/*.proto` with protox (pure Rust, no `protoc` needed), generates
//! the prost messages and tonic client/server from the descriptor set, and writes the encoded
//! descriptor set to `$OUT_DIR/grundy_descriptor.bin` for gRPC server reflection and for the
//! JSON over HTTP routes (`src/service/json/`). That set holds the imports too: the vendored
//! `google/api` files (the `google.api.http` options the routes are read from) and
//! `google/rpc` (the `google.rpc.Status` of JSON error bodies), with the well-known types.
//! Beside them, `$OUT_DIR/grundy.v1.json.rs`: serde code for the `grundy.v1` messages in
//! proto3 JSON (`build/json_codegen.rs`), which the JSON routes read and write them with.

use std::path::PathBuf;

#[path = "build/json_codegen.rs"]
mod json_codegen;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = [
        "proto/grundy/v1/grundy.proto",
        "proto/grundy/v1/errors.proto",
        "proto/google/rpc/status.proto",
        "proto/google/rpc/error_details.proto",
    ];
    for proto in protos.iter().chain(&[
        "proto/google/api/annotations.proto",
        "proto/google/api/http.proto",
    ]) {
        println!("cargo:rerun-if-changed={proto}");
    }
    let mut compiler = protox::Compiler::new(["proto"])?;
    compiler.include_source_info(true).include_imports(true);
    compiler.open_files(protos)?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    // compile_fds ignores file_descriptor_set_path, so the bytes are written here, by
    // protox's own encoder: prost_types' messages would drop the extension options (the
    // `google.api.http` routes).
    std::fs::write(
        out_dir.join("grundy_descriptor.bin"),
        compiler.encode_file_descriptor_set(),
    )?;
    let descriptor_set = compiler.file_descriptor_set();
    // Serde code for the JSON routes, straight into and out of the prost structs.
    println!("cargo:rerun-if-changed=build/json_codegen.rs");
    std::fs::write(
        out_dir.join("grundy.v1.json.rs"),
        json_codegen::generate(&descriptor_set),
    )?;
    // Code only for grundy.v1: the google files are there for their descriptors (tonic-types
    // has the google.rpc messages, prost-types the well-known ones).
    let mut grundy_only = descriptor_set;
    grundy_only
        .file
        .retain(|file| file.package() == "grundy.v1");
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(false)
        // prost's encoding, with the hot packed messages written and read by hand.
        .codec_path("crate::wire::Codec")
        .compile_fds(grundy_only.clone())?;
    // The server again, on its own, over the same messages, except that its response
    // streams carry `Sent` responses: a message, or verdicts a job encoded as it found them
    // (`src/proto/sent.rs`).
    let server_dir = out_dir.join("server");
    std::fs::create_dir_all(&server_dir)?;
    let sent = |message: &str| format!("crate::proto::Sent<crate::proto::{message}>");
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .codec_path("crate::wire::Codec")
        .extern_path(".grundy.v1", "crate::proto")
        .extern_path(".grundy.v1.EvaluateResponse", sent("EvaluateResponse"))
        .extern_path(
            ".grundy.v1.EvaluateBatchResponse",
            sent("EvaluateBatchResponse"),
        )
        .out_dir(&server_dir)
        .compile_fds(grundy_only)?;
    Ok(())
}
