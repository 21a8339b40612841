//! The field numbers the hand-written paths read and write, named after the proto
//! (`proto/grundy/v1/grundy.proto`); a test checks every one against the compiled
//! descriptor set, so a renumbered field fails the tests rather than the wire.

/// `grundy.v1.EvaluateRequest`.
pub(super) mod evaluate_request {
    /// `QueryBatch queries`.
    pub(in crate::wire) const QUERIES: u32 = 2;
}

/// `grundy.v1.QueryBatch`.
pub(super) mod query_batch {
    /// `PackedTokenQueries packed_tokens`.
    pub(in crate::wire) const PACKED_TOKENS: u32 = 2;
}

/// `grundy.v1.PackedTokenQueries`.
pub(super) mod packed_token_queries {
    /// `uint64 first_query_id`.
    pub(in crate::wire) const FIRST_QUERY_ID: u32 = 1;
    /// `repeated uint32 token_counts`.
    pub(in crate::wire) const TOKEN_COUNTS: u32 = 2;
    /// `repeated uint32 vertices`.
    pub(in crate::wire) const VERTICES: u32 = 3;
}

/// `grundy.v1.EvaluateResponse`.
pub(super) mod evaluate_response {
    /// `PackedVerdicts packed_verdicts`.
    pub(in crate::wire) const PACKED_VERDICTS: u32 = 3;
}

/// `grundy.v1.PackedVerdicts`.
pub(super) mod packed_verdicts {
    /// `uint64 first_query_id`.
    pub(in crate::wire) const FIRST_QUERY_ID: u32 = 1;
    /// `repeated Outcome outcomes`.
    pub(in crate::wire) const OUTCOMES: u32 = 2;
    /// `repeated uint64 nim_sums`.
    pub(in crate::wire) const NIM_SUMS: u32 = 3;
    /// `repeated PackedQueryError errors`.
    pub(in crate::wire) const ERRORS: u32 = 4;
}

/// `grundy.v1.PutGraphRequest`.
pub(super) mod put_graph_request {
    /// `Graph chunk`.
    pub(in crate::wire) const CHUNK: u32 = 1;
}

/// `grundy.v1.Graph`.
pub(super) mod graph {
    /// `uint32 vertex_count`.
    pub(in crate::wire) const VERTEX_COUNT: u32 = 1;
    /// `repeated uint32 out_degrees`.
    pub(in crate::wire) const OUT_DEGREES: u32 = 2;
    /// `repeated uint32 targets`.
    pub(in crate::wire) const TARGETS: u32 = 3;
    /// `repeated uint32 split_counts`.
    pub(in crate::wire) const SPLIT_COUNTS: u32 = 4;
    /// `repeated fixed32 fixed_targets`.
    pub(in crate::wire) const FIXED_TARGETS: u32 = 5;
}

/// Every constant above as (message, field, number), for the descriptor test.
#[cfg(test)]
pub(super) const ALL: &[(&str, &str, u32)] = &[
    ("EvaluateRequest", "queries", evaluate_request::QUERIES),
    ("QueryBatch", "packed_tokens", query_batch::PACKED_TOKENS),
    (
        "PackedTokenQueries",
        "first_query_id",
        packed_token_queries::FIRST_QUERY_ID,
    ),
    (
        "PackedTokenQueries",
        "token_counts",
        packed_token_queries::TOKEN_COUNTS,
    ),
    (
        "PackedTokenQueries",
        "vertices",
        packed_token_queries::VERTICES,
    ),
    (
        "EvaluateResponse",
        "packed_verdicts",
        evaluate_response::PACKED_VERDICTS,
    ),
    (
        "PackedVerdicts",
        "first_query_id",
        packed_verdicts::FIRST_QUERY_ID,
    ),
    ("PackedVerdicts", "outcomes", packed_verdicts::OUTCOMES),
    ("PackedVerdicts", "nim_sums", packed_verdicts::NIM_SUMS),
    ("PackedVerdicts", "errors", packed_verdicts::ERRORS),
    ("PutGraphRequest", "chunk", put_graph_request::CHUNK),
    ("Graph", "vertex_count", graph::VERTEX_COUNT),
    ("Graph", "out_degrees", graph::OUT_DEGREES),
    ("Graph", "targets", graph::TARGETS),
    ("Graph", "split_counts", graph::SPLIT_COUNTS),
    ("Graph", "fixed_targets", graph::FIXED_TARGETS),
];
