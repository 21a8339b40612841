//! The graph registry over real gRPC: `PutGraph` in chunks, content-addressed ids, `Evaluate`
//! by id, `GetValues` pages, the byte-bounded LRU cache and single-flight computation.

use crate::support::server::{
    PATIENCE, TestServer, chain, cycle, sample_graph, serve, serve_service, service_config, start,
    start_server, tokens, tournament_with_self_loop,
};
use grundy::engine::{self, Limits};
use grundy::proto::{
    self, EvaluateRequest, EvaluateResponse, EvaluateStart, GetValuesRequest, PutGraphRequest,
    PutGraphResponse, Query, QueryBatch, evaluate_request::Payload, evaluate_start::GraphSource,
    grundy_service_client::GrundyServiceClient, vertex_value::Value,
};
use grundy::service::GraphStore;
use grundy::service::MemoryStore;
use grundy::service::{Backend, EncodedGraph, GraphId, StoreFuture, StoredBytes};
use grundy::service::{ServerConfig, ServiceConfig};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;
use tonic::{Code, Status, Streaming};

/// Splits `graph` into PutGraph chunks of at most `size` entries per list.
fn chunks(graph: &proto::Graph, size: usize) -> Vec<PutGraphRequest> {
    let pieces =
        |list: &[u32]| -> Vec<Vec<u32>> { list.chunks(size).map(<[u32]>::to_vec).collect() };
    let degrees = pieces(&graph.out_degrees);
    let targets = pieces(&graph.targets);
    let splits = pieces(&graph.split_counts);
    let count = degrees.len().max(targets.len()).max(splits.len()).max(1);
    (0..count)
        .map(|i| PutGraphRequest {
            chunk: Some(proto::Graph {
                vertex_count: if i == 0 { graph.vertex_count } else { 0 },
                out_degrees: degrees.get(i).cloned().unwrap_or_default(),
                targets: targets.get(i).cloned().unwrap_or_default(),
                split_counts: splits.get(i).cloned().unwrap_or_default(),
                fixed_targets: Vec::new(),
            }),
        })
        .collect()
}

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

async fn put(
    client: &mut GrundyServiceClient<Channel>,
    requests: Vec<PutGraphRequest>,
) -> Result<PutGraphResponse, Status> {
    client
        .put_graph(tokio_stream::iter(requests))
        .await
        .map(|r| r.into_inner())
}

/// Runs one Evaluate stream: `source`, then one batch of `queries`; returns the responses.
async fn evaluate(
    client: &mut GrundyServiceClient<Channel>,
    source: GraphSource,
    queries: Vec<Query>,
) -> Result<Vec<EvaluateResponse>, Status> {
    let (tx, rx) = mpsc::channel(4);
    tx.send(EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(source),
            explain: false,
            analysis: None,
        })),
    })
    .await
    .unwrap();
    tx.send(EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries,
            packed_tokens: None,
        })),
    })
    .await
    .unwrap();
    drop(tx);
    let mut stream: Streaming<EvaluateResponse> =
        client.evaluate(ReceiverStream::new(rx)).await?.into_inner();
    let mut responses = Vec::new();
    while let Some(response) = tokio::time::timeout(PATIENCE, stream.message())
        .await
        .expect("a response in time")?
    {
        responses.push(response);
    }
    Ok(responses)
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

fn table_bytes(graph: &proto::Graph) -> usize {
    let game = grundy::service::game_from_proto(graph.clone()).unwrap();
    engine::analyse(game, &Limits::default())
        .unwrap()
        .heap_bytes()
}

#[tokio::test]
async fn the_cache_is_bounded_by_bytes_and_evicts_the_least_recently_used() {
    let (a, b, c) = (chain(2000), chain(2001), chain(2002));
    let bytes = table_bytes(&c);
    // Room for two of the three graphs, not three.
    let (server, mut client) = start_server(ServiceConfig {
        cache_bytes: bytes * 5 / 2,
        ..service_config()
    })
    .await;
    let a_id = put(&mut client, chunks(&a, 500)).await.unwrap().graph_id;
    let b_id = put(&mut client, chunks(&b, 500)).await.unwrap().graph_id;
    // Use a, so that b is the least recently used when c arrives.
    evaluate(&mut client, GraphSource::GraphId(a_id.clone()), vec![])
        .await
        .unwrap();
    let c_id = put(&mut client, chunks(&c, 500)).await.unwrap().graph_id;
    let registry = server.service.registry();
    assert_eq!(registry.len(), 2);
    assert!(registry.cached_bytes() <= registry.capacity_bytes());
    let text = server.service.metrics().encode();
    assert!(text.contains("grundy_cache_evictions_total 1"), "{text}");
    // Every id still works: b, evicted from the cache, is loaded again from the graph store
    // (in memory here) and analysed anew, each reload evicting the least recently used.
    for id in [&a_id, &b_id, &c_id] {
        let result = evaluate(&mut client, GraphSource::GraphId(id.clone()), vec![]).await;
        assert!(result.is_ok(), "{result:?}");
        assert!(registry.cached_bytes() <= registry.capacity_bytes());
        assert_eq!(registry.len(), 2);
    }
    let text = server.service.metrics().encode();
    assert!(text.contains("grundy_cache_evictions_total 3"), "{text}");
    // Uploading a graph again gives the same id back.
    let again = put(&mut client, chunks(&b, 500)).await.unwrap();
    assert_eq!(again.graph_id, b_id);

    // A table larger than the whole cache cannot be registered.
    let huge = chain(20_000);
    let status = put(&mut client, chunks(&huge, 5000)).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted);
    assert!(status.message().contains("cache_bytes"), "{status:?}");
}

