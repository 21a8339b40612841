//! Timings of the graph registry on a big graph, as docs/operating.md reports them.
//!
//! `cargo run --release --example registry_measure -- [VERTICES]` (default 5 million): starts
//! a server on a loopback port, then times hashing a chain of VERTICES vertices, registering
//! it with `PutGraph` in chunks of 1 MiB, and an `Evaluate` of one query by id (a cache hit)
//! and with the graph inline (upload, validation and hashing, then a cache hit).

use std::time::{Duration, Instant};

use grundy::proto::{
    self, EvaluateRequest, EvaluateStart, PutGraphRequest, Query, QueryBatch,
    evaluate_request::Payload, evaluate_start::GraphSource,
    grundy_service_client::GrundyServiceClient, query::Position,
};
use grundy::service::{self, ServerConfig};
use tonic::transport::Channel;

/// Entries per list in one `PutGraph` chunk: 250 000 targets of up to 4 bytes, about 1 MiB.
const CHUNK_ENTRIES: usize = 250_000;

#[tokio::main]
async fn main() {
    let vertices: u32 = std::env::args()
        .nth(1)
        .map_or(5_000_000, |a| a.parse().expect("VERTICES"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("bound");
    tokio::spawn(service::run(
        listener,
        ServerConfig::default(),
        std::future::pending(),
    ));
    let mut client = GrundyServiceClient::connect(format!("http://{address}"))
        .await
        .expect("the server accepts connections");

    let graph = proto::Graph {
        vertex_count: vertices,
        out_degrees: (0..vertices).map(|v| u32::from(v + 1 < vertices)).collect(),
        targets: (1..vertices).collect(),
        split_counts: vec![],
        fixed_targets: vec![],
    };
    let game = grundy::service::game_from_proto(graph.clone()).expect("a valid graph");
    let started = Instant::now();
    let graph_id = grundy::service::graph_id_sync(&game);
    report("graph_id_sync", started.elapsed());

    let chunks = chunks(&graph);
    let count = chunks.len();
    let started = Instant::now();
    let registered = client
        .put_graph(tokio_stream::iter(chunks))
        .await
        .expect("PutGraph")
        .into_inner();
    report(&format!("PutGraph in {count} chunks"), started.elapsed());
    assert_eq!(registered.graph_id, graph_id);
    let table_bytes = registered.graph.map_or(0, |summary| summary.table_bytes);
    println!("{:<40} {table_bytes} bytes", "table");

    let started = Instant::now();
    evaluate(&mut client, GraphSource::GraphId(graph_id)).await;
    report("Evaluate by id (cache hit)", started.elapsed());
    let started = Instant::now();
    evaluate(&mut client, GraphSource::Graph(graph)).await;
    report("Evaluate inline (upload, hash, hit)", started.elapsed());
}

fn report(what: &str, elapsed: Duration) {
    println!("{what:<40} {:.1} ms", elapsed.as_secs_f64() * 1e3);
}

/// `graph` as `PutGraph` chunks of at most [`CHUNK_ENTRIES`] entries per list.
fn chunks(graph: &proto::Graph) -> Vec<PutGraphRequest> {
    let degrees: Vec<&[u32]> = graph.out_degrees.chunks(CHUNK_ENTRIES).collect();
    let targets: Vec<&[u32]> = graph.targets.chunks(CHUNK_ENTRIES).collect();
    (0..degrees.len().max(targets.len()).max(1))
        .map(|i| PutGraphRequest {
            chunk: Some(proto::Graph {
                vertex_count: if i == 0 { graph.vertex_count } else { 0 },
                out_degrees: degrees.get(i).map_or_else(Vec::new, |d| d.to_vec()),
                targets: targets.get(i).map_or_else(Vec::new, |t| t.to_vec()),
                split_counts: vec![],
                fixed_targets: vec![],
            }),
        })
        .collect()
}

/// One `Evaluate` stream of one query, read to its end.
async fn evaluate(client: &mut GrundyServiceClient<Channel>, source: GraphSource) {
    let requests = vec![
        EvaluateRequest {
            payload: Some(Payload::Start(EvaluateStart {
                graph_source: Some(source),
                explain: false,
                analysis: None,
                play_convention: 0,
            })),
        },
        EvaluateRequest {
            payload: Some(Payload::Queries(QueryBatch {
                queries: vec![Query {
                    id: 1,
                    position: Some(Position::Tokens(proto::TokenPosition { vertices: vec![0] })),
                }],
                packed_tokens: None,
            })),
        },
    ];
    let mut stream = client
        .evaluate(tokio_stream::iter(requests))
        .await
        .expect("Evaluate")
        .into_inner();
    while stream.message().await.expect("a response").is_some() {}
}
