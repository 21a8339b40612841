//! Position analysis on a stream (`EvaluateStart.analysis`): remoteness and every move, in
//! full verdicts and in packed columns alike, within the caps, sent as they are found.

use std::time::Duration;

use crate::support::server::{
    PATIENCE, batch, evaluate_in_background, full_verdicts, next_ok, open, packed, serve_service,
    service_config, start_server, tokens, wait_until,
};
use grundy::proto::{
    self, EvaluateRequest, EvaluateStart, Outcome, Query, evaluate_request::Payload,
    evaluate_start::GraphSource, grundy_service_client::GrundyServiceClient,
};
use tonic::transport::Channel;

/// A graph with a cycle, a draw, multi-edges and a self-loop: 0 -> {1, 2, 2}, 1 -> {0, 3},
/// 2 -> {3}, 3 -> {}, 4 -> {4, 3}.
pub(super) fn analysis_graph() -> proto::Graph {
    proto::Graph {
        vertex_count: 5,
        out_degrees: vec![3, 2, 1, 0, 2],
        targets: vec![1, 2, 2, 0, 3, 3, 4, 3],
        split_counts: vec![],
        fixed_targets: Vec::new(),
    }
}

pub(super) fn analysis_start(
    graph: proto::Graph,
    analysis: Option<proto::AnalysisOptions>,
) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::Graph(graph)),
            explain: false,
            analysis,
            play_convention: 0,
        })),
    }
}

