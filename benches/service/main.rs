//! `Evaluate` throughput against the transport floor: grundy's real server and a no-op tonic
//! service with the same message shapes ([`noop`]), both on 127.0.0.1 in the same run, under
//! 1, 8 and 64 concurrent streams of packed token queries on a small graph (so that the
//! service is measured, not the engine). Prints queries per second, the no-op's rate over
//! grundy's, and p50/p99 per-batch latency, as Markdown tables, then the median of each
//! configuration's ratios.
//!
//! ```sh
//! cargo bench --bench service                    # 2 rounds, 2 s per measurement
//! cargo bench --bench service -- --seconds 1 --rounds 3 --streams 1,8,64 --batch 4096,64
//! cargo bench --bench service -- --upload 100000000 --rounds 5 --new-graphs 5   # PutGraph
//! cargo bench --bench service -- --json 1000000 --rounds 5   # JSON over HTTP against gRPC
//! ```
//!
//! With `--upload EDGES` it measures `PutGraph` instead ([`upload`]): a random DAG of that
//! many edges uploaded in the CLI's chunks, in MB/s of edge data against the no-op, then
//! `--new-graphs N` graphs grundy has not seen (5 by default; an odd count has a middle one),
//! less their analysis. With `--json QUERIES` it measures `POST /v1:evaluate` (NDJSON)
//! against gRPC `EvaluateBatch` on the same queries instead ([`json`]).
//!
//! Rounds alternate which server goes first, so that a change in the machine's load shows
//! as disagreement between rounds rather than as a bias. Servers and clients run in one
//! process on separate runtimes (the servers' like `grundy-server`'s, one worker per core),
//! with `grundy-server`'s allocator settings.

mod json;
mod load;
mod noop;
mod upload;

use std::sync::Arc;
use std::time::Duration;

use grundy::generate::{Shape, graph};
use grundy::proto;
use grundy::service::{GameService, Metrics, ServerConfig, run_service};
use load::{Load, Measured};

/// The bench's settings, from its command line.
struct Settings {
    seconds: f64,
    rounds: usize,
    streams: Vec<usize>,
    batch_sizes: Vec<usize>,
    window: usize,
    /// Edges of the graph `PutGraph` is measured with, if it is.
    upload_edges: Option<u64>,
    /// Graphs grundy has not seen, uploaded after the registered rounds.
    new_graphs: usize,
    /// Token queries sent through JSON over HTTP and through gRPC, if measured.
    json_queries: Option<usize>,
}

impl Settings {
    fn from_args() -> Self {
        let mut settings = Self {
            seconds: 2.0,
            rounds: 2,
            streams: vec![1, 8, 64],
            batch_sizes: vec![4096, 64],
            window: 4,
            upload_edges: None,
            new_graphs: 5,
            json_queries: None,
        };
        let mut args = std::env::args().skip(1);
        while let Some(flag) = args.next() {
            let mut value = || {
                args.next()
                    .unwrap_or_else(|| panic!("{flag} needs a value"))
            };
            match flag.as_str() {
                "--seconds" => settings.seconds = value().parse().expect("--seconds: a number"),
                "--rounds" => {
                    settings.rounds = value().parse().expect("--rounds: a count");
                    assert!(settings.rounds > 0, "--rounds: at least one");
                }
                "--window" => settings.window = value().parse().expect("--window: a count"),
                "--streams" => settings.streams = list(&value()),
                "--batch" => settings.batch_sizes = list(&value()),
                "--upload" => {
                    settings.upload_edges = Some(value().parse().expect("--upload: an edge count"));
                }
                "--json" => {
                    settings.json_queries = Some(value().parse().expect("--json: a query count"));
                }
                "--new-graphs" => {
                    settings.new_graphs = value().parse().expect("--new-graphs: a count");
                }
                _ => {} // cargo bench passes --bench, and filters; none apply here
            }
        }
        settings
    }
}

fn list(text: &str) -> Vec<usize> {
    text.split(',')
        .map(|n| n.trim().parse().expect("a comma-separated list of counts"))
        .collect()
}

/// The bench graph: a random DAG of 10^3 vertices and 10^4 edges (values below 128, so
/// every nim-sum is one varint byte, as the no-op's).
fn bench_graph() -> proto::Graph {
    let dag = graph(Shape::Dag, 1000, 10_000, 7);
    let offsets = dag.offsets();
    proto::Graph {
        vertex_count: dag.vertex_count(),
        out_degrees: offsets.windows(2).map(|w| w[1] - w[0]).collect(),
        targets: dag.targets().to_vec(),
        split_counts: Vec::new(),
        fixed_targets: Vec::new(),
    }
}

/// One measurement of each server.
struct Pair {
    grundy: Measured,
    noop: Measured,
}

