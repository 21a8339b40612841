//! Service tier: an in-process server on 127.0.0.1:0 driven by the generated client over real
//! gRPC.

use std::time::Duration;

use crate::support::server::{
    TestServer, batch, chain, full_verdicts, next_ok, open, packed, sample_graph, serve_service,
    service_config, start, start_server, tokens, tournament_with_self_loop,
};
use grundy::proto::{
    self, EvaluateBatchRequest, EvaluateRequest, EvaluateStart, Outcome, Query,
    evaluate_request::Payload, evaluate_start::GraphSource,
    grundy_service_client::GrundyServiceClient, query::Position,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;

#[tokio::test]
async fn verdicts_come_back_in_order_batch_by_batch() {
    let (_server, mut client) = start_server(service_config()).await;
    let (tx, stream) = open(&mut client, vec![start(sample_graph())]).await;
    let mut stream = stream.unwrap();
    let summary = next_ok(&mut stream)
        .await
        .graph
        .expect("first response: summary");
    assert_eq!(summary.vertex_count, 4);
    assert_eq!(summary.edge_count, 3);
    assert!(!summary.cyclic);
    assert_eq!(summary.max_value, 2);

    // Positions of the sample: {0} WIN (2), {0,2} WIN (3), {1,1} LOSE, {2,3} WIN (1), {} LOSE.
    let expected = [
        (Outcome::Win, 2),
        (Outcome::Win, 3),
        (Outcome::Lose, 0),
        (Outcome::Win, 1),
        (Outcome::Lose, 0),
    ];
    let first = vec![tokens(10, &[0]), tokens(11, &[0, 2]), tokens(12, &[1, 1])];
    let second = vec![tokens(13, &[2, 3]), tokens(14, &[])];
    tx.send(batch(first)).await.unwrap();
    tx.send(batch(second)).await.unwrap();
    drop(tx);
    let mut verdicts = next_ok(&mut stream).await.verdicts;
    assert_eq!(verdicts.len(), 3, "one response per request batch");
    verdicts.extend(next_ok(&mut stream).await.verdicts);
    for (i, (verdict, (outcome, nim_sum))) in verdicts.iter().zip(expected).enumerate() {
        assert_eq!(verdict.query_id, 10 + i as u64);
        assert_eq!(verdict.outcome(), outcome, "query {i}");
        assert_eq!(verdict.nim_sum, nim_sum, "query {i}");
        assert!(verdict.error.is_none());
    }
    assert!(
        stream.message().await.unwrap().is_none(),
        "stream ends after half-close"
    );
}

#[tokio::test]
async fn bad_query_is_answered_in_band_and_the_stream_goes_on() {
    let (_server, mut client) = start_server(service_config()).await;
    let queries = vec![
        tokens(1, &[0]),
        tokens(2, &[0, 9]),
        Query {
            id: 3,
            position: None,
        },
        Query {
            id: 4,
            position: Some(Position::DenseValues(proto::DenseValues {
                values: vec![1],
            })),
        },
        Query {
            id: 5,
            position: Some(Position::SparseValues(proto::SparseValues {
                vertices: vec![0, 2],
                values: vec![1],
            })),
        },
        tokens(6, &[2]),
    ];
    let (tx, stream) = open(&mut client, vec![start(sample_graph()), batch(queries)]).await;
    drop(tx);
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let verdicts = next_ok(&mut stream).await.verdicts;
    assert_eq!(verdicts.len(), 6);
    assert_eq!(verdicts[0].outcome(), Outcome::Win);
    let error = verdicts[1].error.as_ref().expect("out-of-range token");
    assert_eq!(error.field, "tokens.vertices[1]");
    assert!(error.message.contains("vertex 9"), "{}", error.message);
    assert_eq!(verdicts[1].outcome(), Outcome::Unspecified);
    assert_eq!(verdicts[2].error.as_ref().unwrap().field, "position");
    assert_eq!(
        verdicts[3].error.as_ref().unwrap().field,
        "dense_values.values"
    );
    assert_eq!(
        verdicts[4].error.as_ref().unwrap().field,
        "sparse_values.values"
    );
    assert_eq!(verdicts[5].outcome(), Outcome::Win);
    assert_eq!(verdicts[5].query_id, 6);
}

#[tokio::test]
async fn dense_and_sparse_positions_count_units_by_parity() {
    let (_server, mut client) = start_server(service_config()).await;
    let dense = |id, values: &[u64]| Query {
        id,
        position: Some(Position::DenseValues(proto::DenseValues {
            values: values.to_vec(),
        })),
    };
    let queries = vec![
        dense(1, &[1, 0, 0, 0]),        // g = 2
        dense(2, &[2, 0, 0, 0]),        // two units on 0 cancel
        dense(3, &[u64::MAX, 0, 1, 0]), // 2 ^ 1
        Query {
            id: 4,
            position: Some(Position::SparseValues(proto::SparseValues {
                vertices: vec![0, 2, 0],
                values: vec![1, 1, 1],
            })),
        },
    ];
    let (tx, stream) = open(&mut client, vec![start(sample_graph()), batch(queries)]).await;
    drop(tx);
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let nim_sums: Vec<u64> = next_ok(&mut stream)
        .await
        .verdicts
        .iter()
        .map(|v| v.nim_sum)
        .collect();
    assert_eq!(nim_sums, vec![2, 0, 3, 1]);
}

#[tokio::test]
async fn bad_graph_is_rejected_with_invalid_argument() {
    let (_server, mut client) = start_server(service_config()).await;
    let mut graph = sample_graph();
    graph.targets[2] = 7;
    let (_tx, stream) = open(&mut client, vec![start(graph)]).await;
    let status = stream.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status.message().contains("targets[2] = 7 is out of range"),
        "{}",
        status.message()
    );

    let mut graph = sample_graph();
    graph.out_degrees.pop();
    let (_tx, stream) = open(&mut client, vec![start(graph)]).await;
    let status = stream.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().contains("out_degrees has 3 entries"));

    // A stream that starts with queries instead of `start`.
    let (_tx, stream) = open(&mut client, vec![batch(vec![tokens(1, &[0])])]).await;
    assert_eq!(stream.unwrap_err().code(), Code::InvalidArgument);

    // An unknown registered graph id.
    let request = EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::GraphId("nope".into())),
            explain: false,
            analysis: None,
            play_convention: 0,
        })),
    };
    let (_tx, stream) = open(&mut client, vec![request]).await;
    assert_eq!(stream.unwrap_err().code(), Code::NotFound);
}

