//! Quick analysis streams beside slow ones and beside streams nobody reads: a search job
//! gives its permit up between queries once it has run its slice and another waits, or once
//! its stream does not take its answers; a fresh job goes before the resumed ones. So a quick
//! stream waits for at most a query of each running search, and never for a client that does
//! not read.

use std::time::{Duration, Instant};

use super::analysis::{analysis_graph, analysis_graph_and_a_large_dag, analysis_start};
use crate::support::server::{
    evaluate_in_background, next_ok, packed, serve_service, service_config, tokens, wait_until,
};
use grundy::client::{self, ConnectionArgs};
use grundy::proto::{self, EvaluateBatchRequest, EvaluateStart, evaluate_start::GraphSource};
use grundy::service::{AnalysisCaps, ServiceConfig, WorkKind};

/// 32 streams of slow searches (sums of five tokens, each search some tens of milliseconds,
/// 200 of them a stream) hold every search permit; then 10 quick streams (one position of
/// one token each) are each answered within a second, while the slow ones go on. Before,
/// each slow stream held its permit for its whole batch, and the quick ones waited behind
/// them for the queue timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_analysis_streams_are_answered_while_slow_searches_run() {
    let server = serve_service(ServiceConfig {
        analysis: AnalysisCaps {
            work_budget: 1 << 20,
            ..AnalysisCaps::default()
        },
        ..service_config()
    })
    .await;
    let metrics = server.service.metrics().clone();
    let searches = move || metrics.work_jobs_running(WorkKind::Search);
    let slow_positions: Vec<[u32; 5]> = (0..200u32)
        .map(|i| [5 + i % 7, 5 + i % 5, 5 + i % 3, 6, 7])
        .collect();
    let slow_positions: Vec<&[u32]> = slow_positions.iter().map(|p| &p[..]).collect();
    let mut slow = Vec::new();
    for _ in 0..32 {
        let requests = vec![
            analysis_start(
                analysis_graph_and_a_large_dag(40),
                Some(proto::AnalysisOptions::default()),
            ),
            packed(0, &slow_positions),
        ];
        slow.push(evaluate_in_background(server.client().await, requests));
    }
    wait_until("the slow searches never started", || searches() >= 2).await;
    let mut quick = Vec::new();
    for _ in 0..10 {
        let mut client = server.client().await;
        quick.push(tokio::spawn(async move {
            let asked = Instant::now();
            let requests = vec![
                analysis_start(analysis_graph(), Some(proto::AnalysisOptions::default())),
                packed(0, &[&[0]]),
            ];
            let mut stream = client
                .evaluate(tokio_stream::iter(requests))
                .await
                .unwrap()
                .into_inner();
            next_ok(&mut stream).await;
            let answer = next_ok(&mut stream).await;
            assert_eq!(answer.verdicts.len(), 1);
            asked.elapsed()
        }));
    }
    let mut slowest = Duration::ZERO;
    for waited in quick {
        slowest = slowest.max(waited.await.unwrap());
    }
    eprintln!("the slowest of the quick streams was answered in {slowest:?}");
    assert!(
        slowest < Duration::from_secs(1),
        "a quick stream waited {slowest:?} behind the slow searches"
    );
    assert!(searches() > 0, "the slow searches go on");
    for task in slow {
        task.abort();
    }
}

/// A star: vertex 0 moves to each of `leaves` sinks, so its analysis lists `leaves` moves.
fn star(leaves: u32) -> proto::Graph {
    proto::Graph {
        vertex_count: leaves + 1,
        out_degrees: std::iter::once(leaves)
            .chain(std::iter::repeat_n(0, leaves as usize))
            .collect(),
        targets: (1..=leaves).collect(),
        split_counts: vec![],
        fixed_targets: Vec::new(),
    }
}

/// `count` analyses of the star's centre in one `EvaluateBatch`: some 4 KiB of answer each.
fn centre_analyses(count: u64) -> EvaluateBatchRequest {
    EvaluateBatchRequest {
        start: Some(EvaluateStart {
            graph_source: Some(GraphSource::Graph(star(300))),
            analysis: Some(proto::AnalysisOptions::default()),
            ..Default::default()
        }),
        queries: (0..count).map(|id| tokens(id, &[0])).collect(),
    }
}

/// Four streams whose clients never read their answers (twice the server's search permits)
/// leave the permits free: a fresh analysis stream is answered at once, again and
/// again while they wait. Before, each of their jobs waited for its stream with its permit
/// held, and every other stream's searches waited for the queue timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_nobody_reads_hold_no_search_permit() {
    // Two search permits; one response buffered a stream, so that the unread streams fill
    // their buffers in a moment.
    let server = serve_service(ServiceConfig {
        evaluation_concurrency: 2,
        response_buffer: 1,
        ..service_config()
    })
    .await;
    let mut unread = Vec::new();
    for _ in 0..4 {
        let mut client = server.client().await;
        let response = client.evaluate_batch(centre_analyses(20_000)).await;
        unread.push(response.expect("the stream opens"));
    }
    let began = Instant::now();
    let mut probes = 0;
    // Long enough for the unread streams to fill every buffer between them and their jobs.
    while began.elapsed() < Duration::from_secs(2) && probes < 100_000 {
        let mut client = server.client().await;
        let asked = client.evaluate_batch(centre_analyses(1));
        let answered = tokio::time::timeout(Duration::from_secs(10), async move {
            let mut stream = asked.await.expect("the probe opens").into_inner();
            next_ok(&mut stream).await;
            next_ok(&mut stream).await.verdicts.len()
        })
        .await;
        assert_eq!(
            answered.ok(),
            Some(1),
            "probe {probes}, {:?} in, was not answered beside streams nobody reads",
            began.elapsed()
        );
        probes += 1;
    }
    drop(unread);
}

/// Nine streams on one connection of the CLI's client, read one at a time: the first is read
/// to its end while the eight others wait unread, as the CLI prints its test cases in input
/// order. What waits counts against the connection's window; when it filled that window, the
/// first stream got nothing more and the run stopped for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_read_while_others_wait_unread_on_its_connection_reaches_its_end() {
    let server = serve_service(service_config()).await;
    let mut client = client::connect(&server.url(), &ConnectionArgs::default(), 64 << 20)
        .await
        .expect("connects");
    // The first stream answers 16 MB, each of the others 1.6 MB: together more than hyper's
    // default window of a connection (5 MiB).
    let count = 4000;
    let mut streams = Vec::new();
    for index in 0..=client::STREAMS_PER_CONNECTION {
        let queries = if index == 0 { count } else { 400 };
        let response = client.evaluate_batch(centre_analyses(queries)).await;
        streams.push(response.expect("the stream opens").into_inner());
    }
    let first = &mut streams[0];
    let read = tokio::time::timeout(Duration::from_secs(30), async {
        let mut verdicts = 0;
        while let Some(message) = first.message().await.expect("no stream error") {
            verdicts += message.verdicts.len() as u64;
        }
        verdicts
    })
    .await;
    assert_eq!(
        read.ok(),
        Some(count),
        "the first stream stopped short while the others waited unread"
    );
}
