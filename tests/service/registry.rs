//! The graph registry over real gRPC: `PutGraph` in chunks, content-addressed ids, `Evaluate`
//! by id, `GetValues` pages.

use crate::support::server::{
    chain, chunks, evaluate, put, sample_graph, service_config, start_server, tokens,
};
use grundy::engine::{self, Limits};
use grundy::proto::{
    self, GetValuesRequest, PutGraphRequest, evaluate_start::GraphSource, vertex_value::Value,
};
use grundy::service::ServiceConfig;
use std::time::Duration;
use tokio_stream::StreamExt;
use tonic::{Code, Status};

/// Splits `graph` into PutGraph chunks as the CLI sends them: every out-degree first, then
/// the targets, then the split counts, `size` entries per chunk (the server hashes them for
/// the id as they arrive).
fn chunks_in_order(graph: &proto::Graph, size: usize) -> Vec<PutGraphRequest> {
    let mut requests = Vec::new();
    for (list, field) in [
        (&graph.out_degrees, 0),
        (&graph.targets, 1),
        (&graph.split_counts, 2),
    ] {
        for piece in list.chunks(size) {
            let mut chunk = proto::Graph {
                vertex_count: graph.vertex_count,
                ..proto::Graph::default()
            };
            *[
                &mut chunk.out_degrees,
                &mut chunk.targets,
                &mut chunk.split_counts,
            ][field] = piece.to_vec();
            requests.push(PutGraphRequest { chunk: Some(chunk) });
        }
    }
    requests
}

#[tokio::test]
async fn large_chunks_hashed_as_they_arrive_give_the_id_of_the_whole_graph() {
    let (_server, mut client) = start_server(service_config()).await;
    // Chunks large enough to be hashed on the work pool while the next ones arrive.
    let graph = chain(50_000);
    let whole = put(&mut client, chunks(&graph, 1 << 20)).await.unwrap();
    let pooled = put(&mut client, chunks_in_order(&graph, 10_000))
        .await
        .unwrap();
    assert_eq!(pooled.graph_id, whole.graph_id);
    assert!(pooled.already_registered);
}

#[tokio::test]
async fn targets_sent_fixed_width_make_the_same_graph_and_id() {
    let graph = chain(50_000);
    let (_server, mut client) = start_server(service_config()).await;
    let varint = put(&mut client, chunks_in_order(&graph, 10_000))
        .await
        .unwrap();
    // Another server: the CLI's order, with every other chunk of targets fixed-width.
    let (_other, mut other) = start_server(service_config()).await;
    let mut requests = chunks_in_order(&graph, 10_000);
    for request in requests.iter_mut().step_by(2) {
        let chunk = request.chunk.as_mut().unwrap();
        chunk.fixed_targets = std::mem::take(&mut chunk.targets);
    }
    let fixed = put(&mut other, requests).await.unwrap();
    assert!(!fixed.already_registered);
    assert_eq!(fixed.graph_id, varint.graph_id);
    assert_eq!(fixed.graph, varint.graph);
    // Inline, in one message: the same verdicts.
    let queries = vec![tokens(1, &[0]), tokens(2, &[1, 2]), tokens(3, &[49_999])];
    let inline_fixed = proto::Graph {
        fixed_targets: graph.targets.clone(),
        targets: Vec::new(),
        ..graph.clone()
    };
    let from_varint = evaluate(&mut client, GraphSource::Graph(graph), queries.clone())
        .await
        .unwrap();
    let from_fixed = evaluate(&mut other, GraphSource::Graph(inline_fixed), queries)
        .await
        .unwrap();
    assert_eq!(from_fixed.len(), 2);
    assert_eq!(from_fixed, from_varint);
}