#[tokio::test]
async fn a_second_start_ends_the_stream_after_earlier_verdicts() {
    let (_server, mut client) = start_server(service_config()).await;
    let requests = vec![
        start(sample_graph()),
        batch(vec![tokens(1, &[0])]),
        start(sample_graph()),
    ];
    let (_tx, stream) = open(&mut client, requests).await;
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    assert_eq!(next_ok(&mut stream).await.verdicts.len(), 1);
    let status = stream.message().await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().contains("only be sent once"));
}

#[tokio::test]
async fn client_that_disconnects_mid_stream_frees_its_stream() {
    let (server, mut client) = start_server(service_config()).await;
    // A long chain, and more queries than the bounded buffers hold.
    let (tx, stream) = open(&mut client, vec![start(chain(10_000))]).await;
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let sender = tokio::spawn(async move {
        for round in 0..10_000u64 {
            let queries = (0..256)
                .map(|i| tokens(round * 256 + i, &[(i % 97) as u32]))
                .collect();
            if tx.send(batch(queries)).await.is_err() {
                return;
            }
        }
    });
    // Read a little, never the rest, then hang up.
    next_ok(&mut stream).await;
    assert_eq!(server.service.active_streams(), 1);
    drop(stream);
    sender.abort();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while server.service.active_streams() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server kept working on a stream whose client left"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits (bounded) until no stream is active, then returns the request counters' lines.
async fn requests_total_once_idle(server: &TestServer) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while server.service.active_streams() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "a stream stayed active"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let text = server.service.metrics().encode();
    // Sorted: the exporter lists label sets in the order they were first recorded.
    let mut lines: Vec<String> = text
        .lines()
        .filter(|line| line.starts_with("grundy_requests_total{"))
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

#[tokio::test]
async fn a_client_that_resets_or_closes_mid_stream_is_counted_as_cancelled() {
    let (server, client) = start_server(service_config()).await;
    // A PutGraph reset after its first chunk: the server sees an incomplete graph.
    let (chunks, rx) = mpsc::channel(4);
    let first = proto::PutGraphRequest {
        chunk: Some(proto::Graph {
            targets: vec![],
            ..chain(1000)
        }),
    };
    chunks.send(first).await.unwrap();
    let mut uploader = client.clone();
    let upload = tokio::spawn(async move { uploader.put_graph(ReceiverStream::new(rx)).await });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while server.service.active_streams() == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "PutGraph never started"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    upload.abort();
    drop(chunks);
    // An Evaluate stream whose whole connection goes away (a killed client, `| head`).
    let mut own_connection = GrundyServiceClient::new(server.channel().await);
    let (tx, stream) = open(&mut own_connection, vec![start(chain(1000))]).await;
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    tx.send(batch(vec![tokens(1, &[0])])).await.unwrap();
    drop((stream, tx, own_connection));
    let counted = requests_total_once_idle(&server).await;
    assert_eq!(
        counted,
        [
            r#"grundy_requests_total{rpc="Evaluate",code="CANCELLED",reason="",protocol="grpc"} 1"#,
            r#"grundy_requests_total{rpc="PutGraph",code="CANCELLED",reason="",protocol="grpc"} 1"#,
        ],
        "{counted:?}"
    );
}

#[tokio::test]
async fn packed_token_queries_get_packed_verdicts_with_in_band_errors() {
    let (_server, mut client) = start_server(service_config()).await;
    let requests = vec![
        start(sample_graph()),
        packed(100, &[&[0], &[0, 2], &[1, 1], &[5], &[], &[2, 3]]),
    ];
    let (tx, stream) = open(&mut client, requests).await;
    drop(tx);
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let response = next_ok(&mut stream).await;
    assert!(response.verdicts.is_empty());
    let packed = response.packed_verdicts.expect("packed verdicts");
    assert_eq!(packed.first_query_id, 100);
    let outcomes: Vec<Outcome> = packed
        .outcomes
        .iter()
        .map(|&o| Outcome::try_from(o).unwrap())
        .collect();
    use Outcome::*;
    assert_eq!(outcomes, vec![Win, Win, Lose, Unspecified, Lose, Win]);
    assert_eq!(packed.nim_sums, vec![2, 3, 0, 0, 0, 1]);
    assert_eq!(packed.errors.len(), 1);
    assert_eq!(packed.errors[0].index, 3);
    let error = packed.errors[0].error.as_ref().unwrap();
    assert_eq!(error.field, "packed_tokens.vertices[5]");
    assert!(error.message.contains("vertex 5 is out of range"));
}

#[tokio::test]
async fn packed_arrays_that_disagree_end_the_stream() {
    let (_server, mut client) = start_server(service_config()).await;
    let mut bad = packed(0, &[&[0, 1]]);
    if let Some(Payload::Queries(batch)) = &mut bad.payload {
        batch.packed_tokens.as_mut().unwrap().token_counts[0] = 3;
    }
    let (_tx, stream) = open(&mut client, vec![start(sample_graph()), bad]).await;
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let status = stream.message().await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().contains("token_counts add up to 3"));
}

