//! Hostile clients of a real `grundy-server`, for `scripts/load-fault.sh`: each attack
//! provokes one class of defect the service once had (the regression tests in `tests/service/`
//! provoke the same in-process), measures the server from outside (CPU time and memory from
//! `/proc`, gauges from its metrics endpoint) and prints one line of `key=value` facts, which
//! the script judges. Loopback only.
//!
//! `hostile_client ATTACK SERVER_ADDRESS SERVER_PID [METRICS_ADDRESS]`, ATTACK one of the
//! names in `main`; an attack that cannot run prints `error=...` and exits 2.

use std::future::poll_fn;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use bytes::Bytes;
use grundy::generate::{Shape, graph};
use grundy::proto::{
    self, AnalysisOptions, EvaluateRequest, EvaluateStart, Query, QueryBatch, Verdict,
    evaluate_request::Payload, evaluate_start::GraphSource,
    grundy_service_client::GrundyServiceClient, query::Position,
};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tonic::transport::Channel;
use tonic::{Request, Streaming};

/// The server under attack.
struct Target {
    server: String,
    pid: u32,
    metrics: Option<String>,
}

/// The gauge of the search jobs running.
const SEARCHES: &str = r#"grundy_work_jobs_running{kind="search"}"#;

/// Bound on every wait of an attack.
const PATIENCE: Duration = Duration::from_secs(30);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(attack), Some(server), Some(pid)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("usage: hostile_client ATTACK SERVER_ADDRESS SERVER_PID [METRICS_ADDRESS]");
        std::process::exit(2);
    };
    let pid = pid.parse().expect("SERVER_PID");
    let t = Target {
        server: server.clone(),
        pid,
        metrics: args.get(3).cloned(),
    };
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let result = runtime.block_on(async {
        match attack.as_str() {
            "huge-values" => huge_values(&t).await,
            "wide-position" => wide_position(&t).await,
            // 26 s of search when only positions were counted.
            "budget-sum-dag" => budget_sum(&t, Shape::Dag, 1_000_000, 7).await,
            // Sparse: with 10^6 edges almost every position draws, which needs no search.
            "budget-sum-cyclic" => budget_sum(&t, Shape::Cyclic, 200_000, 5).await,
            "cancelled-search" => abandoned_search(&t, None).await,
            "deadline-search" => abandoned_search(&t, Some(Duration::from_secs(2))).await,
            "never-reads" => never_reads(&t).await,
            "stalled-unary" => stalled_unary(&t).await,
            "render-latency" => render_latency(&t).await,
            "stalled-render" => stalled_render(&t).await,
            "gzip-verdict" => gzip_verdict(&t).await,
            "starvation" => starvation(&t).await,
            _ => Err(anyhow!("unknown attack {attack}")),
        }
    });
    match result {
        Ok(line) => println!("{line}"),
        Err(e) => {
            println!(
                "error={}",
                format!("{e:#}").replace(char::is_whitespace, "_")
            );
            std::process::exit(2);
        }
    }
}

// --- the server, seen from outside ----------------------------------------------------------

/// The server's CPU time so far (user and system) in ms: `/proc/PID/stat` counts it in ticks
/// of 10 ms (USER_HZ, 100 on Linux); utime and stime are the 12th and 13th fields after the
/// command name (which may hold spaces).
fn cpu_ms(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields = stat.rsplit_once(')').map_or("", |(_, fields)| fields);
    let ticks = fields.split_whitespace().skip(11).take(2);
    ticks.filter_map(|f| f.parse::<u64>().ok()).sum::<u64>() * 10
}

