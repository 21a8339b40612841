//! Attacks on analysis streams: huge values, wide positions, budgets, abandoned searches, a
//! client that never reads, an oversized verdict, starvation.

use std::time::{Duration, Instant};

use anyhow::Result;
use grundy::generate::Shape;
use grundy::proto::{self, AnalysisOptions, Query, query::Position};

use crate::observe::*;
use crate::requests::*;
use crate::{SEARCHES, Target};

/// Values whose token counts overflow u64, or would size terabytes, each in a batch of its own
/// on an analysis stream of a 3-vertex chain, then a usual query: all answered, the stream
/// going on (such values once aborted the server with a 4 TB allocation).
pub(crate) async fn huge_values(t: &Target) -> Result<String> {
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
pub(crate) async fn wide_position(t: &Target) -> Result<String> {
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
pub(crate) async fn budget_sum(t: &Target, shape: Shape, edges: u64, seed: u64) -> Result<String> {
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
pub(crate) async fn abandoned_search(t: &Target, deadline: Option<Duration>) -> Result<String> {
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
pub(crate) async fn never_reads(t: &Target) -> Result<String> {
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

/// A verdict of 256 analysed moves (one token on a vertex of 256 out-edges) for a client that
/// accepts gzip, under a message limit of 1 KiB on both sides: the moves listed and omitted,
/// and the stream's status (such a verdict went out whole, and the client refused it once
/// inflated: "Received message larger than max").
pub(crate) async fn gzip_verdict(t: &Target) -> Result<String> {
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
pub(crate) async fn starvation(t: &Target) -> Result<String> {
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