fn main() {
    // As `grundy-server` keeps what it frees (both servers run in this process).
    grundy::allocator::keep_freed_memory(grundy::allocator::SERVICE);
    let settings = Settings::from_args();
    let servers = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("server")
        .build()
        .expect("server runtime");
    let clients = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("client")
        .build()
        .expect("client runtime");
    let graph = bench_graph();
    let vertex_count = graph.vertex_count;
    let (grundy_url, grundy_metrics, _stop_grundy) = servers.block_on(serve_grundy());
    let (noop_address, _stop_noop) = servers.block_on(async {
        let (address, stop) = noop::serve(noop::NoOp { vertex_count }).await;
        (address, stop)
    });
    let noop_url = format!("http://{noop_address}");
    println!("{}", machine());
    if let Some(count) = settings.json_queries {
        clients.block_on(json::measure(&grundy_url, &graph, count, settings.rounds));
        return;
    }
    if let Some(edges) = settings.upload_edges {
        let mut graph = upload::upload_graph(edges);
        clients.block_on(upload::measure(
            &grundy_url,
            &noop_url,
            &graph,
            settings.rounds,
        ));
        clients.block_on(upload::measure_new(
            &grundy_url,
            &grundy_metrics,
            &mut graph,
            settings.new_graphs,
        ));
        return;
    }
    let mut medians = Vec::new();
    for &batch in &settings.batch_sizes {
        let batches = Arc::new(load::batches(16, batch, 10, vertex_count));
        println!(
            "\n### {batch} queries per batch (1-10 tokens each), window {} batches per stream, {} s per measurement\n",
            settings.window, settings.seconds
        );
        println!(
            "| streams | round | grundy qps | no-op qps | no-op / grundy | grundy p50 / p99 | no-op p50 / p99 | response bytes (grundy / no-op) |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        for &streams in &settings.streams {
            let load = Load {
                graph: graph.clone(),
                batches: batches.clone(),
                streams,
                window: settings.window,
                duration: Duration::from_secs_f64(settings.seconds),
            };
            let mut ratios = Vec::with_capacity(settings.rounds);
            for round in 1..=settings.rounds {
                let pair = clients.block_on(measure_pair(&grundy_url, &noop_url, &load, round));
                print_row(streams, round, &pair);
                ratios.push(pair.noop.qps() / pair.grundy.qps());
            }
            medians.push((batch, streams, median(&mut ratios)));
        }
    }
    println!("\n### No-op / grundy, the median of the rounds' ratios\n");
    println!("| batch | streams | no-op / grundy |");
    println!("|---|---|---|");
    for (batch, streams, ratio) in medians {
        println!("| {batch} | {streams} | {ratio:.2}x |");
    }
}

/// The median of `values` (the mean of the middle two of an even count); NaN when empty.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 0 => (values[middle - 1] + values[middle]) / 2.0,
        _ => values[middle],
    }
}

/// Measures both servers under `load`; odd rounds start with grundy, even ones with the no-op.
async fn measure_pair(grundy_url: &str, noop_url: &str, load: &Load, round: usize) -> Pair {
    if round % 2 == 1 {
        let grundy = load::run(grundy_url, load).await;
        let noop = load::run(noop_url, load).await;
        Pair { grundy, noop }
    } else {
        let noop = load::run(noop_url, load).await;
        let grundy = load::run(grundy_url, load).await;
        Pair { grundy, noop }
    }
}

fn print_row(streams: usize, round: usize, pair: &Pair) {
    let (g, n) = (&pair.grundy, &pair.noop);
    let ms = |d: Duration| format!("{:.2}", d.as_secs_f64() * 1e3);
    println!(
        "| {streams} | {round} | {:.2} M | {:.2} M | {:.2}x | {} / {} ms | {} / {} ms | {} / {} |",
        g.qps() / 1e6,
        n.qps() / 1e6,
        n.qps() / g.qps(),
        ms(g.latency(0.5)),
        ms(g.latency(0.99)),
        ms(n.latency(0.5)),
        ms(n.latency(0.99)),
        g.bytes_per_response(),
        n.bytes_per_response(),
    );
}

/// grundy's server with `grundy-server`'s defaults, on a loopback port, and its metrics.
async fn serve_grundy() -> (String, Arc<Metrics>, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let url = format!("http://{}", listener.local_addr().expect("bound address"));
    let config = ServerConfig::default();
    let service = GameService::new(config.service.clone());
    let metrics = service.metrics().clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let shutdown = async {
            let _ = stopped.await;
        };
        run_service(listener, service, &config, shutdown)
            .await
            .expect("grundy serves");
    });
    (url, metrics, stop)
}

/// The machine, for the report: cores, the load average, and the caches.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    format!("{cores} cores; load average {}", load.join(" "))
}
