//! Traces over OTLP: `grundy-server --otlp-endpoint` (the real binary, since a tracing
//! subscriber is process-wide) exports its RPC spans to an in-test OTLP collector (a tonic
//! server of the collector's `TraceService`), continuing the trace named by the caller's W3C
//! `traceparent`, and flushes the spans still buffered when it shuts down on SIGTERM; over
//! plaintext (`http://`) and TLS (`https://`).

use std::process::Command;

use crate::support::process::{RUN_TIMEOUT, ServerProcess};
use crate::support::server::{PATIENCE, sample_graph, tokens};
use crate::support::tls::{TempDir, pki};
use grundy::proto::grundy_service_client::GrundyServiceClient;
use grundy::proto::{EvaluateBatchRequest, EvaluateStart, evaluate_start::GraphSource};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::trace::v1::Span;
use tokio::sync::mpsc;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::transport::{Identity, ServerTlsConfig};

/// The caller's trace and span, as its `traceparent` names them.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN_ID: &str = "00f067aa0ba902b7";

/// A collector that hands every exported span to the test.
struct Collector(mpsc::UnboundedSender<Span>);

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let spans = request
            .into_inner()
            .resource_spans
            .into_iter()
            .flat_map(|resource| resource.scope_spans)
            .flat_map(|scope| scope.spans);
        for span in spans {
            let _ = self.0.send(span);
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test]
async fn rpc_spans_reach_the_collector_in_the_callers_trace() {
    spans_reach_the_collector(None).await;
}

/// The same over TLS (`https://`): the collector's certificate is verified against the
/// system's trust roots, which `SSL_CERT_FILE` replaces here with the test CA.
#[tokio::test]
async fn rpc_spans_reach_a_tls_collector_over_https() {
    let pki = pki();
    let dir = TempDir::new("otlp-tls");
    let ca = dir.write("ca.pem", pki.ca_pem.as_bytes());
    let identity = Identity::from_pem(pki.server_cert_pem, pki.server_key_pem);
    spans_reach_the_collector(Some((identity, ca.to_str().unwrap()))).await;
}

/// Runs a traced RPC through `grundy-server --otlp-endpoint` to an in-test collector, plain
/// or (with its identity, and the CA file that signed it) over TLS, and checks its spans.
async fn spans_reach_the_collector(tls: Option<(Identity, &str)>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let collector_address = listener.local_addr().unwrap();
    let (spans_tx, mut spans) = mpsc::unbounded_channel();
    let mut builder = tonic::transport::Server::builder();
    if let Some((identity, _)) = &tls {
        let config = ServerTlsConfig::new().identity(identity.clone());
        builder = builder.tls_config(config).unwrap();
    }
    let collector = tokio::spawn(
        builder
            .add_service(TraceServiceServer::new(Collector(spans_tx)))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    let (endpoint, env) = match tls {
        // The certificate is for "localhost" (and 127.0.0.1).
        Some((_, ca)) => (
            format!("https://localhost:{}", collector_address.port()),
            vec![("SSL_CERT_FILE", ca)],
        ),
        None => (format!("http://{collector_address}"), vec![]),
    };
    let server = ServerProcess::start_with_env(
        env!("CARGO_BIN_EXE_grundy-server"),
        &["--otlp-endpoint", &endpoint],
        &env,
    );

    let mut client = GrundyServiceClient::connect(server.url()).await.unwrap();
    let mut request = tonic::Request::new(EvaluateBatchRequest {
        start: Some(EvaluateStart {
            graph_source: Some(GraphSource::Graph(sample_graph())),
            explain: false,
            analysis: None,
            play_convention: 0,
        }),
        queries: vec![tokens(1, &[0]), tokens(2, &[1])],
    });
    let traceparent = format!("00-{TRACE_ID}-{PARENT_SPAN_ID}-01");
    request
        .metadata_mut()
        .insert("traceparent", traceparent.parse().unwrap());
    let mut responses = client.evaluate_batch(request).await.unwrap().into_inner();
    while let Some(response) = tokio::time::timeout(PATIENCE, responses.message())
        .await
        .expect("a response in time")
        .unwrap()
    {
        drop(response);
    }
    drop(responses);
    drop(client);

    // SIGTERM: the server drains, exits and flushes the spans it still buffers.
    let status = Command::new("kill")
        .args(["-TERM", &server.child.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());

    let mut rpc_span = None;
    let mut children = Vec::new();
    let deadline = tokio::time::Instant::now() + RUN_TIMEOUT;
    while rpc_span.is_none() || children.is_empty() {
        let span = tokio::time::timeout_at(deadline, spans.recv())
            .await
            .expect("the collector receives the RPC span and its children in time")
            .expect("the collector runs");
        if hex(&span.trace_id) != TRACE_ID {
            continue;
        }
        if span.name == "rpc" {
            rpc_span = Some(span);
        } else if span.name == "analysis" || span.name == "evaluation" {
            children.push(span);
        }
    }
    let rpc_span = rpc_span.unwrap();
    // The caller's span is the parent of the RPC's; the analysis and evaluation spans are
    // the RPC's children.
    assert_eq!(hex(&rpc_span.parent_span_id), PARENT_SPAN_ID);
    for child in &children {
        assert_eq!(child.parent_span_id, rpc_span.span_id, "{}", child.name);
    }
    collector.abort();
}
