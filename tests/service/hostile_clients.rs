//! What hostile or careless clients do to a server over real gRPC, and what the server does
//! about it: a flood of one-query messages in their own HTTP/2 frames, expensive analyses
//! and searches abandoned mid-way, a huge unknown graph id, a stream that never sends `start`,
//! a stream that goes quiet, and one whose chunks arrive slowly.

use std::time::{Duration, Instant};

use crate::support::process::ServerProcess;
use crate::support::server::{
    PATIENCE, Stream, batch, evaluate_in_background, grpc_frame, next, open_stream, raw_answer,
    sample_graph, sample_outcome, serve_service, service_config, start, tokens,
    tournament_with_self_loop, wait_until,
};
use grundy::generate::{Rng, Shape, graph};
use grundy::proto::{
    self, EvaluateRequest, EvaluateStart, evaluate_request::Payload, evaluate_start::GraphSource,
    grundy_service_client::GrundyServiceClient,
};
use grundy::service::WorkKind;
use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;

const GRUNDY_SERVER: &str = env!("CARGO_BIN_EXE_grundy-server");

/// The verdicts of one query on the sample graph, sent inline on a stream of its own: what a
/// well-behaved client gets while, or after, others misbehave.
async fn one_sample_query(
    client: &mut GrundyServiceClient<Channel>,
) -> Result<Vec<proto::Verdict>, Status> {
    let requests = vec![start(sample_graph()), batch(vec![tokens(1, &[0])])];
    let mut stream = client
        .evaluate(tokio_stream::iter(requests))
        .await?
        .into_inner();
    assert!(next(&mut stream).await?.graph.is_some());
    Ok(next(&mut stream).await?.verdicts)
}

/// Many one-query messages on one stream, each in its own HTTP/2 DATA frame (as a client
/// writing one message per write does; tonic's own client coalesces them), sent as fast as
/// possible, are all answered: h2's guard against floods of small frames (GOAWAY
/// ENHANCE_YOUR_CALM "too_many_data_frames" after a few thousand) does not end the connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_stream_of_many_one_query_messages_gets_every_verdict() {
    const MESSAGES: u64 = 200_000;
    let server = serve_service(service_config()).await;
    let tcp = tokio::net::TcpStream::connect(server.address)
        .await
        .unwrap();
    // Windows as tonic's own client (hyper) opens them; h2's default 64 KiB would make this
    // client, not the server, refuse the stream of small verdict frames it reads.
    let (mut h2, connection) = h2::client::Builder::new()
        .initial_window_size(2 << 20)
        .initial_connection_window_size(5 << 20)
        .handshake(tcp)
        .await
        .unwrap();
    tokio::spawn(connection);
    let (response, mut send) = h2
        .send_request(server.raw_evaluate_request(), false)
        .unwrap();
    let sender = tokio::spawn(async move {
        let messages = std::iter::once(start(sample_graph()))
            .chain((0..MESSAGES).map(|id| batch(vec![tokens(id, &[(id % 4) as u32])])));
        for message in messages {
            let payload = message.encode_to_vec();
            let frame = grpc_frame(0, &payload);
            if send.send_data(bytes::Bytes::from(frame), false).is_err() {
                return;
            }
        }
        let _ = send.send_data(bytes::Bytes::new(), true);
    });
    let mut body = tokio::time::timeout(PATIENCE, response)
        .await
        .expect("response headers in time")
        .unwrap_or_else(|e| panic!("the connection failed before any response: {e}"))
        .into_body();
    let mut buffer = Vec::new();
    let mut responses = 0u64;
    let mut expected_id = 0u64;
    let deadline = Instant::now() + Duration::from_secs(120);
    while expected_id < MESSAGES {
        assert!(
            Instant::now() < deadline,
            "only {expected_id} verdicts in 120 s"
        );
        let data = match tokio::time::timeout(PATIENCE, body.data())
            .await
            .expect("data in time")
        {
            Some(Ok(data)) => data,
            Some(Err(e)) => panic!("after {expected_id} verdicts: {e}"),
            None => panic!("the stream ended after {expected_id} verdicts"),
        };
        let _ = body.flow_control().release_capacity(data.len());
        buffer.extend_from_slice(&data);
        while buffer.len() >= 5 {
            let length = u32::from_be_bytes(buffer[1..5].try_into().unwrap()) as usize;
            if buffer.len() < 5 + length {
                break;
            }
            let response = proto::EvaluateResponse::decode(&buffer[5..5 + length]).unwrap();
            buffer.drain(..5 + length);
            responses += 1;
            for verdict in response.verdicts {
                assert_eq!(verdict.query_id, expected_id);
                assert_eq!(verdict.outcome, sample_outcome((expected_id % 4) as u32));
                expected_id += 1;
            }
        }
    }
    assert!(
        responses > MESSAGES,
        "a response per message, after the summary"
    );
    sender.await.unwrap();
}

