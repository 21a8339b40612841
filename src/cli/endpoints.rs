//! The servers a judge run talks to: the endpoints of `--server` (one or more,
//! comma-separated), or the embedded server. Test cases are spread over them in turn, and an
//! attempt that fails moves on to the next one.
//!
//! An endpoint that failed (unreachable at the start, or a stream on it broke) is remembered:
//! new test cases and resumed streams go to the others while any is live, so that they do not
//! each pay a backoff on a server already found dead. Once [`PROBE_AFTER`] has passed, one
//! test case at a time is sent there again as a recovery probe; an attempt that succeeds
//! makes the endpoint live again.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use super::embedded::{InProcessServer, embedded_config, upload_config};
use super::error::RunError;
use super::output::stderr_line;
use crate::client::{self, ClientError, ConnectionArgs, GrundyClient};

/// The embedded servers in messages (their loopback URLs mean nothing to the user).
const EMBEDDED: &str = "the embedded server";
const EMBEDDED_UPLOADS: &str = "the embedded upload server";

/// How long a failed endpoint gets no new work before one test case probes it again.
const PROBE_AFTER: Duration = Duration::from_secs(1);

/// One server: its name in messages and a client whose channel reconnects after a lost
/// connection.
pub(super) struct Endpoint {
    /// The URL the user gave, or (never shown as if the user had given it) the words for an
    /// embedded server.
    pub(super) url: String,
    pub(super) client: GrundyClient,
    /// The embedded upload server: in this process, up for the whole run, and never forgets
    /// an upload, so the client need not keep its copy of an uploaded graph.
    pub(super) keeps_uploads: bool,
    /// How a `--server` endpoint is reached (TLS, token), to explain a refused handshake;
    /// `None` for an embedded server.
    pub(super) connection: Option<ConnectionArgs>,
    /// When it last failed (or was last probed after failing); `None` while it is live.
    failed_at: Mutex<Option<Instant>>,
}

impl Endpoint {
    fn new(url: String, client: GrundyClient, keeps_uploads: bool) -> Self {
        Self {
            url,
            client,
            keeps_uploads,
            connection: None,
            failed_at: Mutex::new(None),
        }
    }