/// A figure of the server's `/proc/PID/status` in KiB: `VmRSS` now, `VmHWM` its peak.
fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|line| line.starts_with(field));
    line.and_then(|line| line.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// Starts the server's peak (`VmHWM`) again from its resident memory now; returns that.
fn reset_peak(pid: u32) -> Result<u64> {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").context("resetting VmHWM")?;
    Ok(memory_kib(pid, "VmRSS"))
}

/// How long after `since` the server's resident memory was back within `slack` KiB of `base`
/// (-1: not within [`PATIENCE`]).
async fn back_to(pid: u32, base: u64, slack: u64, since: Instant) -> i128 {
    while since.elapsed() < PATIENCE {
        if memory_kib(pid, "VmRSS") <= base + slack {
            return since.elapsed().as_millis() as i128;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    -1
}

/// The value of one series (its name and labels) on the server's metrics page.
fn gauge(t: &Target, series: &str) -> Result<f64> {
    let address = t
        .metrics
        .as_deref()
        .context("this attack needs METRICS_ADDRESS")?;
    let mut stream = std::net::TcpStream::connect(address)?;
    stream.set_read_timeout(Some(PATIENCE))?;
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )?;
    let mut page = String::new();
    stream.read_to_string(&mut page)?;
    let line = page
        .lines()
        .find(|line| line.starts_with(&format!("{series} ")));
    let value = line.and_then(|line| line.rsplit(' ').next()?.parse().ok());
    value.with_context(|| format!("no {series} on the metrics page"))
}

/// Waits (at most [`PATIENCE`]) until the gauge `series` is at least `least`.
async fn wait_for_gauge(t: &Target, series: &str, least: f64) -> Result<()> {
    let since = Instant::now();
    while gauge(t, series)? < least {
        anyhow::ensure!(since.elapsed() < PATIENCE, "{series} never reached {least}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(())
}

async fn within<F: std::future::Future>(future: F) -> Result<F::Output> {
    let waited = tokio::time::timeout(PATIENCE, future).await;
    waited.map_err(|_| anyhow!("no answer within {PATIENCE:?}"))
}

// --- requests -------------------------------------------------------------------------------

async fn connect(t: &Target) -> Result<GrundyServiceClient<Channel>> {
    Ok(GrundyServiceClient::connect(format!("http://{}", t.server)).await?)
}

/// A generated graph in its wire form.
fn wire(shape: Shape, vertices: u32, edges: u64, seed: u64) -> proto::Graph {
    let digraph = graph(shape, vertices, edges, seed);
    let out_degrees = digraph.offsets().windows(2).map(|w| w[1] - w[0]).collect();
    let targets = digraph.targets().to_vec();
    proto::Graph {
        vertex_count: vertices,
        out_degrees,
        targets,
        ..Default::default()
    }
}

/// A graph where each vertex `v` points at `v + step` for each step that stays in range.
fn steps(vertices: u32, steps: &[u32]) -> proto::Graph {
    let mut graph = proto::Graph {
        vertex_count: vertices,
        ..Default::default()
    };
    for v in 0..vertices {
        let before = graph.targets.len();
        graph
            .targets
            .extend(steps.iter().map(|s| v + s).filter(|&w| w < vertices));
        graph
            .out_degrees
            .push((graph.targets.len() - before) as u32);
    }
    graph
}

fn opening(graph: proto::Graph, analysis: Option<AnalysisOptions>) -> EvaluateStart {
    let graph_source = Some(GraphSource::Graph(graph));
    EvaluateStart {
        graph_source,
        explain: false,
        analysis,
    }
}

fn start(graph: proto::Graph, analysis: Option<AnalysisOptions>) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Start(opening(graph, analysis))),
    }
}

fn tokens(id: u64, vertices: &[u32]) -> Query {
    let position = Position::Tokens(proto::TokenPosition {
        vertices: vertices.to_vec(),
    });
    Query {
        id,
        position: Some(position),
    }
}

fn batch(queries: Vec<Query>, packed_tokens: Option<proto::PackedTokenQueries>) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries,
            packed_tokens,
        })),
    }
}

/// A batch of packed queries of `tokens` tokens each, from id 0.
fn packed(tokens: u32, vertices: Vec<u32>) -> EvaluateRequest {
    let token_counts = vec![tokens; vertices.len() / tokens as usize];
    batch(
        vec![],
        Some(proto::PackedTokenQueries {
            first_query_id: 0,
            token_counts,
            vertices,
        }),
    )
}

type Stream = (
    mpsc::Sender<EvaluateRequest>,
    Streaming<proto::EvaluateResponse>,
);

