//! What the server bounds: graph, query and message limits, concurrent streams (and the slot
//! a cancelled stream frees), client deadlines, a bounded wait for an analysis slot, responses
//! under `max_message_bytes`. In-process servers on a loopback port, driven through generated
//! clients over real sockets.

use std::time::Duration;

use crate::support::server::{
    PATIENCE, batch, chain, grpc_frame, next, open_stream, sample_graph, sample_outcome, serve,
    serve_service, server_config, service_config, small_limits, start, tokens,
    tournament_with_self_loop,
};
use grundy::engine::Limits;
use grundy::proto::{
    EvaluateBatchRequest, EvaluateRequest, EvaluateStart, PackedTokenQueries, Query, QueryBatch,
    evaluate_request::Payload, evaluate_start::GraphSource,
    grundy_service_client::GrundyServiceClient,
};
use grundy::service::ServerConfig;
use grundy::service::ServiceConfig;
use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;
use tonic::transport::Channel;
use tonic_types::StatusExt;

#[tokio::test]
async fn graph_and_query_limits_name_the_limit_and_its_value() {
    let server = serve(small_limits()).await;
    let mut client = server.client().await;
    let refused = |status: tonic::Status, limit: &str| {
        assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
        assert!(status.message().contains(limit), "{status:?}");
    };

    let (held, rx) = mpsc::channel(1);
    held.send(start(chain(11))).await.unwrap();
    let status = client.evaluate(ReceiverStream::new(rx)).await.unwrap_err();
    refused(status, "max_vertices = 10");

    let mut dense = chain(10);
    dense.out_degrees = vec![2; 10];
    dense.targets = (0..20).map(|i| i % 10).collect();
    let (held, rx) = mpsc::channel(1);
    held.send(start(dense)).await.unwrap();
    let status = client.evaluate(ReceiverStream::new(rx)).await.unwrap_err();
    refused(status, "max_edges = 12");

    // Queries per stream: the first batches are answered, the one crossing the limit ends it.
    let mut stream = open_stream(&mut client, sample_graph()).await;
    let three = || batch((0..3).map(|i| tokens(i, &[0])).collect());
    stream.requests.send(three()).await.unwrap();
    assert_eq!(next(&mut stream.responses).await.unwrap().verdicts.len(), 3);
    stream.requests.send(three()).await.unwrap();
    refused(
        next(&mut stream.responses).await.unwrap_err(),
        "max_queries_per_stream = 5",
    );

    let six = (0..6).map(|i| tokens(i, &[0])).collect();
    let status = client
        .evaluate_batch(EvaluateBatchRequest {
            start: Some(EvaluateStart {
                graph_source: Some(GraphSource::Graph(sample_graph())),
                explain: false,
                analysis: None,
                play_convention: 0,
            }),
            queries: six,
        })
        .await
        .unwrap_err();
    refused(status, "max_queries_per_stream = 5");

    // Messages over max_message_bytes, unary and streamed.
    let big: Vec<Query> = (0..3).map(|i| tokens(i, &vec![0; 30_000])).collect();
    let status = client
        .evaluate_batch(EvaluateBatchRequest {
            start: Some(EvaluateStart {
                graph_source: Some(GraphSource::Graph(sample_graph())),
                explain: false,
                analysis: None,
                play_convention: 0,
            }),
            queries: big.clone(),
        })
        .await
        .unwrap_err();
    refused(status, "max_message_bytes");
    assert!(status_mentions_value(&client, &big).await);
}

/// The streamed form of an oversized message: RESOURCE_EXHAUSTED naming the limit and value.
async fn status_mentions_value(client: &GrundyServiceClient<Channel>, big: &[Query]) -> bool {
    let mut client = client.clone();
    let mut stream = open_stream(&mut client, sample_graph()).await;
    stream.requests.send(batch(big.to_vec())).await.unwrap();
    let status = next(&mut stream.responses).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    status.message().contains("max_message_bytes") && status.message().contains("65536")
}

#[tokio::test]
async fn concurrent_stream_limit_refuses_then_frees_the_slot_of_a_cancelled_stream() {
    let server = serve(ServerConfig {
        service: ServiceConfig {
            max_concurrent_streams: 1,
            ..server_config().service
        },
        ..server_config()
    })
    .await;
    let mut client = server.client().await;
    let stream = open_stream(&mut client, sample_graph()).await;
    assert_eq!(server.service.active_streams(), 1);
    let (held, rx) = mpsc::channel(1);
    held.send(start(sample_graph())).await.unwrap();
    let status = client.evaluate(ReceiverStream::new(rx)).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted);
    assert!(
        status.message().contains("max_concurrent_streams = 1"),
        "{status:?}"
    );
    // The client cancels its stream: the server stops working on it and frees the slot.
    drop(stream);
    server.wait_idle().await;
    let mut again = open_stream(&mut client, sample_graph()).await;
    again
        .requests
        .send(batch(vec![tokens(1, &[2])]))
        .await
        .unwrap();
    assert_eq!(
        next(&mut again.responses).await.unwrap().verdicts[0].nim_sum,
        1
    );
}

