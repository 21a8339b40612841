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
use opentelemetry_otlp::{WithExportConfig, WithTonicConfig};
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

/// How long one export may take (the exporter's default), on a channel made here.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the trace exporter could not be set up. The causes are part of the message, not
/// [`std::error::Error::source`]s, so that a caller printing the chain does not repeat them.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// `--otlp-endpoint` is no http:// or https:// URL.
    #[error("invalid --otlp-endpoint: {0}")]
    Endpoint(String),
    /// The exporter refused its configuration.
    #[error("cannot set up the OTLP trace exporter for {endpoint}: {cause}")]
    Exporter {
        /// The endpoint given.
        endpoint: String,
        /// The exporter's (or its TLS set-up's) reason.
        cause: String,
    },
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
        let https = check_endpoint(endpoint).map_err(TelemetryError::Endpoint)?;
        let failed = |cause: &dyn std::fmt::Display| TelemetryError::Exporter {
            endpoint: endpoint.to_string(),
            cause: cause.to_string(),
        };
        let builder = opentelemetry_otlp::SpanExporter::builder().with_tonic();
        let builder = if https {
            // The exporter's own https:// support needs a TLS feature of its crate; the
            // service's tonic has TLS already: a channel of its own, verified against the
            // system's trust roots.
            let channel = tonic::transport::Endpoint::from_shared(endpoint.to_string())
                .and_then(|channel| {
                    channel.tls_config(tonic::transport::ClientTlsConfig::new().with_native_roots())
                })
                .map_err(|e| failed(&with_causes(&e)))?
                .timeout(EXPORT_TIMEOUT)
                .connect_lazy();
            builder.with_channel(channel).with_timeout(EXPORT_TIMEOUT)
        } else {
            builder.with_endpoint(endpoint)
        };
        let exporter = builder.build().map_err(|e| failed(&e))?;
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

/// `error` and its causes ("transport error" alone says nothing).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Whether `endpoint` is https:// (else http://); `Err` says what to write instead. Without a
/// scheme the exporter would take https://, and refuse it for a feature of its crate.
fn check_endpoint(endpoint: &str) -> Result<bool, String> {
    let scheme = endpoint.split_once("://").map(|(scheme, _)| scheme);
    match scheme {
        Some("http") => Ok(false),
        Some("https") => Ok(true),
        _ => {
            let rest = match scheme {
                Some(scheme) => &endpoint[scheme.len() + 3..],
                None => endpoint,
            };
            // The host and port as given, for the example, when short and plain.
            let plain = !rest.is_empty()
                && rest.len() <= 64
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b));
            let example = if plain { rest } else { "127.0.0.1:4317" };
            let what = if scheme.is_some() {
                "its scheme is not http:// or https://"
            } else {
                "it has no scheme"
            };
            Err(format!(
                "{what}: write http:// (plaintext) or https:// (TLS) before the collector's \
                 host and port, e.g. --otlp-endpoint http://{example}"
            ))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_needs_http_or_https_and_the_error_shows_one() {
        assert_eq!(check_endpoint("http://127.0.0.1:4317"), Ok(false));
        assert_eq!(check_endpoint("https://otlp.example:4317"), Ok(true));
        for (endpoint, said) in [
            ("localhost:4317", "it has no scheme"),
            ("127.0.0.1:4317", "it has no scheme"),
            (
                "ftp://localhost:4317",
                "its scheme is not http:// or https://",
            ),
        ] {
            let error = check_endpoint(endpoint).unwrap_err();
            assert!(error.contains(said), "{endpoint}: {error}");
            assert!(
                error.contains("http:// (plaintext) or https:// (TLS)"),
                "{endpoint}: {error}"
            );
        }
        let error = check_endpoint("localhost:4317").unwrap_err();
        assert!(
            error.ends_with("e.g. --otlp-endpoint http://localhost:4317"),
            "{error}"
        );
        // Text that is no host and port is not repeated: the example is a plain one.
        let error = check_endpoint(&format!("{}:1", "x".repeat(500))).unwrap_err();
        assert!(error.ends_with("http://127.0.0.1:4317"), "{error}");
        let error = check_endpoint("user:pw@collector:4317").unwrap_err();
        assert!(!error.contains("pw"), "{error}");
    }

    #[tokio::test]
    async fn a_refused_endpoint_is_said_once_and_names_the_flag() {
        let error = Telemetry::otlp("localhost:4317").err().expect("refused");
        let said = error.to_string();
        assert!(said.starts_with("invalid --otlp-endpoint: "), "{said}");
        assert!(std::error::Error::source(&error).is_none());
    }
}