/// An `Evaluate` stream of `requests` (more may be sent), past its summary.
async fn open(
    client: &mut GrundyServiceClient<Channel>,
    deadline: Option<Duration>,
    requests: Vec<EvaluateRequest>,
) -> Result<Stream> {
    let (tx, rx) = mpsc::channel(16);
    for message in requests {
        tx.send(message).await?;
    }
    let mut request = Request::new(tokio_stream::wrappers::ReceiverStream::new(rx));
    if let Some(deadline) = deadline {
        request.set_timeout(deadline);
    }
    let mut stream = within(client.evaluate(request)).await??.into_inner();
    within(stream.message()).await??.context("no summary")?;
    Ok((tx, stream))
}

/// The next verdict of `stream`, or the status that ended it.
async fn next_verdict(stream: &mut Streaming<proto::EvaluateResponse>) -> Result<Verdict> {
    loop {
        let message = within(stream.message()).await?;
        let message = message.map_err(|s| anyhow!("{:?}: {}", s.code(), s.message()))?;
        let verdicts = message.context("the stream ended early")?.verdicts;
        if let Some(verdict) = verdicts.into_iter().next() {
            return Ok(verdict);
        }
    }
}

/// How a verdict's remoteness came out: the number, or why it is absent.
fn remoteness(verdict: &Verdict) -> String {
    let unknown = || format!("{:?}", verdict.remoteness_unknown()).to_lowercase();
    verdict.remoteness.map_or_else(unknown, |r| r.to_string())
}

/// The milliseconds of one small `EvaluateBatch` call, read to its end.
async fn small_call(client: &mut GrundyServiceClient<Channel>) -> Result<f64> {
    let start = Some(opening(steps(4, &[1, 2]), None));
    let request = proto::EvaluateBatchRequest {
        start,
        queries: vec![tokens(1, &[0])],
    };
    let began = Instant::now();
    let mut stream = within(client.evaluate_batch(request)).await??.into_inner();
    while within(stream.message()).await??.is_some() {}
    Ok(began.elapsed().as_secs_f64() * 1e3)
}

/// The status of a raw HTTP/2 call, `CODE:MESSAGE`, from the headers of an answer of trailers
/// only or from its trailers.
async fn raw_status(response: h2::client::ResponseFuture) -> Result<String> {
    let (parts, mut body) = response.await?.into_parts();
    let mut status = parts.headers;
    if !status.contains_key("grpc-status") {
        while let Some(data) = body.data().await {
            let _ = body.flow_control().release_capacity(data?.len());
        }
        status = body.trailers().await?.unwrap_or_default();
    }
    let field = |name| status.get(name).and_then(|v| v.to_str().ok()).unwrap_or("");
    Ok(format!(
        "{}:{}",
        field("grpc-status"),
        field("grpc-message")
    ))
}

/// Sends `data` on `send` as the server's flow control lets it in, without ending the stream.
async fn send_all(send: &mut h2::SendStream<Bytes>, mut data: Bytes) -> Result<()> {
    while !data.is_empty() {
        send.reserve_capacity(data.len());
        let granted = poll_fn(|cx| send.poll_capacity(cx))
            .await
            .context("stream closed")??;
        send.send_data(data.split_to(granted.min(data.len())), false)?;
    }
    Ok(())
}

/// The head of `POST /render` with a body of `length` bytes.
fn render_head(address: &str, length: usize) -> String {
    format!(
        "POST /render HTTP/1.1\r\nHost: {address}\r\nContent-Length: {length}\r\n\
         Connection: close\r\n\r\n"
    )
}

/// The status code of an HTTP/1.1 answer.
fn http_status(response: &[u8]) -> Option<u16> {
    std::str::from_utf8(response.get(9..12)?).ok()?.parse().ok()
}

// --- the attacks ----------------------------------------------------------------------------

