//! Quick analysis streams beside slow ones: a search job gives its permit up between queries
//! once it has run its slice and another waits, and a fresh job goes before the resumed ones,
//! so a quick stream waits for at most a query of each running search.

use std::time::{Duration, Instant};

use super::analysis::{analysis_graph, analysis_graph_and_a_large_dag, analysis_start};
use crate::support::server::{
    evaluate_in_background, next_ok, packed, serve_service, service_config, wait_until,
};
use grundy::proto;
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