/// Six expensive cyclic analyses abandoned by their clients do not hold up an unrelated
/// client's small graph. Checked without a clock: once the clients are gone, every analysis
/// leaves the registry without having finished (none is cached, none remembered as failed:
/// they were dropped or interrupted, not run to their end), and the small graph is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_analyses_do_not_delay_a_small_graph() {
    let server = serve_service(service_config()).await;
    let mut abandoned = Vec::new();
    for k in 1800..1806 {
        let mut client = server.client().await;
        abandoned.push(tokio::spawn(async move {
            let requests = vec![start(tournament_with_self_loop(k))];
            let _ = client.evaluate(tokio_stream::iter(requests)).await;
        }));
    }
    // Each client gives up 0.3 s after its stream is open.
    let deadline = Instant::now() + PATIENCE;
    while server.service.active_streams() < 6 {
        assert!(Instant::now() < deadline, "the six streams never opened");
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    for task in &abandoned {
        task.abort();
    }
    let registry = server.service.registry();
    while registry.analyses_in_flight() > 0 {
        assert!(
            Instant::now() < deadline,
            "abandoned analyses still in flight"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(registry.len(), 0, "an abandoned analysis ran to its end");
    assert_eq!(
        registry.failed_len(),
        0,
        "an abandoned analysis ran to its budget"
    );
    let mut client = server.client().await;
    let verdicts = one_sample_query(&mut client).await.unwrap();
    assert_eq!(verdicts.len(), 1);
    assert_eq!(verdicts[0].error, None);
}

/// A stream that asked for the position analysis of sums, whose one batch would keep a search
/// busy for minutes, is abandoned by its client: the search stops (at its next query) instead
/// of running on for nobody, and gives its permit back. Checked without a clock: the job is
/// seen running, then, once the client is gone, seen gone, each within the tests' patience.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_stream_stops_its_search() {
    let server = serve_service(service_config()).await;
    let metrics = server.service.metrics().clone();
    let searches = move || metrics.work_jobs_running(WorkKind::Search);
    let (opening, queries) = long_search();
    let abandoned = evaluate_in_background(server.client().await, vec![opening, queries]);
    wait_until("the search never started", || searches() > 0).await;
    abandoned.abort();
    let deadline = Instant::now() + PATIENCE;
    while searches() > 0 {
        assert!(
            Instant::now() < deadline,
            "the abandoned stream's search still runs"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The server answers the next client as before.
    let mut client = server.client().await;
    assert_eq!(one_sample_query(&mut client).await.unwrap().len(), 1);
}

/// The opening and the one batch of a stream whose search would keep a search permit busy
/// for minutes: the position analysis of sums of two tokens on a cyclic graph, each query's
/// remoteness searched over its positions (milliseconds each; 20,000 of them).
fn long_search() -> (EvaluateRequest, EvaluateRequest) {
    let cyclic = graph(Shape::Cyclic, 5000, 7500, 3);
    let offsets = cyclic.offsets();
    let graph = proto::Graph {
        vertex_count: cyclic.vertex_count(),
        out_degrees: offsets.windows(2).map(|w| w[1] - w[0]).collect(),
        targets: cyclic.targets().to_vec(),
        ..Default::default()
    };
    let mut rng = Rng::new(12);
    let count = 20_000;
    let vertices = (0..2 * count).map(|_| rng.below(5000) as u32).collect();
    let queries = EvaluateRequest {
        payload: Some(Payload::Queries(proto::QueryBatch {
            queries: Vec::new(),
            packed_tokens: Some(proto::PackedTokenQueries {
                first_query_id: 0,
                token_counts: vec![2; count],
                vertices,
            }),
        })),
    };
    let opening = EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::Graph(graph)),
            explain: false,
            analysis: Some(proto::AnalysisOptions::default()),
            play_convention: 0,
        })),
    };
    (opening, queries)
}

