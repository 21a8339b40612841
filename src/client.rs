//! Connecting to a grundy server: plain or TLS (https:// URLs), mutual TLS, bearer token. The
//! `grundy` CLI flattens [`ConnectionArgs`] into its commands. [`put_graph`] uploads a graph
//! too large for one message in chunks.
//!
//! Nothing here depends on the server side: the client reads its own certificate and token
//! files, with its own error type ([`ClientError`]).

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::DuplexStream;
use tokio::sync::mpsc;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic::{Request, Status};

use crate::proto::grundy_service_client::GrundyServiceClient;
use crate::token::{TokenFileError, read_token_file};

mod upload;

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

/// The endpoint for `url` (http:// or https://) as `args` say, and the interceptor that
/// authenticates its calls.
fn endpoint(url: &str, args: &ConnectionArgs) -> Result<(Endpoint, ClientAuth), ClientError> {
    if !url.contains("://") {
        return Err(ClientError::MissingScheme {
            url: url.to_string(),
        });
    }
    let unsupported = |what| ClientError::UnsupportedUrl {
        url: url.to_string(),
        what,
    };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(unsupported(
            "grundy-server is reached by http:// (plaintext) or https:// (TLS)",
        ));
    }
    let endpoint =
        Endpoint::from_shared(url.to_string()).map_err(|cause| ClientError::InvalidUrl {
            url: url.to_string(),
            cause,
        })?;
    // The port as written: the URI parser takes 99999 for no port at all (then port 80).
    let authority = endpoint.uri().authority().map_or("", |a| a.as_str());
    let host_end = authority.rfind(']').unwrap_or(0);
    let port = authority[host_end..].rsplit_once(':').map(|(_, port)| port);
    let in_range = |port: &str| port.parse::<u16>().is_ok_and(|port| port != 0);
    if port.is_some_and(|port| !in_range(port)) {
        return Err(unsupported("its port is 0 or out of range (1 to 65535)"));
    }
    let mut endpoint = endpoint.tcp_nodelay(true).connect_timeout(CONNECT_TIMEOUT);
    let is_https = url.starts_with("https://");
    if is_https {
        endpoint = endpoint
            .tls_config(client_tls(args)?)
            .map_err(|cause| ClientError::Tls { cause })?;
    } else if args.tls_ca.is_some() || args.tls_cert.is_some() || args.tls_key.is_some() {
        return Err(ClientError::TlsWithoutHttps {
            url: url.to_string(),
        });
    }
    let token = args
        .auth_token_file
        .as_deref()
        .map(read_token_file)
        .transpose()?;
    let auth = ClientAuth::new(token.as_deref())?;
    Ok((endpoint, auth))
}

/// Opens a channel to `url` as `args` say, and the interceptor that authenticates its calls.
async fn channel(url: &str, args: &ConnectionArgs) -> Result<(Channel, ClientAuth), ClientError> {
    let (endpoint, auth) = endpoint(url, args)?;
    let channel = endpoint
        .connect()
        .await
        .map_err(|cause| ClientError::Connect {
            url: url.to_string(),
            cause,
        })?;
    Ok((channel, auth))
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
    let channel = Endpoint::from_static("http://in-process.invalid")
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

fn client_tls(args: &ConnectionArgs) -> Result<ClientTlsConfig, ClientError> {
    let mut tls = ClientTlsConfig::new();
    tls = match &args.tls_ca {
        Some(ca) => tls.ca_certificate(Certificate::from_pem(read(ca)?)),
        None => tls.with_native_roots(),
    };
    match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            tls = tls.identity(Identity::from_pem(read(cert)?, read(key)?));
        }
        (Some(_), None) => return Err(ClientError::CertWithoutKey),
        (None, Some(_)) => return Err(ClientError::KeyWithoutCert),
        (None, None) => {}
    }
    if let Some(name) = &args.tls_server_name {
        tls = tls.domain_name(name.clone());
    }
    Ok(tls)
}

fn read(path: &Path) -> Result<Vec<u8>, ClientError> {
    std::fs::read(path).map_err(|cause| ClientError::ReadFile {
        path: path.to_path_buf(),
        cause,
    })
}

/// What to do about a failed connection, for the failures whose transport text does not say:
/// an https:// URL at a plaintext server, a certificate no trusted authority signed.
fn connect_hint(url: &str, cause: &tonic::transport::Error) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_files_are_trimmed_and_checked() {
        let dir = std::env::temp_dir().join(format!("grundy-client-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let good = write("good", "  s3cret\n");
        assert_eq!(read_token_file(&good).unwrap(), "s3cret");
        let empty = write("empty", " \n");
        assert_eq!(
            read_token_file(&empty).unwrap_err().to_string(),
            format!("the token file {} is empty", empty.display())
        );
        let spaced = write("spaced", "two words\n");
        assert_eq!(
            read_token_file(&spaced).unwrap_err().to_string(),
            format!(
                "the token in {} must be printable ASCII without spaces",
                spaced.display()
            )
        );
        let missing = dir.join("missing");
        let message = read_token_file(&missing).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!(
                "cannot read the token file {}: ",
                missing.display()
            )),
            "{message}"
        );
        let message = read(&missing).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!("cannot read {}: ", missing.display())),
            "{message}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A URL grundy-server cannot be reached at is refused before any connection: another
    /// scheme, or a port out of range (which the URI parser would read as no port, and
    /// dial 80).
    #[test]
    fn server_urls_need_http_or_https_and_a_port_in_range() {
        let refused = |url: &str| {
            endpoint(url, &ConnectionArgs::default())
                .err()
                .map(|error| error.to_string())
        };
        for url in [
            "http://127.0.0.1:50051",
            "https://grundy.example:443",
            "http://[::1]:1",
            "http://localhost",
        ] {
            assert_eq!(refused(url), None, "{url}");
        }
        for (url, what) in [
            ("127.0.0.1:50051", "it needs a scheme"),
            (
                "ftp://127.0.0.1:21",
                "http:// (plaintext) or https:// (TLS)",
            ),
            ("http://127.0.0.1:99999", "out of range (1 to 65535)"),
            ("http://127.0.0.1:0", "out of range (1 to 65535)"),
            ("http://[::1]:", "out of range (1 to 65535)"),
        ] {
            let message = refused(url).unwrap_or_default();
            assert!(message.contains(what), "{url}: {message}");
        }
    }

    #[test]
    fn tls_files_come_in_pairs() {
        let cert_only = ConnectionArgs {
            tls_cert: Some("cert.pem".into()),
            ..ConnectionArgs::default()
        };
        assert_eq!(
            client_tls(&cert_only).unwrap_err().to_string(),
            "--tls-cert needs --tls-key"
        );
        let key_only = ConnectionArgs {
            tls_key: Some("key.pem".into()),
            ..ConnectionArgs::default()
        };
        assert_eq!(
            client_tls(&key_only).unwrap_err().to_string(),
            "--tls-key needs --tls-cert"
        );
    }
}
