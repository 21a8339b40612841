//! The tables of the bad-input tier: the server's limits for it, builders of malformed
//! requests, and every malformed call with the status it must get.

use grundy::engine::Limits;
use grundy::proto::{
    self, EvaluateBatchRequest, EvaluateRequest, EvaluateStart, GetValuesRequest,
    PackedTokenQueries, PutGraphRequest, Query, QueryBatch, evaluate_request::Payload,
    evaluate_start::GraphSource,
};
use grundy::service::ServerConfig;
use grundy::service::ServiceConfig;
use tonic::Code;

use crate::support::server::{
    batch, sample_graph, start, start_id, tokens, tournament_with_self_loop,
};

pub const MAX_VERTICES: u32 = 10_000;
pub const MAX_EDGES: u64 = 100_000;
pub const MAX_QUERIES: u64 = 1_000;
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;

pub fn config() -> ServerConfig {
    ServerConfig {
        service: ServiceConfig {
            compute_concurrency: 2,
            max_vertices: MAX_VERTICES,
            max_edges: MAX_EDGES,
            max_queries_per_stream: MAX_QUERIES,
            limits: Limits {
                cyclic_work_budget: 1_000_000,
                ..Limits::default()
            },
            ..ServiceConfig::default()
        },
        max_message_bytes: MAX_MESSAGE_BYTES,
        ..ServerConfig::default()
    }
}

/// One malformed call and what it must get.
pub struct Case {
    pub name: &'static str,
    pub call: Call,
    pub code: Code,
    pub message: &'static str,
}

pub enum Call {
    Evaluate(Vec<EvaluateRequest>),
    Batch(EvaluateBatchRequest),
    Put(Vec<PutGraphRequest>),
    Values(GetValuesRequest),
}

pub fn graph(
    vertex_count: u32,
    out_degrees: &[u32],
    targets: &[u32],
    splits: &[u32],
) -> proto::Graph {
    proto::Graph {
        vertex_count,
        out_degrees: out_degrees.to_vec(),
        targets: targets.to_vec(),
        split_counts: splits.to_vec(),
        fixed_targets: Vec::new(),
    }
}

pub fn packed(token_counts: Vec<u32>, vertices: Vec<u32>) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries: vec![],
            packed_tokens: Some(PackedTokenQueries {
                first_query_id: 0,
                token_counts,
                vertices,
            }),
        })),
    }
}

pub fn chunk(graph: proto::Graph) -> PutGraphRequest {
    PutGraphRequest { chunk: Some(graph) }
}

/// A split-count game whose vertex 0 needs about 2^55 steps (64 successors of independent
/// values, K = 20): over any work budget.
pub fn too_hard_split_game() -> proto::Graph {
    let mut out_degrees = vec![64u32];
    let mut targets: Vec<u32> = (1..=64).collect();
    let mut split_counts = vec![20u32];
    for j in 1..=64u32 {
        out_degrees.push(j - 1);
        targets.extend(1..j);
        split_counts.push(j - 1);
    }
    graph(65, &out_degrees, &targets, &split_counts)
}

pub fn many_queries(count: u64) -> Vec<Query> {
    (0..count).map(|id| tokens(id, &[0])).collect()
}

