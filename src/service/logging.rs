//! Log setup of `grundy-server`: `tracing` on stderr, text for people or JSON for collectors.

use std::io::IsTerminal;

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
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        // Colours only for a person at a terminal, not for files and collectors.
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
}