    fn failed_at(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        // The value is a plain timestamp: a panic elsewhere cannot leave it half-written.
        self.failed_at
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The endpoints of a run. Without `--server`, one embedded server, plus a second one started
/// when a graph too large for one message must be uploaded: it keeps uploaded graphs for the
/// run, while the first caches nothing (see `embedded`).
pub(super) struct Endpoints {
    endpoints: Vec<Endpoint>,
    /// Embedded runs only: the message limit of the upload server, and the server once started.
    embedded_uploads: Option<(usize, OnceCell<(InProcessServer, Endpoint)>)>,
    _embedded: Option<InProcessServer>,
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
        let mut errors: Vec<ClientError> = Vec::new();
        for (url, attempt) in urls.into_iter().zip(attempts) {
            let result = attempt
                .await
                .map_err(|e| RunError::Failure(format!("internal error: connecting: {e}")))?;
            let (client, reachable) = match result {
                Ok(client) => (client, true),
                Err(error @ ClientError::Connect { .. }) => {
                    let lazy = client::connect_lazy(&url, connection, max_message_bytes)?;
                    errors.push(error);
                    (lazy, false)
                }
                Err(error) => return Err(error.into()),
            };
            let mut endpoint = Endpoint::new(url, client, false);
            endpoint.connection = Some(connection.clone());
            if !reachable {
                *endpoint.failed_at() = Some(Instant::now());
            }
            endpoints.push(endpoint);
        }
        if errors.len() == endpoints.len() {
            return Err(none_reachable(errors));
        }
        for error in errors {
            stderr_line(format_args!(
                "grundy: {error}; going on with the other servers"
            ));
        }
        Ok(Self {
            endpoints,
            embedded_uploads: None,
            _embedded: None,
        })
    }

    /// The embedded server (started here) as the only endpoint.
    pub(super) async fn embedded(max_message_bytes: usize) -> Result<Self, RunError> {
        let (server, client) = InProcessServer::start(embedded_config(max_message_bytes)).await?;
        Ok(Self {
            endpoints: vec![Endpoint::new(EMBEDDED.into(), client, false)],
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

    /// The endpoint to try next, from `preferred` on: the first live one, or a failed one
    /// whose recovery probe is due (which pushes its next probe back, so that one test case
    /// at a time probes it). When every endpoint failed recently, `preferred` itself: the
    /// caller's backoff then paces the attempts.
    pub(super) fn choose(&self, preferred: usize) -> usize {
        let count = self.endpoints.len();
        let now = Instant::now();
        for step in 0..count {
            let index = (preferred + step) % count;
            let mut failed_at = self.endpoints[index].failed_at();
            match *failed_at {
                None => return index,
                Some(at) if now.duration_since(at) >= PROBE_AFTER => {
                    *failed_at = Some(now);
                    return index;
                }
                Some(_) => {}
            }
        }
        preferred % count
    }

    /// Remembers that a stream on endpoint `index` broke: new work avoids it for a while.
    pub(super) fn mark_failed(&self, index: usize) {
        *self.get(index).failed_at() = Some(Instant::now());
    }

    /// An attempt on endpoint `index` got answers: it is live.
    pub(super) fn mark_live(&self, index: usize) {
        *self.get(index).failed_at() = None;
    }

    /// Endpoint `index` for a graph uploaded with `PutGraph`: the same as [`Self::get`] with
    /// `--server`; in an embedded run, the upload server (started on first use).
    pub(super) async fn for_upload(&self, index: usize) -> Result<&Endpoint, RunError> {
        let Some((max_message_bytes, uploads)) = &self.embedded_uploads else {
            return Ok(self.get(index));
        };
        let (_, endpoint) = uploads
            .get_or_try_init(|| async {
                let (server, client) =
                    InProcessServer::start(upload_config(*max_message_bytes)).await?;
                let endpoint = Endpoint::new(EMBEDDED_UPLOADS.into(), client, true);
                Ok::<_, RunError>((server, endpoint))
            })
            .await?;
        Ok(endpoint)
    }
}

/// The error when no server of `--server` answers: every one named, with what to do.
fn none_reachable(errors: Vec<ClientError>) -> RunError {
    // Nobody listening: say how to get a server (a TLS or certificate failure says its own fix).
    let nobody_listens = errors
        .iter()
        .all(|error| error.to_string().contains("tcp connect error"));
    let hint = if nobody_listens {
        "; start grundy-server there (grundy-server --listen ADDR), or leave out --server to \
         use a server embedded in this process"
    } else {
        ""
    };
    match <[ClientError; 1]>::try_from(errors) {
        Ok([only]) => RunError::Failure(format!("{only}{hint}")),
        Err(errors) => {
            let each: Vec<String> = errors.iter().map(ToString::to_string).collect();
            RunError::Failure(format!(
                "no server of --server is reachable: {}{hint}",
                each.join("; ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoints(count: usize) -> Endpoints {
        let endpoints = (0..count)
            .map(|i| {
                let url = format!("http://127.0.0.1:{}", 9 + i);
                let client = client::connect_lazy(&url, &ConnectionArgs::default(), 1 << 20)
                    .expect("a valid URL");
                Endpoint::new(url, client, false)
            })
            .collect();
        Endpoints {
            endpoints,
            embedded_uploads: None,
            _embedded: None,
        }
    }

    #[tokio::test]
    async fn new_work_avoids_a_failed_endpoint_until_its_probe_is_due() {
        let endpoints = endpoints(3);
        assert_eq!(endpoints.choose(1), 1);
        endpoints.mark_failed(1);
        assert_eq!(endpoints.choose(1), 2, "the next live one");
        assert_eq!(endpoints.choose(4), 2, "modulo the count");
        endpoints.mark_failed(2);
        assert_eq!(endpoints.choose(1), 0);
        // The probe is due: one case goes there, and the next probe is pushed back.
        *endpoints.get(1).failed_at() = Some(Instant::now() - PROBE_AFTER);
        assert_eq!(endpoints.choose(1), 1, "the recovery probe");
        assert_eq!(endpoints.choose(1), 0, "one probe at a time");
        endpoints.mark_live(1);
        assert_eq!(endpoints.choose(1), 1);
        // Every one failed recently: the preferred one, paced by the backoff.
        for index in 0..3 {
            endpoints.mark_failed(index);
        }
        assert_eq!(endpoints.choose(5), 2);
    }
}