/// Values whose token counts overflow u64, or would size terabytes, each in a batch of its own
/// on an analysis stream of a 3-vertex chain, then a usual query: all answered, the stream
/// going on (such values once aborted the server with a 4 TB allocation).
async fn huge_values(t: &Target) -> Result<String> {
    let mut client = connect(t).await?;
    let opening = start(steps(3, &[1]), Some(AnalysisOptions::default()));
    let (tx, mut stream) = open(&mut client, None, vec![opening]).await?;
    let sparse = |values: Vec<u64>| {
        Position::SparseValues(proto::SparseValues {
            vertices: vec![0, 1],
            values,
        })
    };
    let positions = [
        sparse(vec![1 << 40, u64::MAX - (1 << 40) + 2]),
        sparse(vec![1 << 63, 1 << 63]),
        Position::DenseValues(proto::DenseValues {
            values: vec![u64::MAX, 2, 0],
        }),
        Position::Tokens(proto::TokenPosition {
            vertices: vec![0, 1],
        }),
    ];
    let (mut answered, mut in_band_errors, mut last) = (0, 0, String::new());
    for (id, position) in positions.into_iter().enumerate() {
        tx.send(batch(
            vec![Query {
                id: id as u64,
                position: Some(position),
            }],
            None,
        ))
        .await?;
        let verdict = next_verdict(&mut stream).await?;
        answered += 1;
        in_band_errors += usize::from(verdict.error.is_some());
        last = remoteness(&verdict);
    }
    Ok(format!(
        "answered={answered} in_band_errors={in_band_errors} last_remoteness={last}"
    ))
}

/// One packed query of 12,000 tokens on a DAG of out-degree 8 (96,000 moves, each to a
/// position of 48 KB), one move listed, a position budget of 1: the server's peak memory
/// growth while it answers (building every move's position took 4.6 GB).
async fn wide_position(t: &Target) -> Result<String> {
    const WIDE: u32 = 12_000;
    let mut client = connect(t).await?;
    let graph = steps(WIDE + 8, &[1, 2, 3, 4, 5, 6, 7, 8]);
    let analysis = Some(AnalysisOptions {
        max_moves: 1,
        position_budget: 1,
    });
    let (tx, mut stream) = open(&mut client, None, vec![start(graph, analysis)]).await?;
    let base = reset_peak(t.pid)?;
    tx.send(packed(WIDE, (0..WIDE).collect())).await?;
    let verdict = next_verdict(&mut stream).await?;
    let growth = memory_kib(t.pid, "VmHWM").saturating_sub(base);
    let (moves, omitted) = (verdict.moves.len(), verdict.moves_omitted);
    let remoteness = remoteness(&verdict);
    Ok(format!(
        "peak_growth_kib={growth} moves={moves} moves_omitted={omitted} remoteness={remoteness}"
    ))
}

/// A sum of two tokens on a random graph of 10^5 vertices at the server's budgets: its CPU
/// time for the query, from after the graph's analysis to the verdict.
async fn budget_sum(t: &Target, shape: Shape, edges: u64, seed: u64) -> Result<String> {
    let mut client = connect(t).await?;
    let opening = start(
        wire(shape, 100_000, edges, seed),
        Some(AnalysisOptions::default()),
    );
    let (tx, mut stream) = open(&mut client, None, vec![opening]).await?;
    let before = cpu_ms(t.pid);
    tx.send(batch(vec![tokens(0, &[0, 1])], None)).await?;
    let verdict = next_verdict(&mut stream).await?;
    let cpu = cpu_ms(t.pid) - before;
    Ok(format!("cpu_ms={cpu} remoteness={}", remoteness(&verdict)))
}

/// The search of a sum of two tokens on a random DAG of 10^5 vertices, on a server whose
/// budgets let it run for hours, whose client cancels after 0.5 s (or whose `deadline`
/// passes): the search jobs running before the end, the server's CPU time while it searched,
/// and over 400 ms from 100 ms after the end (a search once ran on for 15-65 s for nobody).
async fn abandoned_search(t: &Target, deadline: Option<Duration>) -> Result<String> {
    let mut client = connect(t).await?;
    let graph = wire(Shape::Dag, 100_000, 1_000_000, 7);
    let query = batch(vec![tokens(0, &[0, 1])], None);
    let requests = vec![start(graph, Some(AnalysisOptions::default())), query];
    let (tx, mut stream) = open(&mut client, deadline, requests).await?;
    let (searching, cpu_before) = (Instant::now(), cpu_ms(t.pid));
    let before_the_end = if deadline.is_some() { 300 } else { 500 };
    tokio::time::sleep(Duration::from_millis(before_the_end)).await;
    let searches = gauge(t, SEARCHES)?;
    let mut ended_by = String::from("cancel");
    if deadline.is_some() {
        ended_by = match within(stream.message()).await? {
            Err(status) => format!("{:?}", status.code()),
            Ok(_) => "an_answer".into(),
        };
    }
    let (busy, busy_wall) = (cpu_ms(t.pid) - cpu_before, searching.elapsed().as_millis());
    drop((tx, stream, client));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let after = cpu_ms(t.pid);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let after = cpu_ms(t.pid) - after;
    Ok(format!(
        "ended_by={ended_by} searches={searches} busy_cpu_ms={busy} busy_wall_ms={busy_wall} \
         after_cpu_ms={after} after_wall_ms=400"
    ))
}

