//! Machine-readable errors: every status the server returns for a bad graph, a limit, a drain,
//! an unknown id, a missing token or a deadline carries `google.rpc` details (ErrorInfo with a
//! stable reason, and BadRequest, QuotaFailure or RetryInfo by code), decoded here with
//! `tonic_types::StatusExt` from the generated client's statuses over real gRPC.

use std::collections::HashMap;
use std::time::Duration;

use crate::support::server::{
    PATIENCE, Stream, batch, batch_request, chain, next, open_stream, sample_graph, serve,
    server_config, service_config, small_limits, start, start_id, tokens,
    tournament_with_self_loop,
};
use grundy::proto::{
    self, ErrorReason, EvaluateRequest, EvaluateStart, Query, evaluate_request::Payload,
    evaluate_start::GraphSource, grundy_service_client::GrundyServiceClient,
};
use grundy::service::ServerConfig;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
use tonic_types::{ErrorDetails, StatusExt};

/// The `ErrorInfo.domain` errors.proto documents.
const DOMAIN: &str = "grundy.v1";

/// The status's details, after checking its code and its ErrorInfo's reason and domain.
fn details_of(status: &Status, code: Code, reason: &str) -> ErrorDetails {
    assert_eq!(status.code(), code, "{status:?}");
    let details = status.get_error_details();
    let info = details
        .error_info()
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"));
    assert_eq!(info.reason, reason, "{status:?}");
    assert_eq!(info.domain, DOMAIN);
    details
}

/// The ErrorInfo metadata of `details`.
fn metadata(details: &ErrorDetails) -> &HashMap<String, String> {
    &details.error_info().expect("ErrorInfo").metadata
}

/// Checks a limit's details: metadata `limit` and `limit_value`, one QuotaFailure violation
/// whose subject is the limit.
fn assert_limit(status: &Status, reason: &str, limit: &str, value: u64) {
    let details = details_of(status, Code::ResourceExhausted, reason);
    let metadata = metadata(&details);
    assert_eq!(metadata["limit"], limit, "{status:?}");
    assert_eq!(metadata["limit_value"], value.to_string(), "{status:?}");
    let quota = details.quota_failure().expect("QuotaFailure");
    assert_eq!(quota.violations.len(), 1);
    assert_eq!(quota.violations[0].subject, limit);
    assert!(quota.violations[0].description.contains(limit));
}

/// The status an `Evaluate` stream opened with `messages` ends with (after its summary, when
/// the failure comes after `start`).
async fn refusal(
    client: &mut GrundyServiceClient<Channel>,
    messages: Vec<EvaluateRequest>,
) -> Status {
    let (held, rx) = mpsc::channel(messages.len().max(1));
    for message in messages {
        held.send(message).await.unwrap();
    }
    let opened = tokio::time::timeout(PATIENCE, client.evaluate(ReceiverStream::new(rx)))
        .await
        .expect("an answer in time");
    match opened {
        Err(status) => status,
        Ok(response) => {
            let mut stream = response.into_inner();
            for _ in 0..2 {
                if let Err(status) = next(&mut stream).await {
                    return status;
                }
            }
            panic!("the stream does not fail")
        }
    }
}