#[tokio::test]
async fn explain_returns_moves_for_token_and_split_games() {
    let (_server, mut client) = start_server(service_config()).await;
    let explain = |graph| EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::Graph(graph)),
            explain: true,
            analysis: None,
            play_convention: 0,
        })),
    };
    // Packed queries with `explain` come back as full verdicts with moves.
    let (tx, stream) = open(
        &mut client,
        vec![explain(sample_graph()), packed(0, &[&[0], &[1, 1]])],
    )
    .await;
    drop(tx);
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let verdicts = full_verdicts(&mut stream, 2).await;
    let Some(proto::r#move::Kind::Token(token)) =
        verdicts[0].best_move.as_ref().unwrap().kind.clone()
    else {
        panic!("a token move");
    };
    assert_eq!(
        (token.token_index, token.source_vertex, token.target_vertex),
        (0, 0, 1)
    );
    assert!(verdicts[1].best_move.is_none(), "no move for LOSE");

    // docs/games.md worked example with split counts K = {2, 1, 3, 2}.
    let graph = proto::Graph {
        vertex_count: 4,
        out_degrees: vec![2, 1, 2, 0],
        targets: vec![1, 2, 3, 1, 3],
        split_counts: vec![2, 1, 3, 2],
        fixed_targets: Vec::new(),
    };
    let dense = Query {
        id: 7,
        position: Some(Position::DenseValues(proto::DenseValues {
            values: vec![3, 4, 5, 6],
        })),
    };
    let (tx, stream) = open(&mut client, vec![explain(graph), batch(vec![dense])]).await;
    drop(tx);
    let mut stream = stream.unwrap();
    assert!(next_ok(&mut stream).await.graph.unwrap().has_split_counts);
    let verdict = next_ok(&mut stream).await.verdicts.remove(0);
    assert_eq!(verdict.outcome(), Outcome::Win);
    let Some(proto::r#move::Kind::Split(split)) = verdict.best_move.unwrap().kind else {
        panic!("a split move");
    };
    // Vertex 2 (K = 3) sends three units to vertex 1: {3,4,5,6} -> {3,7,4,6}, a LOSE.
    assert_eq!(split.vertex, 2);
    assert_eq!(split.odd_targets.len() as u32 + 2 * split.pair_count, 3);
}

