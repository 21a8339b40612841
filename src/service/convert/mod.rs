//! The only place where protobuf types meet engine types. Every field is checked here (or by
//! the engine constructors called here) before the engine sees it, and engine results are
//! turned back into `grundy.v1` messages.
//!
//! - [`wire_graph`]: wire graphs in, whole or in `PutGraph` chunks;
//! - `position`: a query's position read, and its in-band errors; [`batch`]: a batch's
//!   queries walked and counted; [`analysis`]: their remoteness and moves, when the stream
//!   asks; [`outcome`]: outcomes out; [`convention`]: the play convention in;
//! - [`values`]: graph summaries and `GetValues` pages out; [`picture`]: a position's
//!   drawing, for `grundy render` and the picture URL alike.
//!
//! Answering a stream's queries with these is `super::answer`.

pub(crate) mod analysis;
pub(crate) mod batch;
pub(crate) mod convention;
pub(crate) mod outcome;
pub(crate) mod picture;
pub(crate) mod position;
pub(crate) mod values;
pub(crate) mod wire_graph;

pub(crate) use analysis::stream_analysis;
pub use analysis::{AnalysisCaps, DEFAULT_ANALYSIS_MAX_MOVES};
pub(crate) use batch::{batch_heap_bytes, batch_query_count};
pub(crate) use values::{ValuePages, graph_summary};
pub use wire_graph::game_from_proto;
pub(crate) use wire_graph::target_count;
pub(crate) use wire_graph::{GraphAssembler, WireGraph};