/// A small graph sent inline that the cache holds is answered while every analysis slot is
/// taken by another client's long analysis: validating and hashing it waits for no slot, and
/// a cache hit is no analysis. (The wait for a slot is cut to 50 ms: a request that queued
/// for one would be refused with UNAVAILABLE.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_small_graph_waits_for_no_analysis_slot() {
    let server = serve_service(grundy::service::ServiceConfig {
        compute_concurrency: 1,
        analysis_queue_timeout: Duration::from_millis(50),
        ..service_config()
    })
    .await;
    let mut client = server.client().await;
    // Cached by a first stream.
    assert_eq!(one_sample_query(&mut client).await.unwrap().len(), 1);
    // Another client's cyclic analysis takes the only slot, for seconds.
    let mut other = server.client().await;
    let busy = tokio::spawn(async move {
        let requests = vec![start(tournament_with_self_loop(1800))];
        let _ = other.evaluate(tokio_stream::iter(requests)).await;
    });
    let metrics = server.service.metrics().clone();
    let deadline = Instant::now() + PATIENCE;
    while metrics.work_jobs_running(WorkKind::Analysis) == 0 {
        assert!(Instant::now() < deadline, "the long analysis never started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let again = one_sample_query(&mut client).await;
    let again = again.expect("the cached graph is answered, not refused for want of a slot");
    assert_eq!(again.len(), 1);
    busy.abort();
}

/// An unknown 20,000-character graph id gets NOT_FOUND with a short message (the whole id
/// quoted back would overflow the client's header limit, which would report that instead).
#[tokio::test]
async fn a_huge_unknown_graph_id_gets_a_short_not_found() {
    let server = serve_service(service_config()).await;
    let mut client = server.client().await;
    let request = EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::GraphId("x".repeat(20_000))),
            explain: false,
            analysis: None,
            play_convention: 0,
        })),
    };
    let status = client
        .evaluate(tokio_stream::iter([request]))
        .await
        .expect_err("unknown id");
    assert_eq!(status.code(), Code::NotFound, "{:.200}", status.message());
    assert!(
        status.message().len() < 300,
        "{} bytes",
        status.message().len()
    );
}

/// A stream that never sends `start` is ended after the start deadline (`--start-timeout`),
/// and its slot serves the next stream.
#[tokio::test]
async fn a_stream_without_start_is_ended_after_the_start_timeout() {
    let server = ServerProcess::start(
        GRUNDY_SERVER,
        &["--start-timeout", "1s", "--max-concurrent-streams", "1"],
    );
    let mut client = GrundyServiceClient::connect(server.url()).await.unwrap();
    let (silent, requests) = mpsc::channel::<EvaluateRequest>(1);
    let status = tokio::time::timeout(PATIENCE, client.evaluate(ReceiverStream::new(requests)))
        .await
        .expect("the server ends the stream in time")
        .expect_err("no start, no stream");
    assert!(
        matches!(
            status.code(),
            Code::DeadlineExceeded | Code::InvalidArgument
        ),
        "{status:?}"
    );
    assert!(status.message().contains("start"), "{}", status.message());
    let info = status.get_error_details().error_info().cloned();
    assert_eq!(info.map(|i| i.reason).as_deref(), Some("START_TIMEOUT"));
    drop(silent);
    let requests = vec![start(sample_graph()), batch(vec![tokens(1, &[0])])];
    let mut stream = client
        .evaluate(tokio_stream::iter(requests))
        .await
        .expect("the slot is free again")
        .into_inner();
    next(&mut stream).await.unwrap();
}