pub fn evaluate_cases() -> Vec<Case> {
    use Code::*;
    let e = |name, requests, code, message| Case {
        name,
        call: Call::Evaluate(requests),
        code,
        message,
    };
    let g = |name, graph, code, message| e(name, vec![start(graph)], code, message);
    let sample = sample_graph;
    vec![
        g(
            "no vertices",
            graph(0, &[], &[], &[]),
            InvalidArgument,
            "vertex_count must be at least 1",
        ),
        g(
            "out_degrees short",
            graph(4, &[2, 0, 1], &[1, 2, 3], &[]),
            InvalidArgument,
            "out_degrees has 3 entries, expected vertex_count = 4",
        ),
        g(
            "out_degrees long",
            graph(4, &[2, 0, 1, 0, 0], &[1, 2, 3], &[]),
            InvalidArgument,
            "out_degrees has 5 entries",
        ),
        g(
            "targets short",
            graph(4, &[2, 0, 1, 0], &[1, 2], &[]),
            InvalidArgument,
            "targets has 2 entries, expected the sum of out_degrees = 3",
        ),
        g(
            "targets long",
            graph(4, &[2, 0, 1, 0], &[1, 2, 3, 0], &[]),
            InvalidArgument,
            "targets has 4 entries",
        ),
        g(
            "target out of range",
            graph(4, &[2, 0, 1, 0], &[1, 2, 7], &[]),
            InvalidArgument,
            "targets[2] = 7 is out of range (vertex_count 4)",
        ),
        g(
            "target u32::MAX",
            graph(2, &[1, 0], &[u32::MAX], &[]),
            InvalidArgument,
            "targets[0] = 4294967295 is out of range",
        ),
        g(
            "out_degrees overflow u32",
            graph(3, &[u32::MAX, u32::MAX, 2], &[], &[]),
            InvalidArgument,
            "8589934592 edges",
        ),
        g(
            "split_counts short",
            graph(4, &[2, 0, 1, 0], &[1, 2, 3], &[1, 1]),
            InvalidArgument,
            "split_counts has 2 entries, expected vertex_count = 4",
        ),
        g(
            "split cycle",
            graph(3, &[1, 1, 1], &[1, 2, 0], &[1, 1, 1]),
            InvalidArgument,
            "0 -> 1 -> 2 -> 0",
        ),
        g(
            "split self-loop",
            graph(2, &[1, 1], &[1, 1], &[1, 1]),
            InvalidArgument,
            "1 -> 1",
        ),
        g(
            "over max_vertices",
            graph(MAX_VERTICES + 1, &[], &[], &[]),
            ResourceExhausted,
            "max_vertices",
        ),
        g(
            "vertex_count u32::MAX",
            graph(u32::MAX, &[], &[], &[]),
            ResourceExhausted,
            "max_vertices = 10000",
        ),
        g(
            "over max_edges",
            graph(
                2,
                &[MAX_EDGES as u32 + 1, 0],
                &vec![1; MAX_EDGES as usize + 1],
                &[],
            ),
            ResourceExhausted,
            "max_edges = 100000",
        ),
        g(
            "over max_message_bytes",
            graph(2, &[1_100_000, 0], &vec![1; 1_100_000], &[]),
            ResourceExhausted,
            "max_message_bytes",
        ),
        g(
            "over the cyclic work budget",
            tournament_with_self_loop(300),
            ResourceExhausted,
            "max_cyclic_work = 1000000",
        ),
        g(
            "split game too hard",
            too_hard_split_game(),
            ResourceExhausted,
            "vertex",
        ),
        e(
            "empty graph_id",
            vec![start_id("")],
            NotFound,
            "not registered",
        ),
        e(
            "unknown graph_id",
            vec![start_id(&"0".repeat(64))],
            NotFound,
            "not registered",
        ),
        e(
            "graph_id with control bytes",
            vec![start_id("../\n\0\u{7f}é")],
            NotFound,
            "not registered",
        ),
        e(
            "start without a graph",
            vec![EvaluateRequest {
                payload: Some(Payload::Start(EvaluateStart::default())),
            }],
            InvalidArgument,
            "start.graph_source",
        ),
        e(
            "no message at all",
            vec![],
            InvalidArgument,
            "must carry `start`",
        ),
        e(
            "queries first",
            vec![batch(vec![tokens(1, &[0])])],
            InvalidArgument,
            "must carry `start`, not `queries`",
        ),
        e(
            "empty first message",
            vec![EvaluateRequest { payload: None }],
            InvalidArgument,
            "must carry `start`",
        ),
        e(
            "start twice",
            vec![start(sample()), start(sample())],
            InvalidArgument,
            "`start` may only be sent once",
        ),
        e(
            "empty later message",
            vec![start(sample()), EvaluateRequest { payload: None }],
            InvalidArgument,
            "neither `start` nor `queries`",
        ),
        e(
            "packed counts disagree",
            vec![start(sample()), packed(vec![2, 1], vec![0, 1])],
            InvalidArgument,
            "packed_tokens: token_counts add up to 3 but vertices has 2 entries",
        ),
        e(
            "packed counts overflow u32",
            vec![
                start(sample()),
                packed(vec![u32::MAX, u32::MAX, 2], vec![0]),
            ],
            InvalidArgument,
            "token_counts add up to 8589934592 but vertices has 1",
        ),
        e(
            "too many queries in one batch",
            vec![start(sample()), batch(many_queries(MAX_QUERIES + 1))],
            ResourceExhausted,
            "max_queries_per_stream = 1000",
        ),
        e(
            "too many queries over batches",
            vec![
                start(sample()),
                batch(many_queries(600)),
                batch(many_queries(600)),
            ],
            ResourceExhausted,
            "max_queries_per_stream",
        ),
        e(
            "too many packed queries",
            vec![
                start(sample()),
                packed(vec![0; MAX_QUERIES as usize + 1], vec![]),
            ],
            ResourceExhausted,
            "max_queries_per_stream",
        ),
    ]
}

