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
    /// `repeated Verdict verdicts`.
    pub(in crate::wire) const VERDICTS: u32 = 1;
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

/// `grundy.v1.Verdict`.
pub(super) mod verdict {
    /// `uint64 query_id`.
    pub(in crate::wire) const QUERY_ID: u32 = 1;
    /// `Outcome outcome`.
    pub(in crate::wire) const OUTCOME: u32 = 2;
    /// `uint64 nim_sum`.
    pub(in crate::wire) const NIM_SUM: u32 = 3;
    /// `Move best_move`.
    pub(in crate::wire) const BEST_MOVE: u32 = 5;
    /// `optional uint32 remoteness`.
    pub(in crate::wire) const REMOTENESS: u32 = 6;
    /// `RemotenessUnknown remoteness_unknown`.
    pub(in crate::wire) const REMOTENESS_UNKNOWN: u32 = 7;
    /// `repeated AnalysedMove moves`.
    pub(in crate::wire) const MOVES: u32 = 8;
    /// `uint64 moves_omitted`.
    pub(in crate::wire) const MOVES_OMITTED: u32 = 9;
}

/// `grundy.v1.AnalysedMove`.
pub(super) mod analysed_move {
    /// `Move move`.
    pub(in crate::wire) const MOVE: u32 = 1;
    /// `Outcome outcome`.
    pub(in crate::wire) const OUTCOME: u32 = 2;
    /// `optional uint32 remoteness`.
    pub(in crate::wire) const REMOTENESS: u32 = 3;
    /// `bool over_budget`.
    pub(in crate::wire) const OVER_BUDGET: u32 = 4;
}

/// `grundy.v1.Move`'s token kind, and `grundy.v1.TokenMove`.
pub(super) mod move_ {
    /// `TokenMove token` (in the `kind` oneof).
    pub(in crate::wire) const TOKEN: u32 = 1;
    /// `TokenMove`'s `uint32 token_index`.
    pub(in crate::wire) const TOKEN_INDEX: u32 = 1;
    /// `TokenMove`'s `uint32 source_vertex`.
    pub(in crate::wire) const SOURCE_VERTEX: u32 = 2;
    /// `TokenMove`'s `uint32 target_vertex`.
    pub(in crate::wire) const TARGET_VERTEX: u32 = 3;
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
    ("EvaluateResponse", "verdicts", evaluate_response::VERDICTS),
    // The same number in both: `Sent` sends verdicts encoded for either.
    (
        "EvaluateBatchResponse",
        "verdicts",
        evaluate_response::VERDICTS,
    ),
    ("Verdict", "query_id", verdict::QUERY_ID),
    ("Verdict", "outcome", verdict::OUTCOME),
    ("Verdict", "nim_sum", verdict::NIM_SUM),
    ("Verdict", "best_move", verdict::BEST_MOVE),
    ("Verdict", "remoteness", verdict::REMOTENESS),
    ("Verdict", "remoteness_unknown", verdict::REMOTENESS_UNKNOWN),
    ("Verdict", "moves", verdict::MOVES),
    ("Verdict", "moves_omitted", verdict::MOVES_OMITTED),
    ("AnalysedMove", "move", analysed_move::MOVE),
    ("AnalysedMove", "outcome", analysed_move::OUTCOME),
    ("AnalysedMove", "remoteness", analysed_move::REMOTENESS),
    ("AnalysedMove", "over_budget", analysed_move::OVER_BUDGET),
    ("Move", "token", move_::TOKEN),
    ("TokenMove", "token_index", move_::TOKEN_INDEX),
    ("TokenMove", "source_vertex", move_::SOURCE_VERTEX),
    ("TokenMove", "target_vertex", move_::TARGET_VERTEX),
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
