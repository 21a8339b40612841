//! `--json QUERIES`: the same token queries through `POST /v1:evaluate` as NDJSON and through
//! gRPC `EvaluateBatch`, against one grundy server, in pairs that alternate which path goes
//! first. Each path's wall time covers sending every request and reading every answer: the
//! gRPC client decodes every response message, the JSON client reads every body and parses
//! every NDJSON line, and both count the verdicts (all of them must come back) and the wins
//! (the two paths must agree).
//!
//! A JSON body is at most `min(--max-message-bytes, 1 MiB)`, so 10^6 queries do not fit in
//! one: the queries are split into requests of at most 1 MiB of JSON each, and gRPC sends the
//! same split (the same queries per request, the graph inline in each), one request after
//! another on both paths.

use std::time::{Duration, Instant};

use grundy::proto::{
    self, EvaluateBatchRequest, EvaluateStart, Query, TokenPosition, evaluate_start::GraphSource,
    grundy_service_client::GrundyServiceClient, query::Position,
};
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::transport::Channel;

/// The JSON server's body limit: `min(--max-message-bytes, 1 MiB)`.
const BODY_LIMIT: usize = 1 << 20;

/// The queries, split into requests: each as JSON bodies and as gRPC queries.
struct Split {
    bodies: Vec<bytes::Bytes>,
    ranges: Vec<std::ops::Range<usize>>,
    positions: Vec<Vec<u32>>,
}

/// `count` queries of one or two tokens, pseudo-random over `vertex_count` vertices.
fn positions(count: usize, vertex_count: u32) -> Vec<Vec<u32>> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % u64::from(vertex_count)) as u32
    };
    (0..count)
        .map(|i| (0..1 + i % 2).map(|_| next()).collect())
        .collect()
}

fn split(graph: &proto::Graph, positions: Vec<Vec<u32>>) -> Split {
    let join = |values: &[u32]| {
        values
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let prefix = format!(
        r#"{{"start":{{"graph":{{"vertexCount":{},"outDegrees":[{}],"targets":[{}]}}}},"queries":["#,
        graph.vertex_count,
        join(&graph.out_degrees),
        join(&graph.targets)
    );
    let suffix = "]}";
    let mut bodies = Vec::new();
    let mut ranges = Vec::new();
    let mut body = prefix.clone();
    let mut first = 0;
    for (i, position) in positions.iter().enumerate() {
        let query = format!(
            r#"{{"id":{i},"tokens":{{"vertices":[{}]}}}}"#,
            join(position)
        );
        if body.len() + 1 + query.len() + suffix.len() > BODY_LIMIT && i > first {
            body.push_str(suffix);
            bodies.push(bytes::Bytes::from(std::mem::replace(
                &mut body,
                prefix.clone(),
            )));
            ranges.push(first..i);
            first = i;
        }
        if i > first {
            body.push(',');
        }
        body.push_str(&query);
    }
    body.push_str(suffix);
    bodies.push(bytes::Bytes::from(body));
    ranges.push(first..positions.len());
    Split {
        bodies,
        ranges,
        positions,
    }
}

/// The gRPC requests of `split`, built before the clock starts.
fn grpc_requests(graph: &proto::Graph, split: &Split) -> Vec<EvaluateBatchRequest> {
    split
        .ranges
        .iter()
        .map(|range| EvaluateBatchRequest {
            start: Some(EvaluateStart {
                graph_source: Some(GraphSource::Graph(graph.clone())),
                explain: false,
                analysis: None,
                play_convention: 0,
            }),
            queries: range
                .clone()
                .map(|i| Query {
                    id: i as u64,
                    position: Some(Position::Tokens(TokenPosition {
                        vertices: split.positions[i].clone(),
                    })),
                })
                .collect(),
        })
        .collect()
}

/// What came back: verdicts and wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Tally {
    verdicts: usize,
    wins: usize,
}

async fn grpc(url: &str, requests: Vec<EvaluateBatchRequest>) -> (Duration, Tally) {
    let channel = Channel::from_shared(url.to_string())
        .expect("a valid URL")
        .connect()
        .await
        .expect("the bench server accepts connections");
    let mut client = GrundyServiceClient::new(channel)
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX);
    let started = Instant::now();
    let mut tally = Tally::default();
    for request in requests {
        let mut stream = client
            .evaluate_batch(request)
            .await
            .expect("EvaluateBatch answers")
            .into_inner();
        while let Some(response) = stream.message().await.expect("a response message") {
            tally.verdicts += response.verdicts.len();
            tally.wins += response
                .verdicts
                .iter()
                .filter(|v| v.outcome == proto::Outcome::Win as i32)
                .count();
        }
    }
    (started.elapsed(), tally)
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    verdicts: Vec<Verdict>,
}