/// Every analysed move of a verdict as (source, target, outcome, remoteness, over budget).
pub(super) fn verdict_moves(verdict: &proto::Verdict) -> Vec<(u32, u32, i32, Option<u32>, bool)> {
    verdict
        .moves
        .iter()
        .map(|m| {
            let Some(proto::r#move::Kind::Token(token)) =
                m.r#move.as_ref().and_then(|m| m.kind.clone())
            else {
                panic!("a token move");
            };
            (
                token.source_vertex,
                token.target_vertex,
                m.outcome,
                m.remoteness,
                m.over_budget,
            )
        })
        .collect()
}

/// `positions` analysed under `options` on one stream of [`analysis_graph`], once as message
/// queries (ids from 0) and once as packed queries (the same ids): both answered in full
/// verdicts, each read over as many messages as it came in (no message carries columns).
async fn analysed_both_ways(
    client: &mut GrundyServiceClient<Channel>,
    options: proto::AnalysisOptions,
    positions: &[&[u32]],
) -> (Vec<proto::Verdict>, Vec<proto::Verdict>) {
    let full: Vec<Query> = positions
        .iter()
        .enumerate()
        .map(|(id, p)| tokens(id as u64, p))
        .collect();
    let (tx, stream) = open(
        client,
        vec![
            analysis_start(analysis_graph(), Some(options)),
            batch(full),
            packed(0, positions),
        ],
    )
    .await;
    drop(tx);
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let mut all = Vec::new();
    while all.len() < 2 * positions.len() {
        let message = next_ok(&mut stream).await;
        assert_eq!(message.packed_verdicts, None, "no columns");
        all.extend(message.verdicts);
    }
    let packed = all.split_off(positions.len());
    (all, packed)
}

/// The analysis of a position is the same for message and packed queries (both answered in
/// full verdicts), and it is the engine's (checked against an independent retrograde oracle
/// in the engine tier); the caps on moves and positions hold; a stream that does not ask gets
/// none of it.
#[tokio::test]
async fn analysis_comes_in_full_verdicts_for_message_and_packed_queries_alike() {
    let (_server, mut client) = start_server(service_config()).await;
    let positions: [&[u32]; 6] = [&[0], &[3], &[0, 2], &[1, 1], &[4], &[0, 4, 2]];
    let options = proto::AnalysisOptions::default();
    let (verdicts, packed) = analysed_both_ways(&mut client, options, &positions).await;
    let game = grundy::service::game_from_proto(analysis_graph()).unwrap();
    let engine = grundy::engine::analyse(game, &Default::default()).unwrap();
    for (index, position) in positions.iter().enumerate() {
        let expected = engine
            .analyse_position(position, &grundy::engine::AnalysisOptions::default())
            .unwrap();
        let verdict = &verdicts[index];
        assert_eq!(
            verdict.remoteness.map(u64::from),
            expected.remoteness.known(),
            "{position:?}"
        );
        assert_eq!(verdict.nim_sum, expected.nim_sum);
        let moves = verdict_moves(verdict);
        let engine_moves: Vec<_> = expected.moves.iter().map(|m| (m.from, m.to)).collect();
        let listed: Vec<_> = moves.iter().map(|m| (m.0, m.1)).collect();
        assert_eq!(listed, engine_moves, "{position:?}");
    }
    assert_eq!(
        packed, verdicts,
        "packed queries answered as message queries are"
    );
    // Vertex 0 with a multi-edge to 2: one move per (from, to).
    assert_eq!(verdict_moves(&verdicts[0]).len(), 2);
    // One token on the sink: LOSE in 0, no move.
    assert_eq!(verdicts[1].remoteness, Some(0));

    // Caps: one move listed, a budget of one position for the sums.
    let tight = proto::AnalysisOptions {
        max_moves: 1,
        position_budget: 1,
    };
    let (tx, stream) = open(
        &mut client,
        vec![
            analysis_start(analysis_graph(), Some(tight)),
            batch(vec![tokens(0, &[0, 2]), tokens(1, &[0])]),
        ],
    )
    .await;
    drop(tx);
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let verdicts = full_verdicts(&mut stream, 2).await;
    assert_eq!(verdicts[0].remoteness, None);
    assert_eq!(
        verdicts[0].remoteness_unknown(),
        proto::RemotenessUnknown::OverBudget
    );
    assert_ne!(
        verdicts[0].outcome(),
        Outcome::Unspecified,
        "the outcome is still answered"
    );
    assert_eq!(verdicts[1].moves.len(), 1);
    assert_eq!(verdicts[1].moves_omitted, 1);

    // The same caps on packed queries: the same verdicts.
    let positions: [&[u32]; 4] = [&[0], &[0, 2], &[1, 1], &[4, 0]];
    let (verdicts, packed) = analysed_both_ways(&mut client, tight, &positions).await;
    assert!(
        verdicts
            .iter()
            .any(|v| v.remoteness_unknown() == proto::RemotenessUnknown::OverBudget),
        "{verdicts:?}"
    );
    assert_eq!(packed, verdicts);

    // Without `analysis`: none of it.
    let (tx, stream) = open(
        &mut client,
        vec![
            analysis_start(analysis_graph(), None),
            batch(vec![tokens(0, &[0])]),
        ],
    )
    .await;
    drop(tx);
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let plain = next_ok(&mut stream).await.verdicts.remove(0);
    assert!(plain.moves.is_empty() && plain.remoteness.is_none() && plain.best_move.is_none());
}

/// The query ids of every message after the summary, in order, to the stream's end.
async fn message_ids(mut stream: tonic::Streaming<proto::EvaluateResponse>) -> Vec<Vec<u64>> {
    next_ok(&mut stream).await;
    let mut messages = Vec::new();
    while let Some(response) = stream.message().await.expect("no stream error") {
        assert_eq!(response.packed_verdicts, None, "no columns");
        messages.push(response.verdicts.iter().map(|v| v.query_id).collect());
    }
    messages
}

/// A stream's analysed packed queries are answered in full verdicts, each query once, in
/// order, over as many messages as they went in; a bad vertex is named by its place among
/// the packed vertices.
#[tokio::test]
async fn analysed_packed_queries_are_answered_once_each_in_order() {
    let (_server, mut client) = start_server(service_config()).await;
    let positions: [&[u32]; 5] = [&[0], &[3], &[0, 2], &[9], &[1, 1]];
    let (tx, stream) = open(
        &mut client,
        vec![
            analysis_start(analysis_graph(), Some(proto::AnalysisOptions::default())),
            packed(40, &positions),
        ],
    )
    .await;
    drop(tx);
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let verdicts = full_verdicts(&mut stream, positions.len()).await;
    let ids: Vec<u64> = verdicts.iter().map(|v| v.query_id).collect();
    assert_eq!(ids, [40, 41, 42, 43, 44]);
    let error = verdicts[3]
        .error
        .as_ref()
        .expect("vertex 9 is out of range");
    assert_eq!(error.field, "packed_tokens.vertices[4]");
    assert!(
        verdicts
            .iter()
            .enumerate()
            .all(|(i, v)| (i == 3) == v.error.is_some())
    );
}

/// [`analysis_graph`] beside a DAG of `k` vertices (5.. 5 + k, each with edges one, two and
/// five ahead), where a sum of five tokens has more positions than a search's budget.
pub(super) fn analysis_graph_and_a_large_dag(k: u32) -> proto::Graph {
    let mut graph = analysis_graph();
    for v in 0..k {
        let successors: Vec<u32> = [1, 2, 5]
            .iter()
            .map(|step| v + step)
            .filter(|&w| w < k)
            .map(|w| 5 + w)
            .collect();
        graph.out_degrees.push(successors.len() as u32);
        graph.targets.extend(successors);
    }
    graph.vertex_count += k;
    graph
}

/// A budget that the sum of five tokens on [`analysis_graph_and_a_large_dag`] exhausts in
/// about 0.5 s of search, 25 times what the verdicts before it may wait.
const SLOW_SEARCH_POSITIONS: u64 = 200_000;

/// A stream of a quick search, then one that exhausts [`SLOW_SEARCH_POSITIONS`], in one
/// packed batch from id 0 (for the two tests below).
fn quick_then_slow_search() -> [EvaluateRequest; 2] {
    let positions: [&[u32]; 2] = [&[0, 2], &[5, 5, 5, 6, 6]];
    [
        analysis_start(
            analysis_graph_and_a_large_dag(40),
            Some(proto::AnalysisOptions {
                max_moves: 0,
                position_budget: SLOW_SEARCH_POSITIONS,
            }),
        ),
        packed(0, &positions),
    ]
}

/// A quick search's answer goes while the slow search after it runs, not with its answer:
/// the batch's last query is that slow search, so only the stream, taking the answers that
/// waited too long for it, can send the first one on its own (or the job, when the quick
/// search itself took a millisecond on a loaded machine).
#[tokio::test]
async fn a_quick_search_answer_does_not_wait_for_a_slow_search_after_it() {
    let (_server, mut client) = start_server(service_config()).await;
    let (tx, stream) = open(&mut client, quick_then_slow_search().into()).await;
    drop(tx);
    let ids = message_ids(stream.unwrap()).await;
    assert_eq!(ids, [vec![0], vec![1]]);
}

/// A stream whose batch takes longer than the idle timeout (`--stream-idle-timeout`) to
/// answer is not idle: the timeout counts only once every batch is answered and read. Once
/// it is, and the client sends nothing more, the stream does end.
#[tokio::test]
async fn a_stream_answering_past_the_idle_timeout_is_left_alone() {
    let server = serve_service(grundy::service::ServiceConfig {
        stream_idle_timeout: Some(Duration::from_millis(100)),
        ..service_config()
    })
    .await;
    let mut client = server.client().await;
    let (tx, stream) = open(&mut client, quick_then_slow_search().into()).await;
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let asked = std::time::Instant::now();
    let mut answered = 0;
    while answered < 2 {
        let response = tokio::time::timeout(PATIENCE, stream.message())
            .await
            .expect("answered in time")
            .expect("the busy stream is not ended")
            .expect("the client keeps its stream open");
        answered += response.verdicts.len();
    }
    // Otherwise the timeout was never at stake.
    assert!(
        asked.elapsed() > Duration::from_millis(100),
        "{:?}",
        asked.elapsed()
    );
    let ended = tokio::time::timeout(PATIENCE, stream.message())
        .await
        .expect("the quiet stream is ended in time")
        .expect_err("ended for its silence");
    assert_eq!(ended.code(), tonic::Code::DeadlineExceeded, "{ended:?}");
    drop(tx);
}

/// Counts of tokens that a client gives as values are its own numbers: their sum may
/// overflow, and a position past the analysis's token cap is answered (outcome and nim-sum,
/// the remoteness over the budget) without sizing anything by it. Such queries once aborted
/// the server (an allocation of 4 TB) or panicked it (capacity overflow); the stream goes on.
#[tokio::test]
async fn values_whose_token_count_overflows_are_answered_without_analysis() {
    let (_server, mut client) = start_server(service_config()).await;
    let sparse = |id, values: [u64; 2]| Query {
        id,
        position: Some(proto::query::Position::SparseValues(proto::SparseValues {
            vertices: vec![0, 2],
            values: values.to_vec(),
        })),
    };
    let dense = Query {
        id: 2,
        position: Some(proto::query::Position::DenseValues(proto::DenseValues {
            values: vec![u64::MAX, 2, 0, 0, 0],
        })),
    };
    let queries = vec![
        sparse(0, [1 << 40, u64::MAX - (1 << 40) + 2]),
        sparse(1, [1 << 63, 1 << 63]),
        dense,
        tokens(3, &[0, 2]),
    ];
    let (tx, stream) = open(
        &mut client,
        vec![
            analysis_start(analysis_graph(), Some(proto::AnalysisOptions::default())),
            batch(queries),
        ],
    )
    .await;
    drop(tx);
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let verdicts = full_verdicts(&mut stream, 4).await;
    for verdict in &verdicts[..3] {
        assert_eq!(verdict.error, None, "{verdict:?}");
        assert_eq!(verdict.remoteness, None, "{verdict:?}");
        assert!(verdict.moves.is_empty(), "{verdict:?}");
    }
    assert_eq!(
        verdicts[0].remoteness_unknown(),
        proto::RemotenessUnknown::OverBudget
    );
    // The stream goes on: the next query is analysed as usual.
    assert_eq!(verdicts[3].error, None);
    assert!(verdicts[3].remoteness.is_some(), "{:?}", verdicts[3]);
}

/// A search whose client goes away stops within moments whatever its budgets: a sum of two
/// tokens on a random DAG of 10^5 vertices, on a server whose budgets would let it search for
/// hours. Once the client cancels, its search job is gone within a second (the engine reads
/// the interrupt every 16K units of work, tens of microseconds; a search once read it every
/// 4,096 new positions and never while listing or settling, and ran on for 15-65 s). The
/// listing of a wide position is interrupted in the engine tier.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_search_stops_at_once_whatever_its_budgets() {
    use grundy::service::{AnalysisCaps, ServiceConfig, WorkKind};
    let server = serve_service(ServiceConfig {
        analysis: AnalysisCaps {
            max_moves: u32::MAX,
            position_budget: u64::MAX,
            work_budget: u64::MAX,
        },
        ..service_config()
    })
    .await;
    let metrics = server.service.metrics().clone();
    let searches = move || metrics.work_jobs_running(WorkKind::Search);
    let dag = grundy::generate::graph(grundy::generate::Shape::Dag, 100_000, 1_000_000, 7);
    let offsets = dag.offsets();
    let graph = proto::Graph {
        vertex_count: dag.vertex_count(),
        out_degrees: offsets.windows(2).map(|w| w[1] - w[0]).collect(),
        targets: dag.targets().to_vec(),
        ..Default::default()
    };
    let tokens_on_all = [0, 1];
    let requests = vec![
        analysis_start(graph, Some(proto::AnalysisOptions::default())),
        batch(vec![tokens(0, &tokens_on_all)]),
    ];
    let reader = evaluate_in_background(server.client().await, requests);
    wait_until("the search never started", || searches() > 0).await;
    // Let it get well into its work, then go away.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(searches(), 1, "the search still runs");
    reader.abort();
    let cancelled = std::time::Instant::now();
    while searches() > 0 {
        assert!(
            cancelled.elapsed() < Duration::from_secs(1),
            "the search still runs {:?} after its client left",
            cancelled.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    eprintln!("search stopped {:?} after the cancel", cancelled.elapsed());
}

/// The resident memory of process `pid`, in bytes.
fn resident_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|line| line.starts_with("VmRSS"))
        .and_then(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |kib| kib << 10)
}