/// Bytes the memory store counts for `graph`.
fn game_bytes(graph: &proto::Graph) -> usize {
    grundy::service::game_from_proto(graph.clone())
        .unwrap()
        .heap_bytes()
}

#[tokio::test]
async fn the_memory_store_answers_for_evicted_graphs_within_its_own_bound() {
    let (a, b, c) = (chain(3000), chain(3001), chain(3002));
    // The cache holds one table; the store two of the three graphs.
    let store = MemoryStore::new(game_bytes(&c) * 5 / 2);
    let (server, mut client) = start_server(ServiceConfig {
        cache_bytes: table_bytes(&c) * 3 / 2,
        store: Some(GraphStore::memory(store.clone())),
        ..service_config()
    })
    .await;
    let a_id = put(&mut client, chunks(&a, 700)).await.unwrap().graph_id;
    let b_id = put(&mut client, chunks(&b, 700)).await.unwrap().graph_id;
    let registry = server.service.registry();
    assert_eq!(registry.len(), 1, "a's analysis was evicted by b's");
    // a, from the store (the game itself, analysed again), answers like the original.
    let responses = evaluate(
        &mut client,
        GraphSource::GraphId(a_id.clone()),
        vec![tokens(1, &[0]), tokens(2, &[1, 2998])],
    )
    .await
    .unwrap();
    let nim_sums: Vec<u64> = responses[1].verdicts.iter().map(|v| v.nim_sum).collect();
    assert_eq!(
        nim_sums,
        vec![1, 1],
        "vertex v of a 3000-chain is worth (2999 - v) % 2"
    );
    let text = server.service.metrics().encode();
    assert!(
        text.contains("grundy_table_compute_seconds_count 3\n"),
        "{text}"
    );
    // c pushes the least recently used graph, b, out of the store: its id is gone once the
    // cache evicted it too, while a's and c's still work.
    let c_id = put(&mut client, chunks(&c, 700)).await.unwrap().graph_id;
    assert!(store.bytes() <= game_bytes(&c) * 5 / 2);
    let status = evaluate(&mut client, GraphSource::GraphId(b_id), vec![])
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    for id in [a_id, c_id] {
        let result = evaluate(&mut client, GraphSource::GraphId(id), vec![]).await;
        assert!(result.is_ok(), "{result:?}");
    }
}

#[tokio::test]
async fn concurrent_requests_for_a_new_graph_compute_it_once() {
    let (server, client) = start_server(service_config()).await;
    // A cyclic graph big enough that the computation takes a while.
    let graph = cycle(300_000);
    let mut tasks = Vec::new();
    for i in 0..8u64 {
        let mut client = client.clone();
        let graph = graph.clone();
        tasks.push(tokio::spawn(async move {
            let responses = evaluate(
                &mut client,
                GraphSource::Graph(graph),
                vec![tokens(i, &[0])],
            )
            .await
            .unwrap();
            responses[0].graph.as_ref().unwrap().graph_id.clone()
        }));
    }
    let mut ids = Vec::new();
    for task in tasks {
        ids.push(
            tokio::time::timeout(PATIENCE * 3, task)
                .await
                .unwrap()
                .unwrap(),
        );
    }
    assert!(ids.windows(2).all(|w| w[0] == w[1]));
    let text = server.service.metrics().encode();
    assert!(
        text.contains("grundy_table_compute_seconds_count 1\n"),
        "one computation for eight requests:\n{text}"
    );
    assert!(text.contains("grundy_requests_total{rpc=\"Evaluate\",code=\"OK\",reason=\"\"} 8"));
}

#[tokio::test]
async fn with_cache_bytes_zero_put_graph_fails_and_inline_graphs_still_evaluate() {
    let (server, mut client) = start_server(ServiceConfig {
        cache_bytes: 0,
        ..service_config()
    })
    .await;
    let status = put(&mut client, chunks(&sample_graph(), 2))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains("cache_bytes = 0"), "{status:?}");
    for _ in 0..2 {
        let responses = evaluate(
            &mut client,
            GraphSource::Graph(sample_graph()),
            vec![tokens(1, &[0, 2])],
        )
        .await
        .unwrap();
        assert_eq!(responses[1].verdicts[0].nim_sum, 3);
    }
    // Nothing is cached: each stream computed the graph again.
    assert_eq!(server.service.registry().len(), 0);
    let text = server.service.metrics().encode();
    assert!(
        text.contains("grundy_table_compute_seconds_count 3\n"),
        "{text}"
    );
    assert!(text.contains("grundy_cache_hits_total 0"), "{text}");
}

