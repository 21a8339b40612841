//! Misère play over real gRPC (`play_convention`), judged by the brute force of
//! `support/misere_oracle.rs`: every position of 1 to 4 tokens on seeded random small graphs,
//! acyclic and cyclic, its outcome, remoteness and moves best first; the per-vertex values;
//! the in-band error of a search over its budget; the refusal of the Addition-Subtraction
//! game; and the convention over JSON.

use super::analysis::verdict_moves;
use crate::support::http1::exchange;
use crate::support::misere_oracle::{MisereOracle, OracleMove, Verdict};
use crate::support::server::{
    full_verdicts, next_ok, open, packed, put, serve, server_config, service_config, start_server,
    tokens,
};
use grundy::proto::{
    self, EvaluateBatchRequest, EvaluateRequest, EvaluateStart, GetValuesRequest, Outcome,
    PlayConvention, evaluate_request::Payload, evaluate_start::GraphSource,
};

fn graph(vertices: u32, edges: &[(u32, u32)]) -> proto::Graph {
    let mut out_degrees = vec![0u32; vertices as usize];
    let mut sorted = edges.to_vec();
    sorted.sort_by_key(|&(from, _)| from);
    for &(from, _) in &sorted {
        out_degrees[from as usize] += 1;
    }
    proto::Graph {
        vertex_count: vertices,
        out_degrees,
        targets: sorted.iter().map(|&(_, to)| to).collect(),
        split_counts: vec![],
        fixed_targets: vec![],
    }
}

fn misere_start(graph: proto::Graph, position_budget: u64) -> EvaluateStart {
    EvaluateStart {
        graph_source: Some(GraphSource::Graph(graph)),
        explain: false,
        analysis: Some(proto::AnalysisOptions {
            max_moves: 0,
            position_budget,
        }),
        play_convention: PlayConvention::Misere.into(),
    }
}

/// Small random graphs from a fixed seed: acyclic (edges to larger vertices) or not.
fn random_graphs(count: usize, acyclic: bool) -> Vec<(u32, Vec<(u32, u32)>)> {
    let mut state = 0x6d69_7365_7265u64 + u64::from(acyclic);
    let mut next = move |bound: u32| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % u64::from(bound)) as u32
    };
    (0..count)
        .map(|_| {
            let n = 1 + next(5);
            let mut edges = Vec::new();
            for _ in 0..next(3 * n + 1) {
                let (a, b) = (next(n), next(n));
                match acyclic {
                    true if a < b => edges.push((a, b)),
                    true if b < a => edges.push((b, a)),
                    true => {}
                    false => edges.push((a, b)),
                }
            }
            (n, edges)
        })
        .collect()
}

fn verdict_of(outcome: i32) -> Verdict {
    match Outcome::try_from(outcome) {
        Ok(Outcome::Win) => Verdict::Win,
        Ok(Outcome::Lose) => Verdict::Lose,
        Ok(Outcome::Draw) => Verdict::Draw,
        other => panic!("no outcome: {other:?}"),
    }
}

fn moves_of(verdict: &proto::Verdict) -> Vec<OracleMove> {
    verdict_moves(verdict)
        .into_iter()
        .map(|(from, to, outcome, remoteness, over_budget)| {
            assert!(!over_budget);
            OracleMove {
                from,
                to,
                outcome: verdict_of(outcome),
                remoteness,
            }
        })
        .collect()
}

/// Every position of 1 to 4 tokens of the graph, in one `EvaluateBatch`, against the oracle.
async fn agrees_everywhere(
    client: &mut proto::grundy_service_client::GrundyServiceClient<tonic::transport::Channel>,
    vertices: u32,
    edges: &[(u32, u32)],
) {
    let oracles: Vec<MisereOracle> = (1..=4)
        .map(|k| MisereOracle::solve(vertices, edges, k))
        .collect();
    let positions: Vec<Vec<u32>> = oracles
        .iter()
        .flat_map(|o| o.positions().iter().cloned())
        .collect();
    let queries = positions
        .iter()
        .enumerate()
        .map(|(i, p)| tokens(i as u64, p))
        .collect();
    let request = EvaluateBatchRequest {
        start: Some(misere_start(graph(vertices, edges), 0)),
        queries,
    };
    let mut stream = client.evaluate_batch(request).await.unwrap().into_inner();
    let mut verdicts = Vec::new();
    while let Some(response) = stream.message().await.unwrap() {
        verdicts.extend(response.verdicts);
    }
    assert_eq!(verdicts.len(), positions.len());
    for (verdict, position) in verdicts.iter().zip(&positions) {
        let oracle = &oracles[position.len() - 1];
        let context = format!("graph {vertices} {edges:?}, tokens {position:?}");
        assert_eq!(verdict.error, None, "{context}");
        let (outcome, remoteness) = oracle.verdict(position);
        assert_eq!(verdict_of(verdict.outcome), outcome, "{context}");
        assert_eq!(verdict.remoteness, remoteness, "{context}");
        assert_eq!(verdict.nim_sum, 0, "{context}");
        assert_eq!(moves_of(verdict), oracle.moves(position), "{context}");
    }
}

