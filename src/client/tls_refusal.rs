//! A TLS server that refuses the handshake, typically for want of a client certificate (mutual
//! TLS): the alert it sent, found in an error's chain of causes, and the user's words for it.
//!
//! With TLS 1.3 the server checks the client's certificate only after the client has finished
//! its side of the handshake, so the connection opens, and the alert arrives with the first
//! read on it. That read is the channel's, in tonic's connection task, which logs the error and
//! drops it: a call sees only a closed connection ("connection lost", as for a server that
//! died). [`probe`] dials once more, with the same trust and certificate, to hear the alert.

use std::error::Error;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{AlertDescription, ClientConfig, RootCertStore};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::ConnectionArgs;

/// How long the probe may take, from the TCP connection to the server's first answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// The flags (and variables) that give the CLI a client certificate.
const CLIENT_CERTIFICATE_FLAGS: &str =
    "--tls-cert CERT.pem --tls-key KEY.pem (or GRUNDY_CLIENT_CERT and GRUNDY_CLIENT_KEY)";

/// The alert a TLS peer refused the handshake with, if `error` or one of its causes is one
/// (rustls's error, or an I/O error wrapping it, as a TLS stream returns it).
pub(crate) fn refusal_alert(error: &(dyn Error + 'static)) -> Option<AlertDescription> {
    let mut next = Some(error);
    while let Some(cause) = next {
        let tls = cause.downcast_ref::<rustls::Error>().or_else(|| {
            let wrapped = cause.downcast_ref::<io::Error>()?.get_ref()?;
            wrapped.downcast_ref::<rustls::Error>()
        });
        if let Some(rustls::Error::AlertReceived(alert)) = tls {
            return Some(*alert);
        }
        next = cause.source();
    }
    None
}

/// What a refusal with `alert` means, and what to do.
pub(crate) fn refusal_words(alert: AlertDescription) -> String {
    use AlertDescription as A;
    match alert {
        A::CertificateRequired => format!(
            "the server requires a client certificate (mutual TLS), and none was given: pass \
             one signed by a CA the server trusts (its --tls-client-ca) with \
             {CLIENT_CERTIFICATE_FLAGS}"
        ),
        A::BadCertificate
        | A::UnsupportedCertificate
        | A::CertificateRevoked
        | A::CertificateExpired
        | A::CertificateUnknown
        | A::UnknownCA
        | A::AccessDenied => format!(
            "the server refused the TLS handshake (alert {alert:?}): it requires a client \
             certificate signed by a CA it trusts (its --tls-client-ca); pass one with \
             {CLIENT_CERTIFICATE_FLAGS}"
        ),
        // Also what a server says of a certificate whose signature does not verify (a CA of
        // the same name), or of no certificate (some TLS 1.2 servers), among other causes.
        A::HandshakeFailure | A::DecryptError => format!(
            "the server refused the TLS handshake (alert {alert:?}): if it requires a client \
             certificate (mutual TLS), pass one signed by a CA it trusts (its \
             --tls-client-ca) with {CLIENT_CERTIFICATE_FLAGS}"
        ),
        other => format!("the server refused the TLS handshake (alert {other:?})"),
    }
}

/// Whether the TLS server at `url` (an https:// URL) refuses a handshake made as `args` say,
/// and with which alert. `None` when it accepts, cannot be reached, or says nothing within
/// [`PROBE_TIMEOUT`]. It sends the HTTP/2 preface only: no call, no token.
pub(crate) async fn probe(url: &str, args: &ConnectionArgs) -> Option<AlertDescription> {
    let uri = url.parse::<http::Uri>().ok()?;
    if uri.scheme_str() != Some("https") {
        return None;
    }
    let host = uri.host()?.trim_start_matches('[').trim_end_matches(']');
    let port = uri.port_u16().unwrap_or(443);
    let name = args.tls_server_name.as_deref().unwrap_or(host).to_string();
    let name = ServerName::try_from(name).ok()?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config(args)?));
    let handshake = async {
        let tcp = tokio::net::TcpStream::connect((host, port)).await.ok()?;
        let mut tls = match connector.connect(name, tcp).await {
            Ok(tls) => tls,
            Err(error) => return refusal_alert(&error),
        };
        let sent = async {
            tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await?;
            tls.flush().await?;
            tls.read(&mut [0u8; 1]).await
        };
        sent.await.err().and_then(|error| refusal_alert(&error))
    };
    tokio::time::timeout(PROBE_TIMEOUT, handshake)
        .await
        .ok()
        .flatten()
}

/// The client configuration the channel has: the CA of `--tls-ca` (else the system's trust
/// roots), the certificate of `--tls-cert` and `--tls-key` if given, HTTP/2. `None` when a
/// file does not load (the channel's own set-up says why).
fn config(args: &ConnectionArgs) -> Option<ClientConfig> {
    let mut roots = RootCertStore::empty();
    match &args.tls_ca {
        Some(ca) => {
            for certificate in certificates(ca)? {
                roots.add(certificate).ok()?;
            }
        }
        None => {
            roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(roots);
    let mut config = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            let key = PrivateKeyDer::from_pem_file(key).ok()?;
            builder
                .with_client_auth_cert(certificates(cert)?, key)
                .ok()?
        }
        _ => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"h2".to_vec()];
    Some(config)
}

fn certificates(path: &Path) -> Option<Vec<CertificateDer<'static>>> {
    CertificateDer::pem_file_iter(path)
        .ok()?
        .collect::<Result<_, _>>()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alert_is_found_through_the_chain_of_causes() {
        /// An error whose cause is another, as tonic's and hyper's wrap the TLS stream's.
        #[derive(Debug)]
        struct Wrapper(io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("transport error")
            }
        }
        impl Error for Wrapper {
            fn source(&self) -> Option<&(dyn Error + 'static)> {
                Some(&self.0)
            }
        }
        let alert = rustls::Error::AlertReceived(AlertDescription::CertificateRequired);
        let wrapped = Wrapper(io::Error::new(io::ErrorKind::InvalidData, alert));
        assert_eq!(
            refusal_alert(&wrapped),
            Some(AlertDescription::CertificateRequired)
        );
        let closed = Wrapper(io::Error::new(io::ErrorKind::BrokenPipe, "closed"));
        assert_eq!(refusal_alert(&closed), None);
        let ours = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        assert_eq!(refusal_alert(&ours), None, "a refusal of ours is no alert");
    }

    #[test]
    fn a_missing_client_certificate_names_the_flags_that_give_one() {
        let said = refusal_words(AlertDescription::CertificateRequired);
        for named in [
            "requires a client certificate",
            "--tls-cert",
            "--tls-key",
            "GRUNDY_CLIENT_CERT",
        ] {
            assert!(said.contains(named), "{named}: {said}");
        }
        let said = refusal_words(AlertDescription::UnknownCA);
        assert!(
            said.contains("alert UnknownCA") && said.contains("--tls-cert"),
            "{said}"
        );
        let said = refusal_words(AlertDescription::ProtocolVersion);
        assert_eq!(
            said,
            "the server refused the TLS handshake (alert ProtocolVersion)"
        );
    }
}