/// A message still arriving is no silence: `PutGraph` chunks that a client on a slow link
/// sends in pieces 100 ms apart, each chunk over 1.5 s against start and idle timeouts of
/// 1 s (the first chunk under the start timeout, the second under the idle one), are taken
/// whole and the graph registered.
#[tokio::test]
async fn chunks_arriving_slowly_are_not_ended_by_the_start_or_idle_timeout() {
    const PIECES: usize = 16;
    let server = serve_service(grundy::service::ServiceConfig {
        start_timeout: Duration::from_secs(1),
        stream_idle_timeout: Some(Duration::from_secs(1)),
        ..service_config()
    })
    .await;
    let n = 20_000u32;
    let degrees = proto::PutGraphRequest {
        chunk: Some(proto::Graph {
            vertex_count: n,
            out_degrees: (0..n).map(|v| u32::from(v + 1 < n)).collect(),
            ..Default::default()
        }),
    };
    let targets = proto::PutGraphRequest {
        chunk: Some(proto::Graph {
            targets: (1..n).collect(),
            ..Default::default()
        }),
    };
    let (response, mut send) = server
        .raw_client()
        .await
        .send_request(server.raw_request("PutGraph"), false)
        .unwrap();
    // A server that ended the stream refuses the rest; its status says why.
    'sending: for chunk in [degrees, targets] {
        let frame = grpc_frame(0, &chunk.encode_to_vec());
        for piece in frame.chunks(frame.len().div_ceil(PIECES)) {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if send
                .send_data(bytes::Bytes::copy_from_slice(piece), false)
                .is_err()
            {
                break 'sending;
            }
        }
    }
    let _ = send.send_data(bytes::Bytes::new(), true);
    let answer = raw_answer(response).await;
    assert_eq!(answer.code, Some(Code::Ok), "{}", answer.message);
    let registered = proto::PutGraphResponse::decode(&answer.body[5..]).expect("one response");
    assert!(!registered.graph_id.is_empty());
}

/// A stream that goes quiet is ended after the idle timeout (`--stream-idle-timeout`) and
/// its slot serves the next stream: an `Evaluate` stream with every batch answered, and a
/// `PutGraph` stream between chunks.
#[tokio::test]
async fn a_stream_that_goes_quiet_is_ended_after_the_idle_timeout() {
    let server = serve_service(grundy::service::ServiceConfig {
        stream_idle_timeout: Some(Duration::from_millis(300)),
        max_concurrent_streams: 1,
        ..service_config()
    })
    .await;
    let mut client = server.client().await;
    let idle_ended = |status: Status| {
        assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
        assert!(
            status.message().contains("stream_idle_timeout"),
            "{status:?}"
        );
        let info = status.get_error_details().error_info().cloned();
        assert_eq!(info.map(|i| i.reason).as_deref(), Some("IDLE_TIMEOUT"));
    };

    let Stream {
        requests,
        responses: mut stream,
    } = open_stream(&mut client, sample_graph()).await;
    requests.send(batch(vec![tokens(1, &[0])])).await.unwrap();
    assert_eq!(next(&mut stream).await.unwrap().verdicts.len(), 1);
    // The client keeps its stream open and sends nothing more.
    let ended = tokio::time::timeout(PATIENCE, stream.message())
        .await
        .expect("the quiet stream is ended in time");
    idle_ended(ended.unwrap_err());
    drop(requests);

    let first_chunk = proto::PutGraphRequest {
        chunk: Some(proto::Graph {
            vertex_count: 2,
            out_degrees: vec![1, 0],
            ..Default::default()
        }),
    };
    let quiet_upload = tokio_stream::iter([first_chunk]).chain(tokio_stream::pending());
    let ended = tokio::time::timeout(PATIENCE, client.put_graph(quiet_upload))
        .await
        .expect("the quiet upload is ended in time");
    idle_ended(ended.unwrap_err());

    // The one slot is free again, once the server has ended both streams.
    server.wait_idle().await;
    assert_eq!(one_sample_query(&mut client).await.unwrap().len(), 1);
    // The metrics tell an idle stream's end from a deadline's.
    let text = server.service.metrics().encode();
    for rpc in ["Evaluate", "PutGraph"] {
        let line = format!(
            r#"grundy_requests_total{{rpc="{rpc}",code="DEADLINE_EXCEEDED",reason="IDLE_TIMEOUT",protocol="grpc"}} 1"#
        );
        assert!(text.contains(&line), "{line} in {text}");
    }
}