/// 300,000 analysed one-token queries in one packed batch on a stream whose client never
/// reads: the server's peak memory growth over 3 s (it once held every verdict: +1.2 GB for
/// these), and a small call of another client meanwhile.
async fn never_reads(t: &Target) -> Result<String> {
    let mut client = connect(t).await?;
    let opening = start(steps(5, &[1, 2]), Some(AnalysisOptions::default()));
    let requests = [opening, packed(1, (0..300_000).map(|i| i % 5).collect())];
    let base = reset_peak(t.pid)?;
    let unread = within(client.evaluate(tokio_stream::iter(requests))).await??;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let side = small_call(&mut connect(t).await?).await?;
    let growth = memory_kib(t.pid, "VmHWM").saturating_sub(base);
    drop(unread);
    Ok(format!("peak_growth_kib={growth} side_call_ms={side:.1}"))
}

/// 8 `EvaluateBatch` messages of 64 MiB, each on a connection of its own, sent but for their
/// last 10 bytes: the slots they hold (the in-flight gauge), the memory, their answers, and
/// when the memory is back within 16 MiB of where it was (they once held 528 MB, and no slot,
/// for as long as their connections stayed open).
async fn stalled_unary(t: &Target) -> Result<String> {
    // The opening, then one query of 64 Ki tokens again and again (the encodings of the
    // elements of a repeated field concatenate).
    let query = vec![tokens(0, &[0; 1 << 16])];
    let query = proto::EvaluateBatchRequest {
        start: None,
        queries: query,
    }
    .encode_to_vec();
    let start = Some(opening(steps(4, &[1, 2]), None));
    let mut message = proto::EvaluateBatchRequest {
        start,
        queries: vec![],
    }
    .encode_to_vec();
    while message.len() + query.len() <= 64 << 20 {
        message.extend_from_slice(&query);
    }
    let mut frame = vec![0];
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(&message[..message.len() - 10]);
    let frame = Bytes::from(frame);
    let base = reset_peak(t.pid)?;
    let (mut answers, mut senders) = (Vec::new(), Vec::new());
    for _ in 0..8 {
        let tcp = tokio::net::TcpStream::connect(&t.server).await?;
        let (mut h2, connection) = h2::client::handshake(tcp).await?;
        tokio::spawn(connection);
        let uri = format!("http://{}/grundy.v1.GrundyService/EvaluateBatch", t.server);
        let request = http::Request::post(uri).header("content-type", "application/grpc");
        let (response, mut send) =
            h2.send_request(request.header("te", "trailers").body(())?, false)?;
        answers.push(tokio::spawn(raw_status(response)));
        // Each stream is kept open (not reset) until its answer: the task returns it.
        let frame = frame.clone();
        senders.push(tokio::spawn(async move {
            send_all(&mut send, frame).await.map(|()| send)
        }));
    }
    let mut streams = Vec::new();
    for sender in senders {
        streams.push(within(sender).await???);
    }
    let sent = Instant::now();
    let inflight = gauge(t, "grundy_inflight_streams")?;
    let mut ended = 0;
    for answer in answers {
        let status = within(answer).await???;
        ended += usize::from(status.starts_with("4:") && status.contains("start_timeout"));
    }
    let answered = sent.elapsed().as_millis();
    let held = memory_kib(t.pid, "VmHWM").saturating_sub(base);
    let back = back_to(t.pid, base, 16 << 10, sent).await;
    let after = memory_kib(t.pid, "VmRSS").saturating_sub(base);
    drop(streams);
    Ok(format!(
        "held_kib={held} inflight={inflight} start_timeout_answers={ended} \
         answered_after_ms={answered} back_after_ms={back} growth_after_kib={after}"
    ))
}