#[tokio::test]
async fn put_graph_in_chunks_gives_a_content_address_usable_by_evaluate() {
    let (server, mut client) = start_server(service_config()).await;
    let graph = chain(1000);
    let first = put(&mut client, chunks(&graph, 97)).await.unwrap();
    assert_eq!(first.graph_id.len(), 64, "hex SHA-256");
    assert!(!first.already_registered);
    let summary = first.graph.as_ref().unwrap();
    assert_eq!(summary.graph_id, first.graph_id);
    assert_eq!((summary.vertex_count, summary.edge_count), (1000, 999));
    assert!(summary.table_bytes > 0);

    // The same graph, chunked differently or in one piece: the same id, already registered.
    let again = put(&mut client, chunks(&graph, 1 << 20)).await.unwrap();
    assert_eq!(again.graph_id, first.graph_id);
    assert!(again.already_registered);
    let in_order = put(&mut client, chunks_in_order(&graph, 61)).await.unwrap();
    assert_eq!(in_order.graph_id, first.graph_id);

    // Out-neighbour order does not change the id; any other change does.
    let mut reordered = sample_graph();
    reordered.targets = vec![2, 1, 3];
    let sample = put(&mut client, chunks(&sample_graph(), 2)).await.unwrap();
    let reordered = put(&mut client, chunks(&reordered, 2)).await.unwrap();
    assert_eq!(sample.graph_id, reordered.graph_id);
    let mut split = sample_graph();
    split.split_counts = vec![1, 1, 1, 1];
    let split_in_order = put(&mut client, chunks_in_order(&split, 3)).await.unwrap();
    let split = put(&mut client, chunks(&split, 2)).await.unwrap();
    assert_eq!(split_in_order.graph_id, split.graph_id);
    assert_ne!(split.graph_id, sample.graph_id);
    assert_ne!(sample.graph_id, first.graph_id);

    // Evaluate by id; an inline graph goes through the cache under the same id.
    let by_id = evaluate(
        &mut client,
        GraphSource::GraphId(first.graph_id.clone()),
        vec![tokens(1, &[0]), tokens(2, &[998, 999])],
    )
    .await
    .unwrap();
    assert_eq!(by_id[0].graph.as_ref().unwrap().graph_id, first.graph_id);
    // Vertex v of a 1000-chain has value (999 - v) % 2.
    let nim_sums: Vec<u64> = by_id[1].verdicts.iter().map(|v| v.nim_sum).collect();
    assert_eq!(nim_sums, vec![1, 1]);
    let inline = evaluate(
        &mut client,
        GraphSource::Graph(graph),
        vec![tokens(1, &[1])],
    )
    .await
    .unwrap();
    assert_eq!(inline[0].graph.as_ref().unwrap().graph_id, first.graph_id);
    assert_eq!(server.service.registry().len(), 3);

    let status = evaluate(&mut client, GraphSource::GraphId("0".repeat(64)), vec![])
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
    assert!(status.message().contains("PutGraph"), "{status:?}");
}

#[tokio::test]
async fn malformed_uploads_are_rejected() {
    let (_server, mut client) = start_server(ServiceConfig {
        max_edges: 10,
        ..service_config()
    })
    .await;
    let invalid = |status: Status, text: &str| {
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(text), "{status:?}");
    };
    let status = put(&mut client, vec![]).await.unwrap_err();
    invalid(status, "at least one chunk");
    let mut headless = chunks(&sample_graph(), 2);
    headless[0].chunk.as_mut().unwrap().vertex_count = 0;
    invalid(
        put(&mut client, headless).await.unwrap_err(),
        "first chunk must set",
    );
    let mut inconsistent = chunks(&sample_graph(), 2);
    inconsistent[1].chunk.as_mut().unwrap().vertex_count = 5;
    invalid(put(&mut client, inconsistent).await.unwrap_err(), "differs");
    let mut too_many = chunks(&sample_graph(), 2);
    too_many[1].chunk.as_mut().unwrap().out_degrees.push(0);
    invalid(
        put(&mut client, too_many).await.unwrap_err(),
        "more than vertex_count",
    );
    let mut bad_target = sample_graph();
    bad_target.targets[1] = 40;
    invalid(
        put(&mut client, chunks(&bad_target, 2)).await.unwrap_err(),
        "targets[1] = 40",
    );
    // A target out of range is refused at its chunk: the stream below never ends, and the
    // answer comes all the same.
    let first_chunk = chunks(&bad_target, 2).swap_remove(0);
    let unfinished = tokio_stream::iter([first_chunk]).chain(tokio_stream::pending());
    let answer = tokio::time::timeout(Duration::from_secs(30), client.put_graph(unfinished))
        .await
        .expect("the chunk with the bad target is answered without the rest of the upload");
    invalid(answer.unwrap_err(), "targets[1] = 40");
    // The edge limit is checked as chunks arrive, before the graph is complete.
    let status = put(&mut client, chunks(&chain(100), 4)).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted);
    assert!(status.message().contains("max_edges = 10"), "{status:?}");
    // ... and against the edges the out-degrees declare, before any target comes: a graph
    // declaring 10^6 edges is refused at its first chunk, even one with no targets at all.
    let declared = proto::Graph {
        vertex_count: 2,
        out_degrees: vec![1_000_000, 0],
        ..Default::default()
    };
    let status = put(&mut client, chunks(&declared, 1)).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains("max_edges = 10"), "{status:?}");
}

