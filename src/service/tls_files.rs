//! The server's TLS files (`--tls-cert`, `--tls-key`, `--tls-client-ca`), read and checked
//! before the server binds its port: a file that holds no PEM block of its kind, a key of a
//! kind rustls cannot sign with, or a key that is not the certificate's, is named with its flag
//! here, instead of failing (unnamed) once the server has logged that it listens.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;

use super::config::TlsConfig;

/// One of the server's TLS files: its flag and what it holds, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsFile {
    /// `--tls-cert`.
    Certificate,
    /// `--tls-key`.
    Key,
    /// `--tls-client-ca`.
    ClientCa,
}

impl TlsFile {
    fn flag(self) -> &'static str {
        match self {
            Self::Certificate => "--tls-cert",
            Self::Key => "--tls-key",
            Self::ClientCa => "--tls-client-ca",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Self::Certificate => "the server's certificate",
            Self::Key => "the private key of --tls-cert",
            Self::ClientCa => "the CA certificate(s) of the clients",
        }
    }

    /// The PEM block expected, for "holds no ..." messages.
    fn expected(self) -> &'static str {
        match self {
            Self::Certificate | Self::ClientCa => "PEM certificate (-----BEGIN CERTIFICATE-----)",
            Self::Key => {
                "PEM private key (-----BEGIN PRIVATE KEY-----, or RSA PRIVATE KEY or EC PRIVATE KEY)"
            }
        }
    }
}

/// Why a TLS file cannot serve; each message names the flag, the file and what it holds.
#[derive(Debug, thiserror::Error)]
pub enum TlsFileError {
    /// The file could not be read.
    #[error("cannot read {} {} ({}): {cause}", .file.flag(), .path.display(), .file.what())]
    Read {
        /// Which file.
        file: TlsFile,
        /// Its path.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// The file does not hold what its flag takes.
    #[error("{} {} ({}) {problem}", .file.flag(), .path.display(), .file.what())]
    Invalid {
        /// Which file.
        file: TlsFile,
        /// Its path.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
}

/// The files read, each checked as rustls will use it: certificates and key parsed, the key
/// the certificate's, the client CA certificates usable as trust anchors.
pub fn load(cert: &Path, key: &Path, client_ca: Option<&Path>) -> Result<TlsConfig, TlsFileError> {
    let config = TlsConfig {
        cert_pem: read(TlsFile::Certificate, cert)?,
        key_pem: read(TlsFile::Key, key)?,
        client_ca_pem: client_ca
            .map(|path| read(TlsFile::ClientCa, path))
            .transpose()?,
    };
    let invalid = |file, path: &Path, problem| TlsFileError::Invalid {
        file,
        path: path.to_path_buf(),
        problem,
    };
    check_identity(&config.cert_pem, &config.key_pem).map_err(|(file, problem)| {
        let path = if file == TlsFile::Key { key } else { cert };
        invalid(file, path, problem)
    })?;
    if let (Some(pem), Some(path)) = (&config.client_ca_pem, client_ca) {
        check_client_ca(pem).map_err(|problem| invalid(TlsFile::ClientCa, path, problem))?;
    }
    Ok(config)
}

fn read(file: TlsFile, path: &Path) -> Result<Vec<u8>, TlsFileError> {
    std::fs::read(path).map_err(|cause| TlsFileError::Read {
        file,
        path: path.to_path_buf(),
        cause,
    })
}

/// The certificates of a PEM file: `Err` when it holds none, or a block that does not decode.
fn certificates(pem: &[u8], file: TlsFile) -> Result<Vec<CertificateDer<'static>>, String> {
    let certificates = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("holds a PEM block that does not decode: {e}"))?;
    if certificates.is_empty() {
        return Err(format!("holds no {}", file.expected()));
    }
    Ok(certificates)
}

/// Checks the server's certificate chain and key as rustls will load them; `Err` names the
/// file at fault.
fn check_identity(cert_pem: &[u8], key_pem: &[u8]) -> Result<(), (TlsFile, String)> {
    let chain =
        certificates(cert_pem, TlsFile::Certificate).map_err(|e| (TlsFile::Certificate, e))?;
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| {
        let problem = match e {
            rustls::pki_types::pem::Error::NoItemsFound => {
                format!("holds no {}", TlsFile::Key.expected())
            }
            other => format!("holds a PEM block that does not decode: {other}"),
        };
        (TlsFile::Key, problem)
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = provider.key_provider.load_private_key(key).map_err(|e| {
        let problem = format!("is not a key the server can sign with: {e}");
        (TlsFile::Key, problem)
    })?;
    match CertifiedKey::new(chain, key).keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => Ok(()),
        Err(rustls::Error::InconsistentKeys(_)) => Err((
            TlsFile::Key,
            "is not the key of the certificate of --tls-cert: give the key that was \
             generated with that certificate"
                .to_string(),
        )),
        Err(e) => Err((
            TlsFile::Certificate,
            format!("holds a certificate that cannot be used: {e}"),
        )),
    }
}

/// Checks the clients' CA certificates as trust anchors.
fn check_client_ca(pem: &[u8]) -> Result<(), String> {
    let mut roots = RootCertStore::empty();
    for certificate in certificates(pem, TlsFile::ClientCa)? {
        roots
            .add(certificate)
            .map_err(|e| format!("holds a certificate that is no usable CA: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed certificate for "localhost" and its key, in PEM.
    fn identity() -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    }

    #[test]
    fn each_bad_file_is_named_with_its_flag_and_what_it_should_hold() {
        let dir = std::env::temp_dir().join(format!("grundy-tls-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let (cert_pem, key_pem) = identity();
        let (other_cert_pem, _) = identity();
        let cert = write("cert.pem", &cert_pem);
        let key = write("key.pem", &key_pem);
        let other_cert = write("other.pem", &other_cert_pem);
        let garbage = write("garbage.pem", "not PEM at all\n");
        let missing = dir.join("missing.pem");
        assert!(load(&cert, &key, None).is_ok());
        assert!(load(&cert, &key, Some(&cert)).is_ok());
        let said = |cert: &Path, key: &Path, ca: Option<&Path>| {
            load(cert, key, ca).unwrap_err().to_string()
        };
        let cases = [
            (
                said(&cert, &garbage, None),
                format!("--tls-key {} (the private key", garbage.display()),
                "holds no PEM private key (-----BEGIN PRIVATE KEY-----",
            ),
            (
                // The two files swapped.
                said(&key, &cert, None),
                format!("--tls-cert {} (the server's certificate)", key.display()),
                "holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
            ),
            (
                said(&other_cert, &key, None),
                format!("--tls-key {}", key.display()),
                "is not the key of the certificate of --tls-cert",
            ),
            (
                said(&cert, &key, Some(&garbage)),
                format!("--tls-client-ca {} (the CA", garbage.display()),
                "holds no PEM certificate",
            ),
            (
                said(&cert, &missing, None),
                format!(
                    "cannot read --tls-key {} (the private key",
                    missing.display()
                ),
                "No such file",
            ),
        ];
        for (message, names, says) in cases {
            assert!(message.starts_with(&names), "{names}: {message}");
            assert!(message.contains(says), "{says}: {message}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
