//! The server's configured limits, named as their flags spell them, for the statuses that
//! refuse what exceeds them (made in `src/service/error.rs`).

use crate::proto::ErrorReason;

/// A configured server limit, by the name its flag spells with underscores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// `--max-vertices`.
    MaxVertices,
    /// `--max-edges`.
    MaxEdges,
    /// `--max-queries-per-stream`.
    MaxQueriesPerStream,
    /// `--max-concurrent-streams`.
    MaxConcurrentStreams,
    /// `--cache-bytes`, for a graph uploaded with PutGraph.
    CacheBytes,
    /// The JSON request bodies received at a time (a constant, `MAX_JSON_BODIES`).
    JsonBodies,
}

impl Limit {
    /// The limit's name, as its flag spells it with underscores.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::MaxVertices => "max_vertices",
            Self::MaxEdges => "max_edges",
            Self::MaxQueriesPerStream => "max_queries_per_stream",
            Self::MaxConcurrentStreams => "max_concurrent_streams",
            Self::CacheBytes => "cache_bytes",
            Self::JsonBodies => "json_bodies",
        }
    }

    pub(super) fn reason(self) -> ErrorReason {
        match self {
            Self::MaxVertices | Self::MaxEdges => ErrorReason::GraphTooLarge,
            Self::MaxQueriesPerStream => ErrorReason::TooManyQueries,
            Self::MaxConcurrentStreams | Self::JsonBodies => ErrorReason::TooManyStreams,
            Self::CacheBytes => ErrorReason::CacheTooSmall,
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