/// The median latency of 20 small gRPC calls, idle and while four drawings of the largest
/// graph `POST /render` draws (300 vertices) run: drawn on a runtime thread, they held every
/// call of the server for seconds.
async fn render_latency(t: &Target) -> Result<String> {
    async fn twenty_calls(client: &mut GrundyServiceClient<Channel>) -> Result<f64> {
        let mut samples = Vec::new();
        for _ in 0..20 {
            samples.push(small_call(client).await?);
        }
        samples.sort_by(f64::total_cmp);
        Ok(samples[10])
    }
    let mut client = connect(t).await?;
    twenty_calls(&mut client).await?; // the graph cached, the connection warm
    let idle = twenty_calls(&mut client).await?;
    let drawn = wire(Shape::Cyclic, 300, 2900, 7);
    let values = vec![serde_json::json!({ "finite": 0 }); 300];
    let body = serde_json::json!({
        "out_degrees": drawn.out_degrees,
        "targets": drawn.targets,
        "values": values,
    })
    .to_string();
    let request = render_head(&t.server, body.len()) + &body;
    let mut drawings = Vec::new();
    for _ in 0..4 {
        let (address, request) = (t.server.clone(), request.clone());
        drawings.push(tokio::spawn(async move {
            let mut stream = tokio::net::TcpStream::connect(&address).await?;
            stream.write_all(request.as_bytes()).await?;
            let mut response = Vec::new();
            within(stream.read_to_end(&mut response)).await??;
            anyhow::Ok(http_status(&response).unwrap_or(0))
        }));
    }
    let drawing = r#"grundy_work_jobs_running{kind="render"}"#;
    wait_for_gauge(t, drawing, 2.0).await?;
    let loaded = twenty_calls(&mut client).await?;
    let drawing_after = gauge(t, drawing)?;
    let mut statuses = Vec::new();
    for drawing in drawings {
        statuses.push(within(drawing).await???.to_string());
    }
    let statuses = statuses.join(",");
    Ok(format!(
        "idle_ms={idle:.2} loaded_ms={loaded:.2} drawing_after={drawing_after} statuses={statuses}"
    ))
}

/// 200 `POST /render` bodies of 1 MiB sent but for their last byte (they once held 200 MiB
/// for as long as their connections stayed open): the server's peak memory growth, a small
/// gRPC call meanwhile, the answers and when the last came, and the memory 200 ms later.
async fn stalled_render(t: &Target) -> Result<String> {
    const BODY: usize = 1 << 20;
    let base = reset_peak(t.pid)?;
    let (sent, mut all_sent) = mpsc::channel(200);
    let mut clients = Vec::new();
    for _ in 0..200 {
        let (address, sent) = (t.server.clone(), sent.clone());
        clients.push(tokio::spawn(async move {
            let stream = tokio::net::TcpStream::connect(&address).await?;
            let (mut reader, mut writer) = stream.into_split();
            // Written while the answer is read: a body refused at once is answered before it
            // is sent, and its writes fail.
            let writing = async {
                let _ = writer
                    .write_all(render_head(&address, BODY).as_bytes())
                    .await;
                let _ = writer.write_all(&vec![b' '; BODY - 1]).await;
                let _ = sent.send(()).await;
            };
            let mut response = Vec::new();
            let (_, read) = tokio::join!(writing, within(reader.read_to_end(&mut response)));
            read?.ok();
            anyhow::Ok(http_status(&response).map_or("reset".into(), |code| code.to_string()))
        }));
    }
    for _ in 0..200 {
        within(all_sent.recv()).await?;
    }
    let stalled = Instant::now();
    let side = small_call(&mut connect(t).await?).await?;
    let mut statuses = std::collections::BTreeMap::new();
    for client in clients {
        *statuses.entry(within(client).await???).or_insert(0) += 1;
    }
    let answered = stalled.elapsed().as_millis();
    let held = memory_kib(t.pid, "VmHWM").saturating_sub(base);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = memory_kib(t.pid, "VmRSS").saturating_sub(base);
    let statuses: Vec<String> = statuses
        .iter()
        .map(|(code, n)| format!("{code}x{n}"))
        .collect();
    Ok(format!(
        "peak_growth_kib={held} side_call_ms={side:.1} statuses={} answered_after_ms={answered} \
         growth_after_kib={after}",
        statuses.join(",")
    ))
}

