//! `grundy-server`: serves `grundy.v1.GrundyService` over gRPC.

use std::net::SocketAddr;

use clap::Parser;
use grundy::server::{self, DEFAULT_MAX_MESSAGE_BYTES, ServerConfig};

/// Serve the grundy.v1 game evaluation API over gRPC.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "GRUNDY_LISTEN", default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// Largest gRPC message accepted or sent, in bytes (graphs must fit in one message).
    #[arg(long, env = "GRUNDY_MAX_MESSAGE_BYTES", default_value_t = DEFAULT_MAX_MESSAGE_BYTES)]
    max_message_bytes: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    grundy::cli::init_tracing();
    let args = Args::parse();
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", args.listen))?;
    tracing::info!(address = %listener.local_addr()?, "grundy-server listening");
    let config = ServerConfig {
        max_message_bytes: args.max_message_bytes,
        ..ServerConfig::default()
    };
    server::run(listener, config, shutdown_signal()).await?;
    tracing::info!("grundy-server stopped");
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutdown signal received; finishing in-flight streams");
}