#[tokio::test]
async fn client_deadline_ends_an_idle_stream_with_deadline_exceeded() {
    let server = serve(server_config()).await;
    let mut client = server.client().await;
    let (tx, rx) = mpsc::channel(4);
    tx.send(start(sample_graph())).await.unwrap();
    let mut request = tonic::Request::new(ReceiverStream::new(rx));
    request.set_timeout(Duration::from_millis(300));
    let started = tokio::time::Instant::now();
    let mut responses = client.evaluate(request).await.unwrap().into_inner();
    assert!(next(&mut responses).await.unwrap().graph.is_some());
    // Send nothing more: the server must give up at the deadline, not wait forever.
    let status = next(&mut responses).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(started.elapsed() >= Duration::from_millis(250));
    server.wait_idle().await;
    drop(tx);
}

/// grpc-go, grpc-python and grpc-java clients reset a stream at their deadline (RST_STREAM
/// CANCEL), a moment before the server's own timer would end it: the server counts and logs
/// that as the deadline, not as a client that gave up.
#[tokio::test]
async fn a_client_leaving_at_its_deadline_is_counted_as_deadline_exceeded() {
    let server = serve(server_config()).await;
    let mut h2 = server.raw_client().await;
    let mut request = server.raw_evaluate_request();
    request
        .headers_mut()
        .insert("grpc-timeout", http::HeaderValue::from_static("1000m"));
    let (response, mut send) = h2.send_request(request, false).unwrap();
    let first = grpc_frame(0, &start(sample_graph()).encode_to_vec());
    send.send_data(bytes::Bytes::from(first), false).unwrap();
    let mut body = tokio::time::timeout(PATIENCE, response)
        .await
        .expect("response headers in time")
        .unwrap()
        .into_body();
    // The server's deadline is a second after the request arrived, so no later than a
    // second from now.
    let arrived_by = tokio::time::Instant::now();
    let summary = tokio::time::timeout(PATIENCE, body.data()).await;
    assert!(matches!(summary, Ok(Some(Ok(_)))), "{summary:?}");
    // The client's own timer, up to 80 ms before the server's could fire (or after it, on a
    // slow machine: DEADLINE_EXCEEDED either way).
    tokio::time::sleep_until(arrived_by + Duration::from_millis(920)).await;
    send.send_reset(h2::Reason::CANCEL);
    server.wait_idle().await;
    let text = server.service.metrics().encode();
    let line = r#"grundy_requests_total{rpc="Evaluate",code="DEADLINE_EXCEEDED",reason="DEADLINE_EXCEEDED",protocol="grpc"} 1"#;
    assert!(text.contains(line), "{text}");
}

#[tokio::test]
async fn deadline_before_the_first_response_is_reported_by_the_tonic_client_itself() {
    // tonic's channel enforces grpc-timeout too, and its timer starts before the request is
    // sent, so it fires before the server's answer arrives: the call fails on the client side
    // with CANCELLED "Timeout expired" (see docs/operating.md), and the server frees the
    // stream. (Both timers may fire in the same millisecond tick: then the server's
    // DEADLINE_EXCEEDED could win, so that one is accepted too.)
    let timed_out = |status: &tonic::Status| match status.code() {
        Code::Cancelled => status.message() == "Timeout expired",
        Code::DeadlineExceeded => status.message().starts_with("deadline of"),
        _ => false,
    };
    let server = serve(server_config()).await;
    let mut client = server.client().await;
    // The client opens the stream and never sends `start`.
    let (_held, rx) = mpsc::channel::<EvaluateRequest>(1);
    let mut request = tonic::Request::new(ReceiverStream::new(rx));
    request.set_timeout(Duration::from_millis(50));
    let status = client.evaluate(request).await.unwrap_err();
    assert!(timed_out(&status), "{status:?}");
    server.wait_idle().await;
    // The graph's analysis outlasts the deadline (a dense cyclic graph: about 0.3 s). The
    // analysis still finishes and is cached, so the next request finds it.
    let k = 1000u32;
    let dense = tournament_with_self_loop(k);
    let request = |timeout| {
        let mut request = tonic::Request::new(EvaluateBatchRequest {
            start: Some(EvaluateStart {
                graph_source: Some(GraphSource::Graph(dense.clone())),
                explain: false,
                analysis: None,
                play_convention: 0,
            }),
            queries: vec![tokens(1, &[0])],
        });
        request.set_timeout(timeout);
        request
    };
    let status = client
        .evaluate_batch(request(Duration::from_millis(50)))
        .await
        .unwrap_err();
    assert!(timed_out(&status), "{status:?}");
    server.wait_idle().await;
    let mut stream = client
        .evaluate_batch(request(PATIENCE))
        .await
        .unwrap()
        .into_inner();
    assert!(next(&mut stream).await.unwrap().graph.unwrap().cyclic);
    let text = server.service.metrics().encode();
    assert!(
        text.contains("grundy_table_compute_seconds_count 1\n"),
        "{text}"
    );
}