/// A verdict of 256 analysed moves (one token on a vertex of 256 out-edges) for a client that
/// accepts gzip, under a message limit of 1 KiB on both sides: the moves listed and omitted,
/// and the stream's status (such a verdict went out whole, and the client refused it once
/// inflated: "Received message larger than max").
async fn gzip_verdict(t: &Target) -> Result<String> {
    let client = connect(t)
        .await?
        .accept_compressed(tonic::codec::CompressionEncoding::Gzip);
    let mut client = client.max_decoding_message_size(1024);
    let out_degrees = std::iter::once(256).chain([0; 256]).collect();
    let star = proto::Graph {
        vertex_count: 257,
        out_degrees,
        targets: (1..=256).collect(),
        ..Default::default()
    };
    let query = batch(vec![tokens(0, &[0])], None);
    let requests = vec![start(star, Some(AnalysisOptions::default())), query];
    let (mut moves, mut omitted, mut status) = (0, 0, String::from("OK"));
    match open(&mut client, None, requests).await {
        Err(e) => status = format!("{e:#}"),
        Ok((tx, mut stream)) => {
            drop(tx);
            loop {
                match within(stream.message()).await? {
                    Ok(Some(answer)) => {
                        for verdict in answer.verdicts {
                            moves += verdict.moves.len() as u64;
                            omitted += verdict.moves_omitted;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        status = format!("{:?}:{}", e.code(), e.message());
                        break;
                    }
                }
            }
        }
    }
    let status = status.replace(char::is_whitespace, " ");
    Ok(format!(
        "moves={moves} moves_omitted={omitted} status={status}"
    ))
}

/// 32 streams of slow searches (sums of five tokens on a DAG of 45 vertices, 200 a stream)
/// hold every search permit; then 10 quick analysis streams, each timed from its opening to
/// its verdict (they once waited behind the slow ones for the queue timeout).
async fn starvation(t: &Target) -> Result<String> {
    let slow_graph = steps(45, &[1, 2, 5]);
    let positions: Vec<u32> = (0..200)
        .flat_map(|i| [5 + i % 7, 5 + i % 5, 5 + i % 3, 6, 7])
        .collect();
    let mut slow = Vec::new();
    for _ in 0..32 {
        let mut client = connect(t).await?;
        let opening = start(slow_graph.clone(), Some(AnalysisOptions::default()));
        let requests = [opening, packed(5, positions.clone())];
        slow.push(tokio::spawn(async move {
            let mut stream = client
                .evaluate(tokio_stream::iter(requests))
                .await?
                .into_inner();
            while stream.message().await?.is_some() {}
            Ok::<_, tonic::Status>(())
        }));
    }
    wait_for_gauge(t, SEARCHES, 2.0).await?;
    let mut quick = Vec::new();
    for _ in 0..10 {
        let mut client = connect(t).await?;
        quick.push(tokio::spawn(async move {
            let asked = Instant::now();
            let opening = start(steps(5, &[1, 2]), Some(AnalysisOptions::default()));
            let (_tx, mut stream) =
                open(&mut client, None, vec![opening, packed(1, vec![0])]).await?;
            next_verdict(&mut stream).await?;
            anyhow::Ok(asked.elapsed())
        }));
    }
    let (mut answered, mut slowest, mut failure) = (0, Duration::ZERO, String::new());
    for stream in quick {
        match within(stream).await?? {
            Ok(waited) => (answered, slowest) = (answered + 1, slowest.max(waited)),
            Err(e) => failure = format!(" failure={e:#}"),
        }
    }
    let searches_after = gauge(t, SEARCHES)?;
    for stream in slow {
        stream.abort();
    }
    let slowest = slowest.as_millis();
    Ok(format!(
        "answered={answered} slowest_ms={slowest} searches_after={searches_after}{failure}"
    ))
}