#[tokio::test]
async fn misere_verdicts_over_grpc_match_the_brute_force_on_random_graphs() {
    let (_server, mut client) = start_server(service_config()).await;
    for acyclic in [true, false] {
        for (vertices, edges) in random_graphs(12, acyclic) {
            agrees_everywhere(&mut client, vertices, &edges).await;
        }
    }
}

#[tokio::test]
async fn misere_worked_example_over_grpc_is_a_loss() {
    let (_server, mut client) = start_server(service_config()).await;
    let edges = [(0, 1), (1, 2), (1, 3), (2, 3)];
    agrees_everywhere(&mut client, 4, &edges).await;
    // Packed queries on a misère stream come back as full verdicts, with the best move.
    let mut start = misere_start(graph(4, &edges), 0);
    start.analysis = None;
    start.explain = true;
    let requests = vec![
        EvaluateRequest {
            payload: Some(Payload::Start(start)),
        },
        packed(0, &[&[0], &[1], &[3, 3]]),
    ];
    let (requests, responses) = open(&mut client, requests).await;
    let mut responses = responses.unwrap();
    assert!(next_ok(&mut responses).await.graph.is_some());
    let verdicts = full_verdicts(&mut responses, 3).await;
    let outcomes: Vec<i32> = verdicts.iter().map(|v| v.outcome).collect();
    let (win, lose): (i32, i32) = (Outcome::Win.into(), Outcome::Lose.into());
    assert_eq!(outcomes, [lose, win, win]);
    let best = verdicts[1].best_move.clone().and_then(|m| m.kind);
    let Some(proto::r#move::Kind::Token(best)) = best else {
        panic!("a winning move from 1: {verdicts:?}");
    };
    assert_eq!((best.source_vertex, best.target_vertex), (1, 2));
    assert_eq!(verdicts[1].remoteness, None, "explain alone: no analysis");
    drop(requests);
}

#[tokio::test]
async fn misere_search_over_its_budget_is_an_in_band_error_and_the_stream_goes_on() {
    let (_server, mut client) = start_server(service_config()).await;
    let n = 400;
    let edges: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
    let request = EvaluateBatchRequest {
        start: Some(misere_start(graph(n, &edges), 50)),
        queries: vec![
            tokens(0, &[0, 0]),
            tokens(1, &[0]),
            tokens(2, &[n - 2, n - 2]),
        ],
    };
    let mut stream = client.evaluate_batch(request).await.unwrap().into_inner();
    let mut verdicts = Vec::new();
    while let Some(response) = stream.message().await.unwrap() {
        verdicts.extend(response.verdicts);
    }
    assert_eq!(verdicts.len(), 3);
    let error = verdicts[0].error.clone().expect("over the budget");
    assert_eq!(error.field, "tokens");
    assert!(error.message.contains("position budget of 50"), "{error:?}");
    assert!(error.message.contains("--position-budget"), "{error:?}");
    assert_eq!(verdicts[0].outcome, i32::from(Outcome::Unspecified));
    // One token on a path of 400 vertices: 399 forced moves, the first player makes the last
    // one and leaves the second stuck, who wins.
    assert_eq!(verdicts[1].outcome, i32::from(Outcome::Lose));
    assert_eq!(verdicts[1].remoteness, Some(n - 1));
    // Two tokens one move from the end each: 2 moves, then the player to move is stuck: WIN.
    assert_eq!(verdicts[2].outcome, i32::from(Outcome::Win));
    assert_eq!(verdicts[2].remoteness, Some(2));
}