/// A unary request takes its slot of `--max-concurrent-streams` from its first byte, and its
/// message, when it stops arriving, is ended with DEADLINE_EXCEEDED (START_TIMEOUT) once it
/// has brought nothing for the start timeout, giving the slot back: an `EvaluateBatch`
/// message sent but for its last 10 bytes.
#[tokio::test]
async fn a_stalled_unary_message_holds_its_slot_only_until_the_start_timeout() {
    let timeout = Duration::from_secs(2);
    let server = serve_service(grundy::service::ServiceConfig {
        start_timeout: timeout,
        max_concurrent_streams: 1,
        ..service_config()
    })
    .await;
    let metrics = server.service.metrics().clone();
    let inflight = move || metrics.encode().contains("grundy_inflight_streams 1\n");
    let request = proto::EvaluateBatchRequest {
        start: Some(EvaluateStart {
            graph_source: Some(GraphSource::Graph(sample_graph())),
            explain: false,
            analysis: None,
            play_convention: 0,
        }),
        queries: vec![tokens(1, &[0])],
    };
    let frame = grpc_frame(0, &request.encode_to_vec());
    let (response, mut send) = server
        .raw_client()
        .await
        .send_request(server.raw_request("EvaluateBatch"), false)
        .unwrap();
    let sent = Instant::now();
    send.send_data(
        bytes::Bytes::copy_from_slice(&frame[..frame.len() - 10]),
        false,
    )
    .unwrap();
    let deadline = Instant::now() + PATIENCE;
    while !inflight() {
        assert!(
            Instant::now() < deadline,
            "the stalled request took no slot"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let answer = raw_answer(response).await;
    assert_eq!(
        answer.code,
        Some(Code::DeadlineExceeded),
        "{}",
        answer.message
    );
    assert!(
        answer.message.contains("start_timeout"),
        "{}",
        answer.message
    );
    assert!(sent.elapsed() >= timeout);
    // The one slot serves the next call.
    let mut client = server.client().await;
    assert_eq!(one_sample_query(&mut client).await.unwrap().len(), 1);
    let text = server.service.metrics().encode();
    let line = r#"grundy_requests_total{rpc="EvaluateBatch",code="DEADLINE_EXCEEDED",reason="START_TIMEOUT",protocol="grpc"} 1"#;
    assert!(text.contains(line), "{line} in {text}");
}

/// A search waits for a search permit at most the queue timeout (`--analysis-queue-timeout`):
/// with the only permit held by another client's long search, a stream asking for winning
/// moves is refused with UNAVAILABLE (ANALYSIS_QUEUE_FULL naming the search queue, with
/// RetryInfo) instead of queueing behind it for as long as that search runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_waits_for_a_permit_at_most_the_queue_timeout() {
    let server = serve_service(grundy::service::ServiceConfig {
        evaluation_concurrency: 1,
        analysis_queue_timeout: Duration::from_millis(300),
        ..service_config()
    })
    .await;
    let metrics = server.service.metrics().clone();
    let (opening, queries) = long_search();
    let long = evaluate_in_background(server.client().await, vec![opening, queries]);
    wait_until("the long search never started", || {
        metrics.work_jobs_running(WorkKind::Search) > 0
    })
    .await;
    let explained = EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::Graph(sample_graph())),
            explain: true,
            analysis: None,
            play_convention: 0,
        })),
    };
    let requests = vec![explained, batch(vec![tokens(1, &[0])])];
    let mut client = server.client().await;
    let mut stream = client
        .evaluate(tokio_stream::iter(requests))
        .await
        .unwrap()
        .into_inner();
    assert!(next(&mut stream).await.unwrap().graph.is_some());
    let status = next(&mut stream).await.expect_err("refused, not queued");
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert!(status.message().contains("search slots"), "{status:?}");
    let details = status.get_error_details();
    let info = details.error_info().expect("ErrorInfo");
    assert_eq!(info.reason, "ANALYSIS_QUEUE_FULL");
    assert_eq!(
        info.metadata.get("queue").map(String::as_str),
        Some("search")
    );
    assert!(details.retry_info().is_some(), "{status:?}");
    long.abort();
}
