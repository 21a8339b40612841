//! A server URL made into a tonic endpoint: the scheme and port checked, TLS as the flags say,
//! and the interceptor that authenticates the calls.

use std::path::Path;

use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

use super::{CONNECT_TIMEOUT, ClientAuth, ClientError, ConnectionArgs, with_windows};
use crate::token::read_token_file;

/// The endpoint for `url` (http:// or https://) as `args` say, and the interceptor that
/// authenticates its calls.
pub(super) fn endpoint(
    url: &str,
    args: &ConnectionArgs,
) -> Result<(Endpoint, ClientAuth), ClientError> {
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
    let mut endpoint = with_windows(endpoint)
        .tcp_nodelay(true)
        .connect_timeout(CONNECT_TIMEOUT);
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
pub(super) async fn channel(
    url: &str,
    args: &ConnectionArgs,
) -> Result<(Channel, ClientAuth), ClientError> {
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