/// A client that asks for the analysis of 10^6 positions in one batch and never reads an
/// answer holds the server to its bounded buffers (the response buffer, the hand-over of
/// early verdicts, the request read ahead), not to the answers of the whole batch: the job
/// waits once they are full. Before, the hand-over was unbounded, and such a client made the
/// server hold every verdict (+1.2 GB for 300,000). The server's memory is sampled for a few
/// seconds while it would be answering; it must stay within 200 MB of where it began.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_holds_the_server_to_its_buffers() {
    use crate::support::process::ServerProcess;
    let server = ServerProcess::start(env!("CARGO_BIN_EXE_grundy-server"), &[]);
    let pid = server.child.0.id();
    let mut client = GrundyServiceClient::connect(server.url()).await.unwrap();
    let before = resident_bytes(pid);
    let count = 1_000_000usize;
    let queries = EvaluateRequest {
        payload: Some(Payload::Queries(proto::QueryBatch {
            queries: Vec::new(),
            packed_tokens: Some(proto::PackedTokenQueries {
                first_query_id: 0,
                token_counts: vec![1; count],
                vertices: (0..count).map(|i| (i % 5) as u32).collect(),
            }),
        })),
    };
    let requests = vec![
        analysis_start(analysis_graph(), Some(proto::AnalysisOptions::default())),
        queries,
    ];
    // The response stream is opened and never read: the client's window closes.
    let unread = client
        .evaluate(tokio_stream::iter(requests))
        .await
        .expect("the stream opens");
    let mut peak = 0;
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        peak = peak.max(resident_bytes(pid).saturating_sub(before));
        assert!(
            peak < 200 << 20,
            "the server grew by {} MiB for a client that reads nothing",
            peak >> 20
        );
    }
    eprintln!("the server grew by at most {} MiB", peak >> 20);
    drop(unread);
    server.stop();
}
