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
use grundy::service::Metrics;

use crate::median;

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
    // Rates of the rounds where grundy's upload came right after its previous one, and of
    // those where the no-op's came between. On a virtual machine that hands freed memory
    // back to its host, whether an upload's graph lands on memory the host must back afresh
    // depends on when the last one was freed, and the two kinds of round can differ twofold
    // (which kind is slower is the kernel's timing).
    let (mut back_to_back, mut after_pause) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let (g, n) = if round % 2 == 1 {
            let g = upload_once(&mut grundy, graph).await;
            back_to_back.push(rate(g));
            (g, upload_once(&mut noop, graph).await)
        } else {
            let n = upload_once(&mut noop, graph).await;
            let g = upload_once(&mut grundy, graph).await;
            after_pause.push(rate(g));
            (g, n)
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
    println!(
        "grundy right after its previous upload (odd rounds) {:.0} MB/s, after the no-op's (even rounds) {:.0} MB/s",
        median(&mut back_to_back),
        median(&mut after_pause)
    );
}

/// Uploads `count` graphs grundy has not seen: `graph` with one isolated vertex more each
/// time, so each has an id of its own and the same edges. Each is timed whole, and less the
/// analysis the server's `grundy_table_compute_seconds` recorded for it: the upload,
/// decoding, assembly, validation and id of a new graph, into memory it has not used before.
pub async fn measure_new(
    grundy_url: &str,
    metrics: &Metrics,
    graph: &mut Arc<proto::Graph>,
    count: usize,
) {
    if count == 0 {
        return;
    }
    let megabytes = 4.0 * graph.targets.len() as f64 / 1e6;
    let mut client = client(grundy_url).await;
    println!("\n### PutGraph of graphs grundy has not seen\n");
    println!(
        "| graph | PutGraph | of it the analysis | the rest | MB/s of edge data without the analysis |"
    );
    println!("|---|---|---|---|---|");
    let mut rates = Vec::with_capacity(count);
    for round in 1..=count {
        let new = Arc::get_mut(graph).expect("no upload holds the graph");
        new.vertex_count += 1;
        new.out_degrees.push(0);
        let analysed_before = analysis_seconds(metrics);
        let whole = upload_once(&mut client, graph).await.as_secs_f64();
        let analysis = analysis_seconds(metrics) - analysed_before;
        let rest = whole - analysis;
        println!(
            "| {round} | {whole:.3} s | {analysis:.3} s | {rest:.3} s | {:.0} |",
            megabytes / rest
        );
        rates.push(megabytes / rest);
    }
    println!(
        "\nMedian: {:.0} MB/s of edge data without the analysis",
        median(&mut rates)
    );
}

/// The seconds grundy's analyses have taken so far (`grundy_table_compute_seconds_sum`).
fn analysis_seconds(metrics: &Metrics) -> f64 {
    metrics
        .encode()
        .lines()
        .find_map(|line| line.strip_prefix("grundy_table_compute_seconds_sum "))
        .and_then(|value| value.trim().parse().ok())
        .expect("grundy's metrics have the analysis time")
}