#[tokio::test]
async fn split_game_with_a_cycle_is_invalid_and_too_much_work_is_resource_exhausted() {
    let (_server, mut client) = start_server(service_config()).await;
    let cyclic = proto::Graph {
        vertex_count: 3,
        out_degrees: vec![1, 1, 1],
        targets: vec![1, 2, 0],
        split_counts: vec![1, 1, 1],
        fixed_targets: Vec::new(),
    };
    let (_tx, stream) = open(&mut client, vec![start(cyclic)]).await;
    let status = stream.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status.message().contains("0 -> 1 -> 2 -> 0"),
        "{}",
        status.message()
    );

    // Vertex 0 over 64 successors of independent values 2^i with K = 20: about 2^55 steps.
    let mut out_degrees = vec![64u32];
    let mut targets: Vec<u32> = (1..=64).collect();
    // Successor i + 1 has value 2^i: a staircase where vertex j reaches all of 1..j.
    let mut split_counts = vec![20u32];
    for j in 1..=64u32 {
        out_degrees.push(j - 1);
        targets.extend(1..j);
        split_counts.push(j - 1);
    }
    let hard = proto::Graph {
        vertex_count: 65,
        out_degrees,
        targets,
        split_counts,
        fixed_targets: Vec::new(),
    };
    let (_tx, stream) = open(&mut client, vec![start(hard)]).await;
    match stream {
        Err(status) => {
            assert_eq!(
                status.code(),
                Code::ResourceExhausted,
                "{}",
                status.message()
            );
            assert!(status.message().contains("vertex"), "{}", status.message());
            eprintln!("MSG {}", status.message());
        }
        Ok(_) => panic!("expected RESOURCE_EXHAUSTED"),
    }
}

#[tokio::test]
async fn evaluate_batch_streams_verdicts_in_chunks() {
    let (_server, mut client) = start_server(service_config()).await;
    let queries: Vec<Query> = (0..10_000u64)
        .map(|i| tokens(i, &[(i % 4) as u32]))
        .collect();
    let request = EvaluateBatchRequest {
        start: Some(EvaluateStart {
            graph_source: Some(GraphSource::Graph(sample_graph())),
            explain: false,
            analysis: None,
            play_convention: 0,
        }),
        queries,
    };
    let mut stream = client.evaluate_batch(request).await.unwrap().into_inner();
    let first = crate::support::server::next(&mut stream).await.unwrap();
    assert!(first.graph.is_some() && first.verdicts.is_empty());
    let mut seen = 0u64;
    let values = [2u64, 0, 1, 0];
    while let Some(response) = stream.message().await.unwrap() {
        assert!(response.verdicts.len() <= 4096);
        for verdict in response.verdicts {
            assert_eq!(verdict.query_id, seen);
            assert_eq!(verdict.nim_sum, values[(seen % 4) as usize]);
            seen += 1;
        }
    }
    assert_eq!(seen, 10_000);
}

