//! Connecting to a grundy server: plain or TLS (https:// URLs), mutual TLS, bearer token. The
//! `grundy` CLI flattens [`ConnectionArgs`] into its commands. [`put_graph`] uploads a graph
//! too large for one message in chunks.
//!
//! Nothing here depends on the server side: the client reads its own certificate and token
//! files, with its own error type ([`ClientError`]).

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use tokio::io::DuplexStream;
use tokio::sync::mpsc;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Status};

use crate::proto::grundy_service_client::GrundyServiceClient;
use crate::token::TokenFileError;

mod endpoint;
mod tls_refusal;
mod upload;

use endpoint::{channel, endpoint};

pub(crate) use tls_refusal::{probe as refused_handshake, refusal_words};

pub use upload::put_graph;

/// Why a connection could not be set up. Each message is one line naming the URL or file at
/// fault, for the CLI's `error: ...` line.
///
/// Causes are part of the message (transport errors with their whole chain of causes) rather
/// than exposed as [`std::error::Error::source`]: a caller printing the chain again would
/// repeat them.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server URL has no scheme (`127.0.0.1:50051`).
    #[error(
        "invalid server URL {url:?}: it needs a scheme: write http://{url} (or https://{url} \
             for a TLS server)"
    )]
    MissingScheme {
        /// The URL as given.
        url: String,
    },
    /// The server URL names another scheme than `http` or `https`, or a port out of range.
    #[error("invalid server URL {url:?}: {what}")]
    UnsupportedUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        what: &'static str,
    },
    /// The server URL does not parse.
    #[error("invalid server URL {url:?}: {cause}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        cause: tonic::transport::Error,
    },
    /// TLS files were given for a plaintext (http://) URL.
    #[error("TLS options given but {url:?} is not an https:// URL")]
    TlsWithoutHttps {
        /// The URL as given.
        url: String,
    },
    /// The TLS configuration was refused (e.g. a certificate that does not parse).
    #[error("cannot set up TLS: {}", source_chain(.cause))]
    Tls {
        /// The transport's reason.
        cause: tonic::transport::Error,
    },
    /// `--tls-cert` without `--tls-key`.
    #[error("--tls-cert needs --tls-key")]
    CertWithoutKey,
    /// `--tls-key` without `--tls-cert`.
    #[error("--tls-key needs --tls-cert")]
    KeyWithoutCert,
    /// A certificate or key file could not be read.
    #[error("cannot read {}: {cause}", .path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        cause: io::Error,
    },
    /// The token file gives no usable token.
    #[error(transparent)]
    Token(#[from] TokenFileError),
    /// The token cannot travel in an `authorization` header.
    #[error("the bearer token is not a valid header value")]
    InvalidToken,
    /// The server could not be reached (or the TLS handshake failed).
    #[error("cannot connect to {url}: {}{}", source_chain(.cause), connect_hint(.url, .cause))]
    Connect {
        /// The URL dialled.
        url: String,
        /// The transport's reason.
        cause: tonic::transport::Error,
    },
}

/// How to reach and authenticate to a server.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConnectionArgs {
    /// File holding the bearer token to send with every call (a server started with
    /// --auth-token-file requires it).
    #[arg(long, env = "GRUNDY_AUTH_TOKEN_FILE")]
    pub auth_token_file: Option<PathBuf>,
    /// PEM CA certificate(s) to verify the server's certificate with (https:// URLs);
    /// without it, the system's trust roots.
    #[arg(long, env = "GRUNDY_TLS_CA")]
    pub tls_ca: Option<PathBuf>,
    /// PEM client certificate, for servers that require mutual TLS (needs --tls-key).
    // The pairing is checked when connecting, not by clap: a variable left in the environment
    // must not break runs that connect to no server (the CLI's embedded one).
    #[arg(long, env = "GRUNDY_CLIENT_CERT")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, env = "GRUNDY_CLIENT_KEY")]
    pub tls_key: Option<PathBuf>,
    /// Name to verify the server's certificate against, when it differs from the URL's host
    /// (e.g. connecting to 127.0.0.1 with a certificate for "localhost").
    #[arg(long, env = "GRUNDY_TLS_SERVER_NAME")]
    pub tls_server_name: Option<String>,
}

