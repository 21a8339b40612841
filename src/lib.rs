//! grundy: evaluate impartial combinatorial games on directed graphs, over gRPC.
//!
//! The crate's map; dependencies run one way, from the binaries down:
//! `bin/` -> [`cli`] -> [`service`] (the embedded server, its defaults) -> [`render`],
//! [`engine`], [`proto`]; [`cli`] also -> [`client`], [`judge`], [`render`]; [`proto`] ->
//! `wire` (its codec). Nothing points back up: the engine uses none of the others, the
//! service neither the client nor the CLI.
//!
//! - [`engine`]: the pure game engine (no async, no gRPC): graphs, Grundy tables, verdicts,
//!   winning moves; the theory is in `docs/games.md`;
//! - [`proto`]: the generated `grundy.v1` messages, client and server, over the codec in
//!   `wire` (prost's encoding, the hot messages by hand), and `Sent`, the server's verdict
//!   responses as a message or as verdicts encoded already;
//! - [`service`]: everything `grundy-server` runs: the RPC handlers, limits, deadlines,
//!   cancellation, the graph registry, the work pool, auth, metrics, the server and its flags;
//! - [`client`]: connecting to a server (TLS, mutual TLS, bearer token) and uploading a graph
//!   in `PutGraph` chunks, depending on nothing server-side;
//! - [`judge`]: streaming parsers of the judge input formats;
//! - [`render`]: pictures of a game graph (SVG by grundy itself, DOT for Graphviz);
//! - [`cli`]: the `grundy` command: judge files in, RPCs out, the judge's output back
//!   (formatted in `cli/output.rs`);
//! - [`token`]: bearer-token files, read alike by the client and the server;
//! - [`allocator`]: how much freed memory each binary keeps for reuse;
//! - `cpu`: the one processor probe the vector paths ask (and `GRUNDY_PORTABLE=1`, which
//!   turns them off);
//! - [`generate`]: seeded generators of graphs and judge files (benchmarks, tests).

#![warn(missing_docs)]

pub mod engine;

pub mod proto;

pub mod allocator;
pub mod cli;
pub mod client;
mod cpu;
pub mod generate;
pub mod judge;
pub mod render;
pub mod service;
pub mod token;
mod wire;
