//! `grundy-server`'s refusals at start: a flag whose value cannot serve (a TLS file, the store
//! URL, the OTLP endpoint) ends the process before it binds its port or logs that it listens,
//! with exit status 1 and one `error: ...` line naming the flag and what to write instead.

use std::process::Command;

use crate::support::process::run;
use crate::support::tls::{TempDir, pki};

/// What `grundy-server ARGS` printed on stderr, having refused to start as described above.
fn refused(args: &[&str]) -> String {
    let output = run(
        Command::new(env!("CARGO_BIN_EXE_grundy-server"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "info"),
        None,
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(!stderr.contains("listening"), "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    stderr
}

#[test]
fn bad_tls_files_are_named_with_their_flag_before_the_server_listens() {
    let pki = pki();
    let dir = TempDir::new("startup-tls");
    let cert = dir.write("server.pem", pki.server_cert_pem.as_bytes());
    let key = dir.write("server.key", pki.server_key_pem.as_bytes());
    let other_key = dir.write("client.key", pki.client_key_pem.as_bytes());
    let garbage = dir.write("garbage.pem", b"not PEM\n");
    let path = |path: &std::path::PathBuf| path.to_str().unwrap().to_string();
    let (cert, key, other_key, garbage) =
        (path(&cert), path(&key), path(&other_key), path(&garbage));
    for (args, names, says) in [
        (
            ["--tls-cert", &cert, "--tls-key", &garbage],
            format!("--tls-key {garbage} (the private key of --tls-cert)"),
            "holds no PEM private key",
        ),
        (
            ["--tls-cert", &garbage, "--tls-key", &key],
            format!("--tls-cert {garbage} (the server's certificate)"),
            "holds no PEM certificate",
        ),
        (
            ["--tls-cert", &cert, "--tls-key", &other_key],
            format!("--tls-key {other_key}"),
            "is not the key of the certificate of --tls-cert",
        ),
    ] {
        let stderr = refused(&args);
        assert!(stderr.contains(&names), "{names}: {stderr}");
        assert!(stderr.contains(says), "{says}: {stderr}");
    }
    let stderr = refused(&[
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--tls-client-ca",
        &garbage,
    ]);
    assert!(
        stderr.contains(&format!("--tls-client-ca {garbage}")),
        "{stderr}"
    );
}

#[test]
fn a_store_url_of_another_form_shows_the_redis_form() {
    for url in [
        "http://127.0.0.1:6379",
        "127.0.0.1:6379",
        "rediss://127.0.0.1:6379/0",
    ] {
        let stderr = refused(&["--store-url", url]);
        assert!(stderr.contains("invalid --store-url"), "{url}: {stderr}");
        assert!(stderr.contains("redis://HOST:PORT/DB"), "{url}: {stderr}");
    }
}

#[test]
fn an_otlp_endpoint_without_a_scheme_shows_http_and_https() {
    let stderr = refused(&["--otlp-endpoint", "localhost:4317"]);
    assert!(stderr.contains("invalid --otlp-endpoint"), "{stderr}");
    assert!(
        stderr.contains("http:// (plaintext) or https:// (TLS)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("e.g. --otlp-endpoint http://localhost:4317"),
        "{stderr}"
    );
    assert!(!stderr.contains("feature"), "{stderr}");
}