#[derive(Deserialize)]
struct Verdict {
    outcome: String,
}

/// The JSON path: its wall time, what came back, and the client's share of the wall time
/// spent parsing the NDJSON lines.
async fn json(address: &str, bodies: &[bytes::Bytes]) -> (Duration, Tally, Duration) {
    let started = Instant::now();
    let mut tally = Tally::default();
    let mut parsing = Duration::ZERO;
    for body in bodies {
        let mut stream = tokio::net::TcpStream::connect(address)
            .await
            .expect("the bench server accepts connections");
        let head = format!(
            "POST /v1:evaluate HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Accept: application/x-ndjson\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.expect("send");
        stream.write_all(body).await.expect("send");
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.expect("receive");
        let split = response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a header block");
        let headers = String::from_utf8_lossy(&response[..split]).to_ascii_lowercase();
        assert!(headers.starts_with("http/1.1 200"), "{headers}");
        let mut payload = &response[split + 4..];
        let dechunked;
        if headers.contains("transfer-encoding: chunked") {
            dechunked = dechunk(payload);
            payload = &dechunked;
        }
        let parse_started = Instant::now();
        for line in payload.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let line: Line = serde_json::from_slice(line).expect("an NDJSON response message");
            tally.verdicts += line.verdicts.len();
            tally.wins += line
                .verdicts
                .iter()
                .filter(|v| v.outcome == "OUTCOME_WIN")
                .count();
        }
        parsing += parse_started.elapsed();
    }
    (started.elapsed(), tally, parsing)
}

/// The body of a `Transfer-Encoding: chunked` answer.
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n").expect("a size");
        let size = std::str::from_utf8(&body[..line_end]).expect("a hex size");
        let size = usize::from_str_radix(size.split(';').next().unwrap_or(size), 16);
        let size = size.expect("a hex size");
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[line_end + 2..line_end + 2 + size]);
        body = &body[line_end + 4 + size..];
    }
}

/// Measures `count` queries on `graph` through both paths, `rounds` pairs, and prints them.
pub async fn measure(url: &str, graph: &proto::Graph, count: usize, rounds: usize) {
    let address = url.trim_start_matches("http://").to_string();
    let split = split(graph, positions(count, graph.vertex_count));
    let json_bytes: usize = split.bodies.iter().map(|b| b.len()).sum();
    println!(
        "\n### {count} token queries (1-2 tokens each) on a random DAG of {} vertices, {} edges\n",
        graph.vertex_count,
        graph.targets.len()
    );
    println!(
        "A JSON body is at most 1 MiB: {} requests of at most {} queries ({:.1} MB of JSON in \
         all), the same split through gRPC, sent one after another on each path.\n",
        split.ranges.len(),
        split.ranges.iter().map(|r| r.len()).max().unwrap_or(0),
        json_bytes as f64 / 1e6
    );
    println!(
        "| round | gRPC s | JSON (NDJSON) s | of which the client's parsing s | JSON / gRPC |"
    );
    println!("|---|---|---|---|---|");
    let (mut grpc_times, mut json_times, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let expected = Tally {
        verdicts: count,
        wins: 0,
    };
    for round in 1..=rounds {
        let requests = grpc_requests(graph, &split);
        let ((g, g_tally), (j, j_tally, parsing)) = if round % 2 == 1 {
            let g = grpc(url, requests).await;
            (g, json(&address, &split.bodies).await)
        } else {
            let j = json(&address, &split.bodies).await;
            (grpc(url, requests).await, j)
        };
        assert_eq!(
            g_tally.verdicts, expected.verdicts,
            "every gRPC verdict came back"
        );
        assert_eq!(j_tally, g_tally, "JSON gives gRPC's verdicts, all of them");
        let ratio = j.as_secs_f64() / g.as_secs_f64();
        println!(
            "| {round} | {:.3} | {:.3} | {:.3} | {ratio:.2}x |",
            g.as_secs_f64(),
            j.as_secs_f64(),
            parsing.as_secs_f64()
        );
        grpc_times.push(g.as_secs_f64());
        json_times.push(j.as_secs_f64());
        ratios.push(ratio);
    }
    let summary = |values: &mut Vec<f64>| {
        let median = crate::median(values);
        format!(
            "{:.3} / {median:.3} / {:.3}",
            values[0],
            values[values.len() - 1]
        )
    };
    println!("\n| path | min / median / max s |");
    println!("|---|---|");
    println!("| gRPC `EvaluateBatch` | {} |", summary(&mut grpc_times));
    println!(
        "| `POST /v1:evaluate`, NDJSON | {} |",
        summary(&mut json_times)
    );
    println!(
        "\nJSON / gRPC, the median of the rounds' ratios: {:.2}x",
        crate::median(&mut ratios)
    );
}