#[tokio::test]
async fn bad_graphs_and_bad_requests_carry_the_field_in_bad_request() {
    let server = serve(server_config()).await;
    let mut client = server.client().await;
    let cases: Vec<(proto::Graph, &str, &str)> = vec![
        (
            proto::Graph {
                targets: vec![1, 2, 7],
                ..sample_graph()
            },
            "targets[2]",
            "targets[2] = 7 is out of range",
        ),
        (
            proto::Graph {
                out_degrees: vec![2, 0, 1],
                ..sample_graph()
            },
            "out_degrees",
            "out_degrees has 3 entries",
        ),
        (
            proto::Graph {
                split_counts: vec![1],
                ..sample_graph()
            },
            "split_counts",
            "split_counts has 1 entries",
        ),
    ];
    for (graph, field, text) in cases {
        let status = refusal(&mut client, vec![start(graph)]).await;
        let details = details_of(&status, Code::InvalidArgument, "INVALID_GRAPH");
        let violations = &details.bad_request().expect("BadRequest").field_violations;
        assert_eq!(violations.len(), 1, "{status:?}");
        assert_eq!(violations[0].field, field, "{status:?}");
        assert!(violations[0].description.contains(text), "{status:?}");
        assert!(status.message().contains(text), "{status:?}");
    }

    // A split game on a cycle: the graph is well-formed but not a game this API defines.
    let mut cyclic = crate::support::server::cycle(3);
    cyclic.split_counts = vec![1; 3];
    let status = refusal(&mut client, vec![start(cyclic)]).await;
    let details = details_of(&status, Code::InvalidArgument, "SPLIT_GRAPH_CYCLE");
    assert_eq!(
        details.bad_request().unwrap().field_violations[0].field,
        "targets"
    );

    // Protocol misuse names the field too.
    let no_source = EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: None,
            explain: false,
            analysis: None,
            play_convention: 0,
        })),
    };
    for (messages, field) in [
        (vec![no_source], "start.graph_source"),
        (vec![batch(vec![tokens(1, &[0])])], "start"),
        (vec![start(sample_graph()), start(sample_graph())], "start"),
    ] {
        let status = refusal(&mut client, messages).await;
        let details = details_of(&status, Code::InvalidArgument, "INVALID_REQUEST");
        let violations = &details.bad_request().expect("BadRequest").field_violations;
        assert_eq!(violations[0].field, field, "{status:?}");
    }
}

#[tokio::test]
async fn limits_carry_error_info_with_the_limit_and_a_quota_failure() {
    let server = serve(small_limits()).await;
    let mut client = server.client().await;

    let status = refusal(&mut client, vec![start(chain(11))]).await;
    assert_limit(&status, "GRAPH_TOO_LARGE", "max_vertices", 10);

    let mut dense = chain(10);
    dense.out_degrees = vec![2; 10];
    dense.targets = (0..20).map(|i| i % 10).collect();
    let status = refusal(&mut client, vec![start(dense)]).await;
    assert_limit(&status, "GRAPH_TOO_LARGE", "max_edges", 12);

    let six = (0..6).map(|i| tokens(i, &[0])).collect();
    let status = client
        .evaluate_batch(batch_request(GraphSource::Graph(sample_graph()), six))
        .await
        .unwrap_err();
    assert_limit(&status, "TOO_MANY_QUERIES", "max_queries_per_stream", 5);

    // A message over max_message_bytes: unary (rewritten from tonic's OUT_OF_RANGE on the
    // way out) and inside a stream.
    let big: Vec<Query> = (0..3).map(|i| tokens(i, &vec![0; 30_000])).collect();
    let status = client
        .evaluate_batch(batch_request(
            GraphSource::Graph(sample_graph()),
            big.clone(),
        ))
        .await
        .unwrap_err();
    assert_limit(&status, "MESSAGE_TOO_LARGE", "max_message_bytes", 64 << 10);
    let Stream {
        requests,
        mut responses,
    } = open_stream(&mut client, sample_graph()).await;
    requests.send(batch(big)).await.unwrap();
    let status = next(&mut responses).await.unwrap_err();
    assert_limit(&status, "MESSAGE_TOO_LARGE", "max_message_bytes", 64 << 10);
}

#[tokio::test]
async fn analysis_budgets_and_the_stream_limit_carry_their_limits() {
    let mut service = service_config();
    service.limits.cyclic_work_budget = 20_000;
    service.max_concurrent_streams = 1;
    let server = serve(ServerConfig {
        service,
        ..server_config()
    })
    .await;
    let mut client = server.client().await;
    let status = refusal(&mut client, vec![start(tournament_with_self_loop(60))]).await;
    assert_limit(&status, "CYCLIC_WORK_BUDGET", "max_cyclic_work", 20_000);
    server.wait_idle().await;

    // The one stream slot taken: the next call is refused, retryable after a delay.
    let held = open_stream(&mut client, sample_graph()).await;
    let status = refusal(&mut client, vec![start(sample_graph())]).await;
    assert_limit(&status, "TOO_MANY_STREAMS", "max_concurrent_streams", 1);
    let retry = status.get_error_details().retry_info().cloned();
    assert!(retry.expect("RetryInfo").retry_delay.is_some());
    drop(held);
}