#[tokio::test]
async fn cyclic_graph_over_the_work_budget_is_resource_exhausted() {
    // A transitive tournament on 60 vertices plus a self-loop on the top one: 59 stages of
    // labelling, about 60^3 / 2 = 108000 edge visits; the budget allows 20000.
    let k = 60u32;
    let graph = tournament_with_self_loop(k);
    let mut config = service_config();
    config.limits.cyclic_work_budget = 20_000;
    let server = serve_service(config).await;
    let mut client = server.client().await;
    let (_tx, stream) = open(&mut client, vec![start(graph.clone())]).await;
    let status = stream.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    for text in [
        "the cyclic labelling stopped in stage ",
        "edge visits, over the budget of 20000",
        "max_cyclic_work = 20000",
    ] {
        assert!(status.message().contains(text), "{text:?}: {status:?}");
    }
    // The same graph within the default budget: the top vertex is ∞({0..k-2}), so one token
    // there wins (by leaving to 0) and two draw.
    let (_server, mut client) = start_server(service_config()).await;
    let (tx, stream) = open(
        &mut client,
        vec![
            start(graph),
            batch(vec![
                tokens(1, &[k - 1]),
                tokens(2, &[k - 1, k - 1]),
                tokens(3, &[k - 2]),
            ]),
        ],
    )
    .await;
    drop(tx);
    let mut stream = stream.unwrap();
    assert!(next_ok(&mut stream).await.graph.unwrap().cyclic);
    let verdicts = next_ok(&mut stream).await.verdicts;
    assert_eq!(verdicts[0].outcome(), Outcome::Win);
    assert_eq!(verdicts[1].outcome(), Outcome::Draw);
    assert_eq!(
        (verdicts[2].outcome(), verdicts[2].nim_sum),
        (Outcome::Win, u64::from(k - 2))
    );
}

#[tokio::test]
async fn explained_split_moves_are_the_same_across_batches_of_a_stream() {
    // The staircase of values 2^0..2^11 under vertex 0 with K = 3: each WIN position needs a
    // split move of vertex 0, found by enumeration once and then remembered for the stream.
    let steps = 12u32;
    let mut out_degrees = vec![steps];
    let mut targets: Vec<u32> = (1..=steps).collect();
    let mut split_counts = vec![3u32];
    for j in 1..=steps {
        out_degrees.push(j - 1);
        targets.extend(1..j);
        split_counts.push(j - 1);
    }
    let graph = proto::Graph {
        vertex_count: steps + 1,
        out_degrees,
        targets,
        split_counts,
        fixed_targets: Vec::new(),
    };
    let explain = EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::Graph(graph)),
            explain: true,
            analysis: None,
            play_convention: 0,
        })),
    };
    let (_server, mut client) = start_server(service_config()).await;
    let positions = |first: u64| -> Vec<Query> {
        (0..40)
            .map(|i| tokens(first + i, &[0, 1 + (i % 3) as u32]))
            .collect()
    };
    let (tx, stream) = open(
        &mut client,
        vec![explain, batch(positions(0)), batch(positions(100))],
    )
    .await;
    drop(tx);
    let mut stream = stream.unwrap();
    next_ok(&mut stream).await;
    let first = full_verdicts(&mut stream, 40).await;
    let second = full_verdicts(&mut stream, 40).await;
    for (a, b) in first.iter().zip(&second) {
        assert_eq!(a.outcome(), Outcome::Win);
        assert!(a.best_move.is_some(), "{a:?}");
        assert_eq!(
            (a.outcome, a.nim_sum, &a.best_move),
            (b.outcome, b.nim_sum, &b.best_move)
        );
    }
}