/// The wait for an analysis slot is bounded. With one slot and a 200 ms bound, of two
/// expensive graphs sent at once (each about a second of work), one is analysed (to the end
/// of its budget) and the other is refused with a retryable UNAVAILABLE naming the bound,
/// instead of queueing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_an_analysis_slot_is_bounded() {
    let server = serve_service(ServiceConfig {
        limits: Limits {
            cyclic_work_budget: 1 << 30,
            ..Limits::default()
        },
        compute_concurrency: 1,
        analysis_queue_timeout: Duration::from_millis(200),
        ..service_config()
    })
    .await;
    let mut calls = Vec::new();
    for k in 1800..1802 {
        let mut client = server.client().await;
        calls.push(tokio::spawn(async move {
            let requests = vec![start(tournament_with_self_loop(k))];
            client
                .evaluate(tokio_stream::iter(requests))
                .await
                .expect_err("over the budget or refused")
        }));
    }
    let mut statuses = Vec::new();
    for call in calls {
        statuses.push(
            tokio::time::timeout(PATIENCE, call)
                .await
                .expect("in time")
                .unwrap(),
        );
    }
    let mut codes: Vec<Code> = statuses.iter().map(|s| s.code()).collect();
    codes.sort_by_key(|&code| code as i32);
    assert_eq!(
        codes,
        [Code::ResourceExhausted, Code::Unavailable],
        "{statuses:?}"
    );
    let refused = statuses
        .iter()
        .find(|s| s.code() == Code::Unavailable)
        .unwrap();
    assert!(
        refused.message().contains("analysis_queue_timeout"),
        "{}",
        refused.message()
    );
    // Retryable, and a program can tell why without parsing the text.
    let details = refused.get_error_details();
    let info = details.error_info().expect("ErrorInfo");
    assert_eq!(info.reason, "ANALYSIS_QUEUE_FULL");
    assert_eq!(info.metadata["limit"], "analysis_queue_timeout");
    assert!(details.retry_info().is_some(), "RetryInfo");
}

/// With `max_message_bytes` 1 MiB, every response of an explain stream of 300,000 packed
/// queries stays under the limit, and the verdicts come in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_stay_under_max_message_bytes() {
    explained_responses_stay_under(1 << 20, 300_000, 300_000).await;
}

/// With a limit of 4 KiB, far under the chunks a search job hands over (about 1,000
/// verdicts), the verdicts it encoded are cut into messages under the limit, whole and in
/// order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verdicts_encoded_by_the_job_are_cut_under_a_small_message_limit() {
    explained_responses_stay_under(4096, 20_000, 1_000).await;
}

/// `queries` one-token queries in packed batches of `batch`, on an explain stream whose
/// server and client both have the message limit `limit`: every response stays under it,
/// and the verdicts come in order.
async fn explained_responses_stay_under(limit: usize, queries: u32, batch: u32) {
    let server = serve(ServerConfig {
        service: service_config(),
        max_message_bytes: limit,
        ..ServerConfig::default()
    })
    .await;
    let mut client = GrundyServiceClient::new(server.channel().await)
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit);
    let explain = EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::Graph(sample_graph())),
            explain: true,
            analysis: None,
            play_convention: 0,
        })),
    };
    let batches = (0..queries).step_by(batch as usize).map(move |first| {
        let ids = first..(first + batch).min(queries);
        EvaluateRequest {
            payload: Some(Payload::Queries(QueryBatch {
                queries: vec![],
                packed_tokens: Some(PackedTokenQueries {
                    first_query_id: u64::from(first),
                    token_counts: vec![1; ids.len()],
                    vertices: ids.map(|i| i % 4).collect(),
                }),
            })),
        }
    });
    let mut stream = client
        .evaluate(tokio_stream::iter(std::iter::once(explain).chain(batches)))
        .await
        .unwrap()
        .into_inner();
    next(&mut stream).await.expect("the summary");
    let mut expected_id = 0u64;
    let mut responses = 0;
    while let Some(response) = tokio::time::timeout(PATIENCE, stream.message())
        .await
        .expect("a response in time")
        .unwrap_or_else(|s| panic!("after {expected_id} verdicts: {s}"))
    {
        assert!(response.encoded_len() < limit);
        responses += 1;
        for verdict in response.verdicts {
            assert_eq!(verdict.query_id, expected_id);
            assert_eq!(verdict.outcome, sample_outcome((expected_id % 4) as u32));
            expected_id += 1;
        }
    }
    assert_eq!(expected_id, u64::from(queries));
    assert!(
        responses > queries as usize * 8 / limit,
        "{responses} responses"
    );
}