/// A graph that failed its work budget is refused at once when sent again, instead of being
/// analysed again to the end of the budget: the registry remembers the failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graph_over_its_budget_is_refused_at_once_the_second_time() {
    let server = serve_service(ServiceConfig {
        limits: Limits {
            cyclic_work_budget: 1 << 30,
            ..Limits::default()
        },
        ..service_config()
    })
    .await;
    let mut client = server.client().await;
    let mut attempt = async || {
        let requests = vec![start(tournament_with_self_loop(1800))];
        let status = client
            .evaluate(tokio_stream::iter(requests))
            .await
            .expect_err("over the budget");
        assert_eq!(
            status.code(),
            Code::ResourceExhausted,
            "{}",
            status.message()
        );
    };
    // Jobs of the analysis pool: a graph's conversion (validating, hashing) and its
    // analysis each take one. The second attempt must not analyse again.
    let analysis_jobs = || {
        let text = server.service.metrics().encode();
        let line = "grundy_work_slot_wait_seconds_count{kind=\"analysis\"} ";
        text.lines()
            .find_map(|l| l.strip_prefix(line))
            .and_then(|count| count.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    attempt().await;
    let first = analysis_jobs();
    attempt().await;
    let second = analysis_jobs() - first;
    assert_eq!(first, 2, "a conversion and an analysis the first time");
    assert_eq!(second, 1, "only the conversion the second time");
}

/// A graph store that holds nothing and whose writes never finish; it tells when a write has
/// begun.
#[derive(Debug, Default)]
struct StalledStore {
    writing: tokio::sync::Notify,
}

impl Backend for StalledStore {
    fn kind(&self) -> &'static str {
        "stalled"
    }

    fn put<'a>(&'a self, _: &'a GraphId, _: EncodedGraph) -> StoreFuture<'a, ()> {
        self.writing.notify_one();
        Box::pin(std::future::pending())
    }

    fn get<'a>(&'a self, _: &'a GraphId) -> StoreFuture<'a, Option<StoredBytes>> {
        Box::pin(async { Ok(None) })
    }
}

/// Starts a `PutGraph` of the sample graph through `client` on a task, and waits until the
/// store is asked to write it (the graph analysed and cached by then).
async fn put_until_the_store_writes(
    server: &TestServer,
    store: &StalledStore,
    mut client: GrundyServiceClient<Channel>,
) -> tokio::task::JoinHandle<Result<PutGraphResponse, Status>> {
    let put = tokio::spawn(async move { put(&mut client, chunks(&sample_graph(), 2)).await });
    tokio::time::timeout(PATIENCE, store.writing.notified())
        .await
        .expect("the store is asked to write the graph");
    assert_eq!(server.service.registry().len(), 1, "analysed and cached");
    put
}

/// A `PutGraph` stopped while the store is still writing the graph (here by the server's
/// shutdown, once its drain time is up; a passed deadline takes the same path) fails and
/// registers nothing: the table the call analysed leaves the cache, as after a store failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_graph_stopped_while_the_store_writes_registers_nothing() {
    let store = Arc::new(StalledStore::default());
    let mut server = serve(ServerConfig {
        service: ServiceConfig {
            store: Some(GraphStore::from_backend(store.clone())),
            ..service_config()
        },
        drain_timeout: Duration::from_millis(100),
        ..ServerConfig::default()
    })
    .await;
    let client = server.client().await;
    let put = put_until_the_store_writes(&server, &store, client).await;
    server.begin_shutdown();
    let status = tokio::time::timeout(PATIENCE, put)
        .await
        .expect("PutGraph ends in time")
        .unwrap()
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert_eq!(status.message(), "server shutting down");
    server.stopped().await.unwrap();
    assert_eq!(server.service.registry().len(), 0);
}

/// A client that leaves while the store is still writing its graph leaves nothing cached
/// either: its call is dropped, not failed, and registers nothing all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_graph_abandoned_while_the_store_writes_registers_nothing() {
    let store = Arc::new(StalledStore::default());
    let (server, client) = start_server(ServiceConfig {
        store: Some(GraphStore::from_backend(store.clone())),
        ..service_config()
    })
    .await;
    let put = put_until_the_store_writes(&server, &store, client).await;
    put.abort();
    assert!(put.await.unwrap_err().is_cancelled());
    server.wait_idle().await;
    assert_eq!(server.service.registry().len(), 0);
}
