//! Service tier: in-process servers on `127.0.0.1:0` driven by the generated clients over
//! real gRPC (and, where a process-wide setting is involved, the real `grundy-server`); the
//! protocol itself also at the service trait, without a socket.
//!
//! - `evaluate`: `Evaluate` and `EvaluateBatch`: order, batches, packed queries, in-band
//!   query errors, rejected graphs, moves, a client that disconnects mid-stream;
//! - `fairness`: quick analysis streams beside slow searches and streams nobody reads;
//! - `analysis`: position analysis on a stream, in full verdicts and packed columns;
//! - `registry`: `PutGraph` in chunks, ids, `Evaluate` by id, `GetValues`;
//! - `cache`: the registry's cache and store, single-flight analyses, the memory of failed
//!   ones, a `PutGraph` stopped while the store writes;
//! - `error_details`: the `google.rpc` details of every refusal;
//! - `operations`: health, reflection, compression, draining, metrics, the server binary's
//!   log, SIGTERM and `--help`;
//! - `limits`: graph, query, message and stream limits, deadlines, cancellation, the wait for
//!   an analysis slot;
//! - `security`: bearer-token auth, TLS and mutual TLS (JSON over HTTP/1.1 too), the CLI over
//!   both;
//! - `startup`: the server binary's refusals at start (TLS files, store URL, OTLP endpoint),
//!   each naming its flag before the server listens;
//! - `hostile_clients`: floods of tiny frames, abandoned analyses, huge ids, streams that
//!   never start;
//! - `hostile_values`: client-supplied numbers at their extremes, to every RPC (a property
//!   test);
//! - `transport`: the HTTP/2 settings the server announces, and the frame size a client then
//!   sends it;
//! - `protocol`: each RPC's protocol rules, specified by calling the service trait directly
//!   (no socket): `start` first and once, empty batches, in-band query errors, ids, chunks;
//! - `json_http`: JSON over HTTP on the gRPC port: each route against gRPC's answer, NDJSON
//!   sent as produced, every class of error with its HTTP status and `google.rpc.Status`;
//! - `metrics_by_protocol`: a call over gRPC, JSON and gRPC-Web, each counted under its
//!   `protocol` label;
//! - `misere`: misère play (`play_convention`) judged by the brute force of
//!   `support/misere_oracle.rs`, values, budgets and refusals;
//! - `json_judge`: the README's judge files answered through `POST /v1:evaluate`, printed as
//!   the judge prints them;
//! - `reflection`, `web` (the `--web` playground's HTTP side), `otlp_traces`.
//!
//! One binary for all of them, so that the crate is linked once; none of them sets
//! process-wide state (environment, tracing subscriber): the tests that need it run the
//! server binary.

#[path = "../support/mod.rs"]
mod support;

mod analysis;
mod cache;
mod error_details;
mod evaluate;
mod fairness;
mod hostile_clients;
mod hostile_values;
mod json_http;
mod json_judge;
mod limits;
mod metrics_by_protocol;
mod misere;
mod openapi;
mod operations;
mod otlp_traces;
mod protocol;
mod rate_limit;
mod reflection;
mod registry;
mod security;
mod startup;
mod transport;
mod web;