#[tokio::test]
async fn a_draining_server_says_when_to_retry() {
    let mut server = serve(server_config()).await;
    let mut client = server.client().await;
    // A stream in flight keeps the server draining while the next call is refused.
    let held = open_stream(&mut client, sample_graph()).await;
    server.begin_shutdown();
    // Draining once health says NOT_SERVING.
    let mut health = HealthClient::new(server.channel().await);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let request = HealthCheckRequest {
            service: String::new(),
        };
        let status = health.check(request).await.unwrap().into_inner().status();
        if status == ServingStatus::NotServing {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "NOT_SERVING in time"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let status = refusal(&mut client, vec![start(sample_graph())]).await;
    let details = details_of(&status, Code::Unavailable, "SHUTTING_DOWN");
    let delay = details.retry_info().expect("RetryInfo").retry_delay;
    assert!(delay.is_some_and(|d| d > Duration::ZERO), "{delay:?}");
    drop(held);
    server.stopped().await.unwrap();
}

#[tokio::test]
async fn unknown_ids_missing_tokens_and_deadlines_carry_a_reason() {
    let server = serve(ServerConfig {
        auth_token: Some("s3cret".into()),
        ..server_config()
    })
    .await;
    let channel = server.channel().await;
    let mut anonymous = GrundyServiceClient::new(channel.clone());
    let status = refusal(&mut anonymous, vec![start(sample_graph())]).await;
    details_of(&status, Code::Unauthenticated, "UNAUTHENTICATED");

    let token: tonic::metadata::MetadataValue<_> = "Bearer s3cret".parse().unwrap();
    let mut client =
        GrundyServiceClient::with_interceptor(channel, move |mut request: tonic::Request<()>| {
            request
                .metadata_mut()
                .insert("authorization", token.clone());
            Ok(request)
        });
    let (held, rx) = mpsc::channel(1);
    held.send(start_id("no-such-graph")).await.unwrap();
    let opened = client.evaluate(ReceiverStream::new(rx)).await;
    let status = match opened {
        Err(status) => status,
        Ok(response) => next(&mut response.into_inner()).await.unwrap_err(),
    };
    details_of(&status, Code::NotFound, "UNKNOWN_GRAPH");

    // An idle stream past the client's deadline.
    let (held, rx) = mpsc::channel(1);
    held.send(start(sample_graph())).await.unwrap();
    let mut request = tonic::Request::new(ReceiverStream::new(rx));
    request.set_timeout(Duration::from_millis(300));
    let mut responses = client.evaluate(request).await.unwrap().into_inner();
    assert!(next(&mut responses).await.unwrap().graph.is_some());
    let status = next(&mut responses).await.unwrap_err();
    let details = details_of(&status, Code::DeadlineExceeded, "DEADLINE_EXCEEDED");
    assert_eq!(metadata(&details)["timeout_ms"], "300");
    drop(held);
}

#[test]
fn every_reason_is_documented_in_the_operating_guide() {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operating.md"))
        .expect("docs/operating.md");
    let mut reasons = 0;
    for value in 1..1000 {
        let Ok(reason) = ErrorReason::try_from(value) else {
            break;
        };
        let name = reason.as_str_name().strip_prefix("ERROR_REASON_").unwrap();
        assert!(
            guide.contains(&format!("| `{name}` |")),
            "{name} is not in the error table of docs/operating.md"
        );
        reasons += 1;
    }
    assert!(reasons >= 20, "{reasons} reasons");
}

#[test]
fn reflection_serves_the_error_reasons() {
    use prost::Message;
    let files = prost_types::FileDescriptorSet::decode(proto::FILE_DESCRIPTOR_SET).unwrap();
    let errors = files
        .file
        .iter()
        .find(|file| file.name() == "grundy/v1/errors.proto")
        .expect("errors.proto is in the reflection descriptors");
    assert_eq!(errors.package(), "grundy.v1");
    assert_eq!(errors.enum_type[0].name(), "ErrorReason");
}
