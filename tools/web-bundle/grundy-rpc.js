// The entry of web/vendor/grundy-rpc.js (scripts/web-bundle.sh bundles it with esbuild):
// the grundy.v1 messages and service generated from proto/ by protoc-gen-es (gen/, made by
// the script, not kept), the protobuf runtime to create and serialize them, and the
// gRPC-Web transport and client of Connect. web/server.js is the only importer.
export * from "./gen/grundy/v1/grundy_pb.js";
export { create, toBinary, fromBinary } from "@bufbuild/protobuf";
export { Code, ConnectError, createClient } from "@connectrpc/connect";
export { createGrpcWebTransport } from "@connectrpc/connect-web";