/// Adds `authorization: Bearer <token>` to every call, when a token is configured.
#[derive(Debug, Clone, Default)]
pub struct ClientAuth {
    header: Option<MetadataValue<Ascii>>,
}

impl ClientAuth {
    /// Sends `token` with every call (None: send nothing).
    fn new(token: Option<&str>) -> Result<Self, ClientError> {
        let header = token
            .map(|token| {
                format!("Bearer {token}")
                    .parse()
                    .map_err(|_| ClientError::InvalidToken)
            })
            .transpose()?;
        Ok(Self { header })
    }
}

impl Interceptor for ClientAuth {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(header) = &self.header {
            request
                .metadata_mut()
                .insert("authorization", header.clone());
        }
        Ok(request)
    }
}

/// The client the CLI uses: the generated client with the token interceptor.
pub type GrundyClient = GrundyServiceClient<InterceptedService<Channel, ClientAuth>>;

/// How long opening a connection may take, over a socket or an in-process pipe.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Response streams the CLI reads at once on one connection: its test cases in flight.
pub const STREAMS_PER_CONNECTION: usize = 8;

/// HTTP/2 window of one response stream: what the server may send ahead of the client's
/// reading it (hyper's default).
const STREAM_WINDOW_BYTES: u32 = 2 << 20;

/// HTTP/2 window of a connection: room for every stream's window and one more. The CLI prints
/// its test cases in input order, reading the first case's stream while the others wait;
/// what waits unread counts against the connection's window too, and at hyper's 5 MiB
/// default the waiting streams (2 MiB each) filled it, so the first stream got nothing more
/// and the run stopped for good (`grundy analyse` of five cases of 100,000 sums). With this
/// window no streams waiting can hold up the one read.
const CONNECTION_WINDOW_BYTES: u32 = (STREAMS_PER_CONNECTION as u32 + 1) * STREAM_WINDOW_BYTES;

/// `endpoint` with the flow-control windows above.
fn with_windows(endpoint: Endpoint) -> Endpoint {
    endpoint
        .initial_stream_window_size(STREAM_WINDOW_BYTES)
        .initial_connection_window_size(CONNECTION_WINDOW_BYTES)
}

/// The `grundy.v1` client over `channel`, authenticated by `auth`, with messages of up to
/// `max_message_bytes` each way.
fn grundy_client(channel: Channel, auth: ClientAuth, max_message_bytes: usize) -> GrundyClient {
    GrundyServiceClient::with_interceptor(channel, auth)
        .max_decoding_message_size(max_message_bytes)
        .max_encoding_message_size(max_message_bytes)
}

/// Connects the `grundy.v1` client to `url`, with messages of up to `max_message_bytes` each
/// way.
pub async fn connect(
    url: &str,
    args: &ConnectionArgs,
    max_message_bytes: usize,
) -> Result<GrundyClient, ClientError> {
    let (channel, auth) = channel(url, args).await?;
    Ok(grundy_client(channel, auth, max_message_bytes))
}

/// What an in-process connection is called in errors.
const IN_PROCESS: &str = "the in-process server";

/// Bytes each direction of an in-process connection buffers: several HTTP/2 frames, so that
/// a batch crosses in a few wake-ups.
const PIPE_BYTES: usize = 1 << 20;

