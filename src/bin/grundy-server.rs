//! `grundy-server`: serves `grundy.v1.GrundyService` over gRPC. Flags (and their `GRUNDY_*`
//! environment variables) are in [`grundy::service::ServerArgs`]; `--help` lists them.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use grundy::service::{self, GameService, ServerArgs};
use tokio::sync::watch;

/// How long the process waits, once the server has stopped, for work still running on the
/// blocking pool. The drain cancels every stream, and the work of a cancelled stream or of an
/// analysis nobody waits for stops within milliseconds; this bounds whatever else is left
/// (tokio otherwise waits for it without end).
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Runs the server; a failure is one `error: ...` line on stderr (as the CLI prints) and
/// exit code 1.
fn main() -> ExitCode {
    grundy::allocator::keep_freed_memory(grundy::allocator::SERVICE);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build();
    let served = match runtime {
        Ok(runtime) => {
            let served = runtime.block_on(serve(ServerArgs::parse()));
            runtime.shutdown_timeout(EXIT_GRACE);
            served
        }
        Err(e) => Err(anyhow::anyhow!("cannot start the async runtime: {e}")),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: ServerArgs) -> anyhow::Result<()> {
    let (telemetry, traces) = match &args.otlp_endpoint {
        Some(endpoint) => {
            let (telemetry, layer) = service::Telemetry::otlp(endpoint)?;
            (Some(telemetry), Some(layer))
        }
        None => (None, None),
    };
    service::init_tracing_with(args.log_format, "info", traces);
    let config = args.server_config()?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", args.listen))?;
    let state = GameService::new(config.service.clone());

    // The metrics exporter stops with the gRPC server.
    let (stopped, stopping) = watch::channel(false);
    if let Some(address) = args.metrics_listen {
        let metrics_listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen for metrics on {address}: {e}"))?;
        tracing::info!(address = %metrics_listener.local_addr()?, "metrics at /metrics");
        let mut stopping = stopping.clone();
        tokio::spawn(service::serve_metrics(
            metrics_listener,
            state.metrics().clone(),
            async move {
                let _ = stopping.wait_for(|&stop| stop).await;
            },
        ));
    }
    tracing::info!(
        address = %listener.local_addr()?,
        tls = config.tls.is_some(),
        auth = config.auth_token.is_some(),
        store = config.service.store.as_ref().map_or("memory", |store| store.kind()),
        "grundy-server listening"
    );
    let served = service::run_service(listener, state, &config, shutdown_signal()).await;
    let _ = stopped.send(true);
    // The spans of the last RPCs are still buffered: export them before exiting.
    if let Some(telemetry) = telemetry {
        telemetry.shutdown().await;
    }
    served?;
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
    tracing::info!("shutdown signal received");
}