#[tokio::test]
async fn get_values_pages_finite_and_infinite_values_with_counters() {
    let (_server, mut client) = start_server(service_config()).await;
    // 0 <-> 1 (a 2-cycle: both infinite), 2 -> 0 and 2 -> 3 (3 is terminal, value 0).
    let graph = proto::Graph {
        vertex_count: 4,
        out_degrees: vec![1, 1, 2, 0],
        targets: vec![1, 0, 0, 3],
        split_counts: vec![],
        fixed_targets: Vec::new(),
    };
    let expected = engine::analyse(
        grundy::service::game_from_proto(graph.clone()).unwrap(),
        &Limits::default(),
    )
    .unwrap();
    let registered = put(&mut client, chunks(&graph, 3)).await.unwrap();
    let mut stream = client
        .get_values(GetValuesRequest {
            graph_id: registered.graph_id.clone(),
            page_size: 3,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let summary = stream.message().await.unwrap().unwrap().graph.unwrap();
    assert!(summary.cyclic);
    assert_eq!(summary.graph_id, registered.graph_id);
    let mut pages = Vec::new();
    while let Some(page) = stream.message().await.unwrap() {
        pages.push(page);
    }
    assert_eq!(pages.len(), 2, "4 vertices in pages of 3");
    assert_eq!((pages[0].first_vertex, pages[1].first_vertex), (0, 3));
    let values: Vec<proto::VertexValue> = pages.into_iter().flat_map(|p| p.values).collect();
    assert_eq!(values.len(), 4);
    let table = expected.loopy_table().expect("cyclic");
    for (vertex, value) in values.iter().enumerate() {
        let vertex = vertex as u32;
        match expected.vertex_value(vertex).unwrap() {
            engine::VertexValue::Finite(finite) => {
                assert_eq!(value.value, Some(Value::Finite(finite)));
                assert_eq!(value.counter, Some(table.counter(vertex)));
            }
            engine::VertexValue::Infinite { finite_followers } => {
                let Some(Value::Infinite(infinite)) = &value.value else {
                    panic!("vertex {vertex}: expected infinite, got {value:?}");
                };
                assert_eq!(infinite.finite_followers, finite_followers);
                assert_eq!(value.counter, None);
            }
        }
    }
    assert_eq!(values[3].value, Some(Value::Finite(0)));
    assert!(matches!(values[0].value, Some(Value::Infinite(_))));

    // A window of the vertices, and the summary alone.
    let mut window = client
        .get_values(GetValuesRequest {
            graph_id: registered.graph_id.clone(),
            first_vertex: 2,
            vertex_limit: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    window.message().await.unwrap().unwrap();
    let page = window.message().await.unwrap().unwrap();
    assert_eq!((page.first_vertex, page.values.len()), (2, 1));
    assert!(window.message().await.unwrap().is_none());

    let status = client
        .get_values(GetValuesRequest {
            graph_id: "missing".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
}

#[tokio::test]
async fn get_values_of_an_acyclic_graph_carry_the_remoteness_computed_on_first_need() {
    let (_server, mut client) = start_server(service_config()).await;
    // A chain of 40: vertex v wins or loses in 39 - v moves.
    let registered = put(&mut client, chunks(&chain(40), 7)).await.unwrap();
    let summary = |request: GetValuesRequest| {
        let mut client = client.clone();
        async move {
            let mut stream = client.get_values(request).await.unwrap().into_inner();
            let summary = stream.message().await.unwrap().unwrap().graph.unwrap();
            let mut values = Vec::new();
            while let Some(page) = stream.message().await.unwrap() {
                values.extend(page.values);
            }
            (summary, values)
        }
    };
    let request = GetValuesRequest {
        graph_id: registered.graph_id.clone(),
        ..Default::default()
    };
    let only = GetValuesRequest {
        summary_only: true,
        ..request.clone()
    };
    let (before, none) = summary(only.clone()).await;
    assert!(none.is_empty());
    let (_, values) = summary(request).await;
    let remotenesses: Vec<Option<u32>> = values.iter().map(|value| value.remoteness).collect();
    let expected: Vec<Option<u32>> = (0..40).rev().map(Some).collect();
    assert_eq!(remotenesses, expected);
    // The table's bytes counted the remoteness before it was computed.
    let (after, _) = summary(only).await;
    assert_eq!(after.table_bytes, before.table_bytes);
}