/// Connects the `grundy.v1` client to a server in this process through in-memory pipes: each
/// connection the channel opens is one end of a `tokio::io::duplex` pipe, and the other end is
/// sent on `server` (the incoming connections of [`crate::service::serve_connections`]). The
/// calls are the same HTTP/2 and gRPC as over a socket, without the kernel's copies and
/// wake-ups, and no port is opened.
pub async fn connect_in_process(
    server: mpsc::Sender<DuplexStream>,
    max_message_bytes: usize,
) -> Result<GrundyClient, ClientError> {
    let connector = tower::service_fn(move |_: http::Uri| {
        let server = server.clone();
        async move {
            let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
            server.send(theirs).await.map_err(|_| {
                io::Error::new(io::ErrorKind::ConnectionRefused, "the server has stopped")
            })?;
            Ok::<_, io::Error>(hyper_util::rt::TokioIo::new(ours))
        }
    });
    let channel = with_windows(Endpoint::from_static("http://in-process.invalid"))
        .connect_timeout(CONNECT_TIMEOUT)
        .connect_with_connector(connector)
        .await
        .map_err(|cause| ClientError::Connect {
            url: IN_PROCESS.to_string(),
            cause,
        })?;
    let auth = ClientAuth::new(None)?;
    Ok(grundy_client(channel, auth, max_message_bytes))
}

/// A client for `url` that connects on its first call (and again after its connection is
/// lost): for endpoints of a list that were down when the run started.
pub fn connect_lazy(
    url: &str,
    args: &ConnectionArgs,
    max_message_bytes: usize,
) -> Result<GrundyClient, ClientError> {
    let (endpoint, auth) = endpoint(url, args)?;
    Ok(grundy_client(
        endpoint.connect_lazy(),
        auth,
        max_message_bytes,
    ))
}

/// The URLs of a `--server` list: comma-separated, spaces around them ignored, empty items
/// skipped.
pub(crate) fn server_list(servers: &str) -> Vec<String> {
    servers
        .split(',')
        .map(str::trim)
        .filter(|url| !url.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether the server at `url` (an http:// URL) answers the HTTP/2 preface with a TLS record:
/// the sign of a TLS server dialled in plaintext, whose refusal reaches the client only as a
/// closed connection. False when it cannot tell (unreachable, silent for a second).
pub(crate) async fn speaks_tls(url: &str) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(uri) = url.parse::<http::Uri>() else {
        return false;
    };
    let (Some(host), port) = (uri.host(), uri.port_u16().unwrap_or(80)) else {
        return false;
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let probe = async {
        let mut tcp = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .ok()?;
        tcp.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            .await
            .ok()?;
        let mut first = [0u8; 1];
        tcp.read_exact(&mut first).await.ok()?;
        // 0x15: a TLS alert record; 0x16: a handshake record. HTTP/2 starts with a frame
        // length (SETTINGS: 0x00).
        Some(matches!(first[0], 0x15 | 0x16))
    };
    tokio::time::timeout(Duration::from_secs(1), probe)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}

/// What to do about a failed connection, for the failures whose transport text does not say:
/// an https:// URL at a plaintext server, a certificate no trusted authority signed, a server
/// that refused the handshake (wanting a client certificate, say).
fn connect_hint(url: &str, cause: &tonic::transport::Error) -> String {
    if let Some(alert) = tls_refusal::refusal_alert(cause) {
        return format!(" ({})", refusal_words(alert));
    }
    let text = source_chain(cause);
    if text.contains("InvalidContentType") || text.contains("corrupt message") {
        let rest = url.trim_start_matches("https://");
        format!(" (the server does not speak TLS: use http://{rest})")
    } else if text.contains("UnknownIssuer") || text.contains("invalid peer certificate") {
        " (pass the CA certificate that signed the server's with --tls-ca CA.pem, and \
         --tls-server-name NAME if the certificate is for another name)"
            .to_string()
    } else {
        String::new()
    }
}

/// An error with its causes, skipping a cause whose text the message already ends with:
/// "transport error: tcp connect error: Connection refused (os error 111)".
fn source_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // hyper and tonic often wrap an error in one with the same message.
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