#[tokio::test]
async fn misere_addition_subtraction_is_refused_naming_the_convention_and_the_game() {
    let (_server, mut client) = start_server(service_config()).await;
    let mut addsub = graph(2, &[(0, 1)]);
    addsub.split_counts = vec![1, 1];
    let request = EvaluateBatchRequest {
        start: Some(misere_start(addsub, 0)),
        queries: vec![tokens(0, &[0])],
    };
    let status = match client.evaluate_batch(request).await {
        Err(status) => status,
        Ok(response) => {
            let mut stream = response.into_inner();
            loop {
                match stream.message().await {
                    Err(status) => break status,
                    Ok(Some(response)) => assert!(response.verdicts.is_empty()),
                    Ok(None) => panic!("the stream ended without an error"),
                }
            }
        }
    };
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(
        status.message().contains("PLAY_CONVENTION_MISERE"),
        "{status:?}"
    );
    assert!(
        status.message().contains("Addition-Subtraction"),
        "{status:?}"
    );
}

#[tokio::test]
async fn misere_values_carry_the_one_token_outcome_and_remoteness() {
    let (_server, mut client) = start_server(service_config()).await;
    let edges = [(0, 1), (1, 2), (1, 3), (2, 3), (4, 4), (4, 3)];
    let upload = vec![proto::PutGraphRequest {
        chunk: Some(graph(5, &edges)),
    }];
    let graph_id = put(&mut client, upload).await.unwrap().graph_id;
    let request = GetValuesRequest {
        graph_id,
        play_convention: PlayConvention::Misere.into(),
        ..Default::default()
    };
    let mut stream = client.get_values(request).await.unwrap().into_inner();
    let mut values = Vec::new();
    while let Some(page) = stream.message().await.unwrap() {
        values.extend(page.values);
    }
    let oracle = MisereOracle::solve(5, &edges, 1);
    assert_eq!(values.len(), 5);
    for (v, value) in values.iter().enumerate() {
        let (outcome, remoteness) = oracle.verdict(&[v as u32]);
        let outcome_set = value.outcome.expect("a misère outcome");
        assert_eq!(verdict_of(outcome_set), outcome, "vertex {v}");
        assert_eq!(value.remoteness, remoteness, "vertex {v}");
    }
    // Vertex 4 has a self-loop and a move to the end: 4 -> 3 leaves the opponent stuck, who
    // wins, so the player keeps the loop: a DRAW.
    assert_eq!(oracle.verdict(&[4]), (Verdict::Draw, None));
}

#[tokio::test]
async fn misere_over_json_answers_as_over_grpc_and_values_say_the_outcome_only_then() {
    let server = serve(server_config()).await;
    // The worked example: 0 -> 1, 1 -> {2, 3}, 2 -> 3.
    let graph = r#"{"vertexCount": 4, "outDegrees": [1,2,1,0], "targets": [1,2,3,3]}"#;
    let body = format!(
        r#"{{"start": {{"graph": {graph}, "playConvention": "PLAY_CONVENTION_MISERE"}},
            "queries": [{{"id": 1, "tokens": {{"vertices": [0]}}}},
                        {{"id": 2, "tokens": {{"vertices": [1]}}}}]}}"#
    );
    let (status, _, answer) =
        exchange(&server, "POST /v1:evaluate HTTP/1.1", body.as_bytes()).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    let answer: serde_json::Value = serde_json::from_slice(&answer).unwrap();
    let verdicts: Vec<(String, String)> = answer
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["verdicts"].as_array().unwrap().clone())
        .map(|v| {
            (
                v["outcome"].as_str().unwrap().into(),
                v["nimSum"].as_str().unwrap().into(),
            )
        })
        .collect();
    let expected = [("OUTCOME_LOSE", "0"), ("OUTCOME_WIN", "0")];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(o, n)| (o.to_string(), n.to_string()))
        .collect();
    assert_eq!(verdicts, expected);

    let (status, _, put) = exchange(&server, "POST /v1/graphs HTTP/1.1", graph.as_bytes()).await;
    assert_eq!(status, 200);
    let put: serde_json::Value = serde_json::from_slice(&put).unwrap();
    let id = put["graphId"].as_str().unwrap();
    let values = |query: &str| {
        let head = format!("GET /v1/graphs/{id}/values{query} HTTP/1.1");
        let server = &server;
        async move {
            let (status, _, body) = exchange(server, &head, b"").await;
            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
            let pages: serde_json::Value = serde_json::from_slice(&body).unwrap();
            pages.as_array().unwrap()[1]["values"]
                .as_array()
                .unwrap()
                .clone()
        }
    };
    let misere = values("?play_convention=PLAY_CONVENTION_MISERE").await;
    let outcomes: Vec<&str> = misere
        .iter()
        .map(|v| v["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        ["OUTCOME_LOSE", "OUTCOME_WIN", "OUTCOME_LOSE", "OUTCOME_WIN"]
    );
    let normal = values("").await;
    assert!(
        normal.iter().all(|v| v.get("outcome").is_none()),
        "{normal:?}"
    );
}
