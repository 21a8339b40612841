//! The servers a judge run talks to: the endpoints of `--server` (one or more,
//! comma-separated), or the embedded server. Test cases are spread over them in turn, and an
//! attempt that fails moves on to the next one.

use tokio::sync::OnceCell;

use super::embedded::{EmbeddedServer, upload_config};
use super::error::RunError;
use crate::client::{self, ClientError, ConnectionArgs, GrundyClient};

/// One server: its URL (for messages) and a client whose channel reconnects after a lost
/// connection.
pub(super) struct Endpoint {
    pub(super) url: String,
    pub(super) client: GrundyClient,
    /// The embedded upload server: in this process, up for the whole run, and never forgets
    /// an upload, so the client need not keep its copy of an uploaded graph.
    pub(super) keeps_uploads: bool,
}

/// The endpoints of a run. Without `--server`, one embedded server, plus a second one started
/// when a graph too large for one message must be uploaded: it keeps uploaded graphs for the
/// run, while the first caches nothing (see `embedded`).
pub(super) struct Endpoints {
    endpoints: Vec<Endpoint>,
    /// Embedded runs only: the message limit of the upload server, and the server once started.
    embedded_uploads: Option<(usize, OnceCell<(EmbeddedServer, Endpoint)>)>,
    _embedded: Option<EmbeddedServer>,
}

impl Endpoints {
    /// Connects to every URL of `servers` at once. Endpoints that cannot be reached now are
    /// kept (they are dialled again when a test case turns to them) with a warning, unless
    /// none can be reached: then the first failure is the run's error.
    pub(super) async fn connect(
        servers: &str,
        connection: &ConnectionArgs,
        max_message_bytes: usize,
    ) -> Result<Self, RunError> {
        let urls = client::server_list(servers);
        if urls.is_empty() {
            return Err(RunError::Failure(format!(
                "--server {servers:?} names no server"
            )));
        }
        // Dialled at once, so that one unreachable host does not delay the others.
        let attempts: Vec<_> = urls
            .iter()
            .map(|url| {
                let (url, connection) = (url.clone(), connection.clone());
                tokio::spawn(
                    async move { client::connect(&url, &connection, max_message_bytes).await },
                )
            })
            .collect();
        let mut endpoints = Vec::with_capacity(urls.len());
        let mut first_error: Option<ClientError> = None;
        let mut unreachable = 0;
        for (url, attempt) in urls.into_iter().zip(attempts) {
            let result = attempt
                .await
                .map_err(|e| RunError::Failure(format!("internal error: connecting: {e}")))?;
            let client = match result {
                Ok(client) => client,
                Err(error @ ClientError::Connect { .. }) => {
                    let lazy = client::connect_lazy(&url, connection, max_message_bytes)?;
                    first_error.get_or_insert(error);
                    unreachable += 1;
                    lazy
                }
                Err(error) => return Err(error.into()),
            };
            endpoints.push(Endpoint {
                url,
                client,
                keeps_uploads: false,
            });
        }
        if let Some(error) = first_error {
            if unreachable == endpoints.len() {
                return Err(error.into());
            }
            eprintln!("grundy: {error}; going on with the other servers");
        }
        Ok(Self {
            endpoints,
            embedded_uploads: None,
            _embedded: None,
        })
    }

    /// The embedded server (started here) as the only endpoint.
    pub(super) async fn embedded(max_message_bytes: usize) -> Result<Self, RunError> {
        let server = EmbeddedServer::start(max_message_bytes).await?;
        let client =
            client::connect(&server.url, &ConnectionArgs::default(), max_message_bytes).await?;
        Ok(Self {
            endpoints: vec![Endpoint {
                url: server.url.clone(),
                client,
                keeps_uploads: false,
            }],
            embedded_uploads: Some((max_message_bytes, OnceCell::new())),
            _embedded: Some(server),
        })
    }

    /// How many endpoints there are (at least one).
    pub(super) fn len(&self) -> usize {
        self.endpoints.len()
    }

    /// Endpoint `index` (modulo their number) for a stream whose graph is sent inline.
    pub(super) fn get(&self, index: usize) -> &Endpoint {
        &self.endpoints[index % self.endpoints.len()]
    }

    /// Endpoint `index` for a graph uploaded with `PutGraph`: the same as [`Self::get`] with
    /// `--server`; in an embedded run, the upload server (started on first use).
    pub(super) async fn for_upload(&self, index: usize) -> Result<&Endpoint, RunError> {
        let Some((max_message_bytes, uploads)) = &self.embedded_uploads else {
            return Ok(self.get(index));
        };
        let (_, endpoint) = uploads
            .get_or_try_init(|| async {
                let server = EmbeddedServer::start_with(
                    std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
                    upload_config(*max_message_bytes),
                )
                .await?;
                let client =
                    client::connect(&server.url, &ConnectionArgs::default(), *max_message_bytes)
                        .await?;
                let url = server.url.clone();
                let endpoint = Endpoint {
                    url,
                    client,
                    keeps_uploads: true,
                };
                Ok::<_, RunError>((server, endpoint))
            })
            .await?;
        Ok(endpoint)
    }
}
