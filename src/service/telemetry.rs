//! Traces over OTLP (`--otlp-endpoint`): the `tracing` spans of the service (one per RPC,
//! children for analyses and evaluations) exported as OpenTelemetry spans over OTLP/gRPC,
//! each RPC's span the child of the caller's span named by the W3C `traceparent` header, so
//! that a calling service's trace continues into grundy.
//!
//! Off by default, and then free: no layer is installed and no header is parsed
//! ([`continue_remote_trace`] returns at once).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry::propagation::Extractor;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tonic::metadata::MetadataMap;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::{Layer, Registry};

/// Set once traces are exported: only then is `traceparent` read.
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// How long shutdown waits for the last spans to reach the collector.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// A `tracing` layer, boxed to join the subscriber whatever else it holds.
pub type BoxedLayer = Box<dyn Layer<Registry> + Send + Sync>;

/// Why the trace exporter could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot set up the OTLP trace exporter for {endpoint}: {source}")]
pub struct TelemetryError {
    endpoint: String,
    source: opentelemetry_otlp::ExporterBuildError,
}

/// The trace exporter of a running server; [`Telemetry::shutdown`] flushes it.
#[derive(Debug)]
pub struct Telemetry {
    provider: SdkTracerProvider,
}

impl Telemetry {
    /// An exporter sending spans in batches to the OTLP/gRPC collector at `endpoint` (e.g.
    /// `http://127.0.0.1:4317`), and the layer that feeds it grundy's spans. Turns on
    /// `traceparent` propagation. Call inside the Tokio runtime: the exporter's gRPC channel
    /// runs on it.
    pub fn otlp(endpoint: &str) -> Result<(Self, BoxedLayer), TelemetryError> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .build()
            .map_err(|source| TelemetryError {
                endpoint: endpoint.to_string(),
                source,
            })?;
        let resource = Resource::builder_empty()
            .with_service_name("grundy-server")
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("grundy");
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        EXPORTING.store(true, Ordering::Release);
        // grundy's own spans only (not h2's or tonic's), whatever RUST_LOG says for the logs.
        let spans = Targets::new().with_target("grundy", LevelFilter::INFO);
        let layer = tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(spans)
            .boxed();
        Ok((Self { provider }, layer))
    }

    /// Exports the spans still buffered and stops the exporter (off the async runtime: the
    /// SDK blocks while the export runs on it).
    pub async fn shutdown(self) {
        let provider = self.provider;
        let flushed =
            tokio::task::spawn_blocking(move || provider.shutdown_with_timeout(FLUSH_TIMEOUT))
                .await;
        match flushed {
            Ok(Ok(())) => tracing::debug!("trace exporter flushed"),
            Ok(Err(error)) => tracing::warn!(%error, "trace exporter: last spans not exported"),
            Err(error) => tracing::warn!(%error, "trace exporter: flush failed"),
        }
    }
}

/// Makes `span` the child of the caller's span named by the request's `traceparent` (and
/// `tracestate`) metadata, when traces are exported; a request without one starts a trace.
pub(crate) fn continue_remote_trace(span: &Span, metadata: &MetadataMap) {
    if !EXPORTING.load(Ordering::Acquire) {
        return;
    }
    let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&MetadataExtractor(metadata))
    });
    // Fails only when the span is disabled (filtered out): nothing to continue then.
    let _ = span.set_parent(parent);
}

/// Reads propagation headers from gRPC request metadata.
struct MetadataExtractor<'a>(&'a MetadataMap);

impl Extractor for MetadataExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0
            .keys()
            .filter_map(|key| match key {
                tonic::metadata::KeyRef::Ascii(key) => Some(key.as_str()),
                tonic::metadata::KeyRef::Binary(_) => None,
            })
            .collect()
    }
}
