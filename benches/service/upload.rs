//! `PutGraph` throughput: one large graph uploaded in chunks exactly as the CLI uploads it
//! ([`grundy::client::put_graph`], 4 MiB chunks), to grundy and to the no-op service (which
//! reads the chunks and nothing more), in turns. grundy analyses the graph on its first
//! upload only; every later upload of the same graph is received, decoded, assembled,
//! validated and hashed for its id, then found registered: that is what is timed against the
//! no-op, and reported in MB/s of edge data (four bytes an edge).

use std::sync::Arc;
use std::time::{Duration, Instant};

use grundy::client::{ConnectionArgs, GrundyClient, connect, put_graph};
use grundy::generate::{Shape, graph};
use grundy::proto;

/// Chunk size of the CLI's uploads (half the message limit, at most 4 MiB).
const CHUNK_BYTES: usize = 4 << 20;
/// The message limit both servers and the client are given.
const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// A random DAG of `edges` edges on `edges / 10` vertices, as the judge files' graphs.
pub fn upload_graph(edges: u64) -> Arc<proto::Graph> {
    let vertices = u32::try_from((edges / 10).max(2)).expect("at most 4 * 10^10 edges");
    let dag = graph(Shape::Dag, vertices, edges, 14);
    let offsets = dag.offsets();
    Arc::new(proto::Graph {
        vertex_count: dag.vertex_count(),
        out_degrees: offsets.windows(2).map(|w| w[1] - w[0]).collect(),
        targets: dag.targets().to_vec(),
        split_counts: Vec::new(),
        fixed_targets: Vec::new(),
    })
}

/// Uploads `graph` once through `client`; how long it took.
async fn upload_once(client: &mut GrundyClient, graph: &Arc<proto::Graph>) -> Duration {
    let started = Instant::now();
    put_graph(client, graph.clone(), CHUNK_BYTES)
        .await
        .expect("PutGraph succeeds");
    started.elapsed()
}

async fn client(url: &str) -> GrundyClient {
    connect(url, &ConnectionArgs::default(), MAX_MESSAGE_BYTES)
        .await
        .expect("connect to the bench server")
}

/// Prints the first upload to grundy (with its analysis), then `rounds` rounds of one upload
/// to each server, alternating which goes first, and the medians.
pub async fn measure(grundy_url: &str, noop_url: &str, graph: &Arc<proto::Graph>, rounds: usize) {
    let edges = graph.targets.len();
    let megabytes = 4.0 * edges as f64 / 1e6;
    let rate = |elapsed: Duration| megabytes / elapsed.as_secs_f64();
    let mut grundy = client(grundy_url).await;
    let mut noop = client(noop_url).await;
    println!(
        "\n### PutGraph: {} vertices, {edges} edges ({megabytes:.0} MB of edge data), {} MiB chunks\n",
        graph.vertex_count,
        CHUNK_BYTES >> 20
    );
    let first = upload_once(&mut grundy, graph).await;
    println!(
        "First upload to grundy, with the analysis: {:.3} s ({:.0} MB/s)\n",
        first.as_secs_f64(),
        rate(first)
    );
    println!("| round | grundy (registered) | no-op | grundy MB/s | no-op MB/s | grundy / no-op |");
    println!("|---|---|---|---|---|---|");
    let mut ratios = Vec::with_capacity(rounds);
    let mut rates = Vec::with_capacity(rounds);
    for round in 1..=rounds {
        let (g, n) = if round % 2 == 1 {
            let g = upload_once(&mut grundy, graph).await;
            (g, upload_once(&mut noop, graph).await)
        } else {
            let n = upload_once(&mut noop, graph).await;
            (upload_once(&mut grundy, graph).await, n)
        };
        let ratio = g.as_secs_f64() / n.as_secs_f64();
        println!(
            "| {round} | {:.3} s | {:.3} s | {:.0} | {:.0} | {ratio:.2}x |",
            g.as_secs_f64(),
            n.as_secs_f64(),
            rate(g),
            rate(n)
        );
        ratios.push(ratio);
        rates.push(rate(g));
    }
    println!(
        "\nMedians: grundy {:.0} MB/s of edge data, {:.2}x the no-op's time",
        median(&mut rates),
        median(&mut ratios)
    );
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
