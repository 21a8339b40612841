//! Connecting to a grundy server: plain or TLS (https:// URLs), mutual TLS, bearer token. The
//! `grundy` CLI flattens [`ConnectionArgs`] into its commands.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic::{Request, Status};

use crate::proto::grundy_service_client::GrundyServiceClient;

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
    pub fn new(token: Option<&str>) -> Result<Self, String> {
        let header = token
            .map(|token| {
                format!("Bearer {token}")
                    .parse()
                    .map_err(|_| "the bearer token is not a valid header value".to_string())
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

/// Opens a channel to `url` (http:// or https://) as `args` say, and the interceptor that
/// authenticates its calls. Errors are one line each, for the CLI.
pub async fn channel(url: &str, args: &ConnectionArgs) -> Result<(Channel, ClientAuth), String> {
    let mut endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| format!("invalid server URL {url:?}: {e}"))?
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(10));
    let is_https = url.starts_with("https://");
    if is_https {
        endpoint = endpoint
            .tls_config(client_tls(args)?)
            .map_err(|e| format!("cannot set up TLS: {}", source_chain(&e)))?;
    } else if args.tls_ca.is_some() || args.tls_cert.is_some() || args.tls_key.is_some() {
        return Err(format!(
            "TLS options given but {url:?} is not an https:// URL"
        ));
    }
    let token = args
        .auth_token_file
        .as_deref()
        .map(read_token_file)
        .transpose()?;
    let auth = ClientAuth::new(token.as_deref())?;
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| format!("cannot connect to {url}: {}", source_chain(&e)))?;
    Ok((channel, auth))
}

/// Connects the `grundy.v1` client to `url`.
pub async fn connect(
    url: &str,
    args: &ConnectionArgs,
    max_message_bytes: usize,
) -> Result<GrundyClient, String> {
    let (channel, auth) = channel(url, args).await?;
    Ok(GrundyServiceClient::with_interceptor(channel, auth)
        .max_decoding_message_size(max_message_bytes)
        .max_encoding_message_size(max_message_bytes))
}

fn client_tls(args: &ConnectionArgs) -> Result<ClientTlsConfig, String> {
    let mut tls = ClientTlsConfig::new();
    tls = match &args.tls_ca {
        Some(ca) => tls.ca_certificate(Certificate::from_pem(read(ca)?)),
        None => tls.with_native_roots(),
    };
    match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            tls = tls.identity(Identity::from_pem(read(cert)?, read(key)?));
        }
        (Some(_), None) => return Err("--tls-cert needs --tls-key".into()),
        (None, Some(_)) => return Err("--tls-key needs --tls-cert".into()),
        (None, None) => {}
    }
    if let Some(name) = &args.tls_server_name {
        tls = tls.domain_name(name.clone());
    }
    Ok(tls)
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Reads a token file: its content without surrounding whitespace (a trailing newline is
/// normal). An empty token, or one that cannot travel in a header, is an error.
fn read_token_file(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("the token file {} is empty", path.display()));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "the token in {} must be printable ASCII without spaces",
            path.display()
        ));
    }
    Ok(token.to_string())
}

/// "transport error: tcp connect error: Connection refused (os error 111)".
pub fn source_chain(error: &dyn std::error::Error) -> String {
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
