//! The registry's cache over real gRPC: bounded by bytes and evicting the least recently used,
//! the memory store behind it, single-flight computation, the memory of failed analyses, and a
//! `PutGraph` stopped or abandoned while the store writes.

use crate::support::server::{
    PATIENCE, TestServer, chain, chunks, cycle, evaluate, put, sample_graph, serve, serve_service,
    service_config, start, start_server, tokens, tournament_with_self_loop,
};
use grundy::engine::{self, Limits};
use grundy::proto::{
    self, PutGraphResponse, evaluate_start::GraphSource, grundy_service_client::GrundyServiceClient,
};
use grundy::service::GraphStore;
use grundy::service::MemoryStore;
use grundy::service::{Backend, EncodedGraph, GraphId, StoreFuture, StoredBytes};
use grundy::service::{ServerConfig, ServiceConfig};
use std::sync::Arc;
use std::time::Duration;
use tonic::transport::Channel;
use tonic::{Code, Status};

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
    assert!(text.contains(
        "grundy_requests_total{rpc=\"Evaluate\",code=\"OK\",reason=\"\",protocol=\"grpc\"} 8"
    ));
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
