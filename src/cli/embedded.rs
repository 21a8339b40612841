//! The in-process server a run uses without `--server`: the real server, configured for one
//! run, reached through in-memory pipes (judge, analyse, render) or on a loopback port (play,
//! whose page the browser opens).

use std::future::Future;
use std::pin::Pin;

use tokio::io::DuplexStream;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;

use super::error::RunError;
use crate::client::{self, GrundyClient};
use crate::engine::graph::MAX_EDGES;
use crate::service::{self, AnalysisCaps, GameService, ServerConfig, ServerError, ServiceConfig};

/// The shutdown future a server is given: it resolves when the server's owner is dropped.
type Shutdown = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The server of a run, reached through in-memory pipes; stops when dropped.
pub(super) struct InProcessServer {
    _shutdown: oneshot::Sender<()>,
}

impl InProcessServer {
    /// Starts the server of `config` on a task of the current runtime, and a client
    /// connected to it. Nothing else can reach it, so it serves no reflection and no JSON.
    pub(super) async fn start(mut config: ServerConfig) -> Result<(Self, GrundyClient), RunError> {
        config.reflection = false;
        config.json = false;
        // Connections wait here until the server takes them (a channel opens one or two).
        const PENDING_CONNECTIONS: usize = 4;
        let (pipes, incoming) = mpsc::channel::<DuplexStream>(PENDING_CONNECTIONS);
        let incoming = ReceiverStream::new(incoming).map(Ok::<_, std::io::Error>);
        let max_message_bytes = config.max_message_bytes;
        let shutdown = serve_until_dropped(move |stop| async move {
            let service = GameService::new(config.service.clone());
            service::serve_connections(incoming, service, &config, stop).await
        });
        let client = client::connect_in_process(pipes, max_message_bytes).await?;
        Ok((
            Self {
                _shutdown: shutdown,
            },
            client,
        ))
    }
}

/// The in-process server on a loopback port; stops when dropped.
pub(super) struct EmbeddedServer {
    /// Where it listens (`http://127.0.0.1:PORT`).
    pub(super) url: String,
    _shutdown: oneshot::Sender<()>,
}

impl EmbeddedServer {
    /// Binds `address` and serves `config` on it from a task of the current runtime.
    pub(super) async fn start_with(
        address: std::net::SocketAddr,
        config: ServerConfig,
    ) -> Result<Self, RunError> {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(RunError::EmbeddedServer)?;
        let address = listener.local_addr().map_err(RunError::EmbeddedServer)?;
        let shutdown = serve_until_dropped(move |stop| service::run(listener, config, stop));
        Ok(Self {
            url: format!("http://{address}"),
            _shutdown: shutdown,
        })
    }
}

/// Runs `serve` on a task of the current runtime until the returned sender is dropped (its
/// shutdown future then resolves and the server drains); a failure is logged.
fn serve_until_dropped<F, S>(serve: S) -> oneshot::Sender<()>
where
    S: FnOnce(Shutdown) -> F,
    F: Future<Output = Result<(), ServerError>> + Send + 'static,
{
    let (shutdown, stopped) = oneshot::channel::<()>();
    let serving = serve(Box::pin(async {
        let _ = stopped.await;
    }));
    tokio::spawn(async move {
        if let Err(e) = serving.await {
            tracing::error!("embedded server failed: {e}");
        }
    });
    shutdown
}

/// The embedded server serves this one run: no table cache (each test case's table is
/// dropped once its stream ends, so memory does not grow with the number of test cases) and
/// the engine's own maxima instead of a shared server's limits. Only the user's
/// `--max-message-bytes` applies.
pub(super) fn embedded_config(max_message_bytes: usize) -> ServerConfig {
    ServerConfig {
        service: ServiceConfig {
            cache_bytes: 0,
            max_vertices: u32::MAX,
            max_edges: MAX_EDGES,
            max_queries_per_stream: u64::MAX,
            // Its one client may wait on its input as long as it likes (a terminal).
            stream_idle_timeout: None,
            // `grundy analyse` asks for its own caps (the defaults when its flags are 0).
            analysis: AnalysisCaps {
                max_moves: u32::MAX,
                position_budget: u64::MAX,
                // Not asked by clients: the engine's default bounds each query's search.
                work_budget: crate::engine::DEFAULT_WORK_BUDGET,
            },
            ..ServiceConfig::default()
        },
        max_message_bytes,
        ..ServerConfig::default()
    }
}

/// The second embedded server of a judge run, for graphs too large for one message: they are
/// uploaded with `PutGraph` and evaluated by id, so it keeps their tables (the first server
/// caches nothing). Its cache holds every such graph of the run.
pub(super) fn upload_config(max_message_bytes: usize) -> ServerConfig {
    /// No bound in practice, with room for the cache's sums.
    const UNBOUNDED_BYTES: usize = 1 << 50;
    let mut config = embedded_config(max_message_bytes);
    config.service.cache_bytes = UNBOUNDED_BYTES;
    config
}

/// The embedded server of `render` and `play`: as [`embedded_config`], plus a small table
/// cache, since they register the graph (`PutGraph`) and read its values (`GetValues`).
pub(super) fn viewer_config(max_message_bytes: usize) -> ServerConfig {
    const VIEWER_CACHE_BYTES: usize = 256 << 20;
    let mut config = embedded_config(max_message_bytes);
    config.service.cache_bytes = VIEWER_CACHE_BYTES;
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_server_caches_nothing_and_has_only_the_engines_limits() {
        let config = embedded_config(12345);
        assert_eq!(config.max_message_bytes, 12345);
        assert_eq!(config.service.cache_bytes, 0);
        assert_eq!(config.service.max_vertices, u32::MAX);
        assert_eq!(config.service.max_edges, u64::from(u32::MAX));
        assert_eq!(config.service.max_queries_per_stream, u64::MAX);
    }
}
