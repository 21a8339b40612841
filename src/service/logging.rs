//! Log setup of `grundy-server`: `tracing` on stderr, text for people or JSON for collectors,
//! and optionally the OTLP trace layer of [`super::telemetry`].

use std::io::IsTerminal;

use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use super::telemetry::BoxedLayer;

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (coloured at a terminal).
    Text,
    /// One JSON object per line.
    Json,
}

/// Sets up `tracing` on stderr in `format`, filtered by `RUST_LOG` (default:
/// `default_filter`). Each RPC logs one "rpc finished" event in its span (graph id, sizes,
/// code, duration, outcomes).
pub fn init_tracing(format: LogFormat, default_filter: &str) {
    init_tracing_with(format, default_filter, None);
}

/// Like [`init_tracing`], with `traces` (the layer of [`super::telemetry::Telemetry::otlp`])
/// beside the log: `RUST_LOG` filters the log only, not the exported spans.
pub fn init_tracing_with(format: LogFormat, default_filter: &str, traces: Option<BoxedLayer>) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter));
    let log = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let log: BoxedLayer = match format {
        // Colours only for a person at a terminal, not for files and collectors.
        LogFormat::Text => log
            .with_ansi(std::io::stderr().is_terminal())
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => log
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .with_filter(filter)
            .boxed(),
    };
    let mut layers = vec![log];
    layers.extend(traces);
    tracing_subscriber::registry().with(layers).init();
}