pub fn other_cases() -> Vec<Case> {
    use Code::*;
    let b = |name, start, queries, code, message| Case {
        name,
        call: Call::Batch(EvaluateBatchRequest { start, queries }),
        code,
        message,
    };
    let inline = |graph| {
        Some(EvaluateStart {
            graph_source: Some(GraphSource::Graph(graph)),
            explain: false,
            analysis: None,
            play_convention: 0,
        })
    };
    let p = |name, chunks, code, message| Case {
        name,
        call: Call::Put(chunks),
        code,
        message,
    };
    let v = |name, graph_id: &str| Case {
        name,
        call: Call::Values(GetValuesRequest {
            graph_id: graph_id.into(),
            ..GetValuesRequest::default()
        }),
        code: NotFound,
        message: "not registered",
    };
    vec![
        b(
            "batch without start",
            None,
            vec![],
            InvalidArgument,
            "`start` is required",
        ),
        b(
            "batch with a bad graph",
            inline(graph(4, &[2, 0, 1, 0], &[1, 2, 7], &[])),
            vec![],
            InvalidArgument,
            "targets[2] = 7",
        ),
        b(
            "batch over max_queries_per_stream",
            inline(sample_graph()),
            many_queries(MAX_QUERIES + 1),
            ResourceExhausted,
            "max_queries_per_stream",
        ),
        b(
            "batch on an unknown id",
            Some(EvaluateStart {
                graph_source: Some(GraphSource::GraphId("nope".into())),
                explain: false,
                analysis: None,
                play_convention: 0,
            }),
            vec![],
            NotFound,
            "not registered",
        ),
        p(
            "no chunk",
            vec![],
            InvalidArgument,
            "PutGraph needs at least one chunk",
        ),
        p(
            "empty chunk",
            vec![PutGraphRequest { chunk: None }],
            InvalidArgument,
            "chunk.vertex_count",
        ),
        p(
            "first chunk without vertex_count",
            vec![chunk(graph(0, &[1], &[0], &[]))],
            InvalidArgument,
            "chunk.vertex_count",
        ),
        p(
            "vertex_count changes",
            vec![
                chunk(graph(4, &[2, 0], &[], &[])),
                chunk(graph(5, &[1, 0], &[], &[])),
            ],
            InvalidArgument,
            "chunk 1: vertex_count 5 differs from the first chunk's 4",
        ),
        p(
            "too many out_degrees",
            vec![
                chunk(graph(4, &[2, 0, 1], &[], &[])),
                chunk(graph(0, &[0, 0], &[], &[])),
            ],
            InvalidArgument,
            "chunk 1: out_degrees now has 5 entries, more than vertex_count 4",
        ),
        p(
            "too many split_counts",
            vec![
                chunk(graph(2, &[0, 0], &[], &[1])),
                chunk(graph(0, &[], &[], &[1, 1])),
            ],
            InvalidArgument,
            "chunk 1: split_counts now has 3 entries",
        ),
        p(
            "too few out_degrees",
            vec![chunk(graph(4, &[2, 0], &[1, 2], &[]))],
            InvalidArgument,
            "out_degrees has 2 entries, expected vertex_count = 4",
        ),
        p(
            "assembled target out of range",
            vec![
                chunk(graph(4, &[2, 0, 1, 0], &[1, 2], &[])),
                chunk(graph(0, &[], &[9], &[])),
            ],
            InvalidArgument,
            "targets[2] = 9 is out of range",
        ),
        p(
            "assembled targets short",
            vec![
                chunk(graph(4, &[2, 0, 1, 0], &[1], &[])),
                chunk(graph(0, &[], &[2], &[])),
            ],
            InvalidArgument,
            "targets has 2 entries, expected the sum of out_degrees = 3",
        ),
        p(
            "chunks over max_vertices",
            vec![chunk(graph(MAX_VERTICES + 1, &[], &[], &[]))],
            ResourceExhausted,
            "max_vertices",
        ),
        p(
            "chunks grow over max_edges",
            vec![
                chunk(graph(2, &[MAX_EDGES as u32 + 1, 0], &vec![1; 60_000], &[])),
                chunk(graph(0, &[], &vec![1; 60_000], &[])),
            ],
            ResourceExhausted,
            "max_edges",
        ),
        p(
            "chunk over max_message_bytes",
            vec![chunk(graph(2, &[1_100_000, 0], &vec![1; 1_100_000], &[]))],
            ResourceExhausted,
            "max_message_bytes",
        ),
        p(
            "split cycle across chunks",
            vec![
                chunk(graph(3, &[1, 1, 1], &[1], &[1, 1, 1])),
                chunk(graph(0, &[], &[2, 0], &[])),
            ],
            InvalidArgument,
            "0 -> 1 -> 2 -> 0",
        ),
        v("values of an empty id", ""),
        v("values of an unknown id", &"f".repeat(64)),
    ]
}
