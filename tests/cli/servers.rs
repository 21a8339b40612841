//! `grundy judge --server`: servers that are down, killed mid-stream, behind TLS, or end a
//! stream; test cases spread over live servers; errors after many test cases.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use super::explained::AddsubGame;
use super::judge::*;
use crate::support::process::{ChildGuard, RUN_TIMEOUT, ServerProcess, drain, run};
use crate::support::server::{serve, service_config};
use crate::support::tls::{TempDir, pki};
use grundy::service::{ServerConfig, TlsConfig};

#[test]
fn unreachable_server_is_a_failure() {
    // Nothing listens on port 1 of a test machine: the connection is refused at once.
    let output = run(
        judge_command(Format::Chess)
            .arg(data_dir().join("chess_sample.in"))
            .args(["--server", "http://127.0.0.1:1"]),
        None,
    );
    let stderr = lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_FAILURE), "stderr: {stderr}");
    assert!(
        stderr.starts_with("error: cannot connect"),
        "stderr: {stderr}"
    );
    assert!(
        output.stdout.is_empty(),
        "stdout: {}",
        lossy(&output.stdout)
    );
}

/// Several test cases with their verdicts through the embedded server, for runs to compare.
fn generated_chess(cases: u32) -> (Vec<u8>, Vec<u8>) {
    let input = run(
        Command::new(GRUNDY)
            .args(["gen", "chess", "--queries", "50", "--seed", "5"])
            .args(["--cases", &cases.to_string()]),
        None,
    )
    .stdout;
    let expected = run(&mut judge_command(Format::Chess), Some(input.clone())).stdout;
    (input, expected)
}

#[test]
fn test_cases_go_to_live_servers_not_to_one_found_dead() {
    let mut server = ServerProcess::start(GRUNDY_SERVER, &[]);
    let (input, expected) = generated_chess(12);
    let servers = format!("{},http://127.0.0.1:1", server.url());
    let output = run(
        judge_command(Format::Chess).args(["--server", &servers]),
        Some(input),
    );
    let stderr = lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(output.stdout, expected);
    // One warning at the start; no test case is sent to the dead server and retried.
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("going on with the other servers"),
        "{stderr}"
    );
    server.assert_still_running();
}

#[test]
fn no_server_reachable_names_every_one_and_what_to_do() {
    let output = run(
        judge_command(Format::Chess)
            .arg(data_dir().join("chess_sample.in"))
            .args(["--server", "http://127.0.0.1:1,http://127.0.0.1:2"]),
        None,
    );
    let stderr = lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_FAILURE), "{stderr}");
    for named in [
        "http://127.0.0.1:1",
        "http://127.0.0.1:2",
        "grundy-server",
        "--server",
    ] {
        assert!(stderr.contains(named), "{named}: {stderr}");
    }
    let output = run(
        judge_command(Format::Chess)
            .arg(data_dir().join("chess_sample.in"))
            .args(["--server", "127.0.0.1:1"]),
        None,
    );
    let stderr = lossy(&output.stderr);
    assert!(stderr.contains("write http://127.0.0.1:1"), "{stderr}");
}

#[test]
fn a_closed_stderr_is_not_a_crash() {
    let (input, expected) = generated_chess(4);
    let mut child = ChildGuard::spawn(
        judge_command(Format::Chess)
            .args(["--timings", "--progress", "always"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    // Nobody reads stderr: its pipe is closed before the first line.
    drop(child.0.stderr.take());
    let mut stdin = child.0.stdin.take().expect("stdin is piped");
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let stdout = drain(child.0.stdout.take().expect("stdout is piped"));
    let status = child.wait_with_timeout(RUN_TIMEOUT);
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_eq!(stdout.join().expect("stdout reader"), expected);
}

/// `--server http://` at a TLS server says what is wrong and how to fix it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plaintext_url_at_a_tls_server_names_https_and_tls_ca() {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let server = serve(ServerConfig {
        service: service_config(),
        tls: Some(TlsConfig {
            cert_pem: cert.pem().into_bytes(),
            key_pem: key.serialize_pem().into_bytes(),
            client_ca_pem: None,
        }),
        ..ServerConfig::default()
    })
    .await;
    let url = server.url();
    let output = tokio::task::spawn_blocking(move || {
        run(
            judge_command(Format::Chess).args(["--server", &url]),
            Some(b"1\n0\n1 0\n0\n".to_vec()),
        )
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_FAILURE), "{stderr}");
    assert!(
        stderr.contains("https://") && stderr.contains("--tls-ca"),
        "{stderr}"
    );
}

/// A server killed mid-stream is reported as a lost connection (once the retries, on the
/// same and only server, are exhausted: `--retries 2` keeps it short).
#[test]
fn a_server_killed_mid_stream_is_reported_as_a_lost_connection() {
    let mut server = ServerProcess::start(GRUNDY_SERVER, &[]);
    let mut cli = ChildGuard::spawn(
        judge_command(Format::Chess)
            .args(["--retries", "2", "--server", &server.url()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let mut stdin = cli.0.stdin.take().unwrap();
    let stderr = drain(cli.0.stderr.take().unwrap());
    let mut stdout = BufReader::new(cli.0.stdout.take().unwrap());
    // One query, then wait for its answer: the stream is open and served.
    stdin.write_all(b"4\n2 1 2\n0\n1 3\n0\n1 0\n").unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "WIN\n");
    server.child.0.kill().unwrap();
    server.child.0.wait().unwrap();
    let _ = stdin.write_all(b"1 1\n");
    drop(stdin);
    let status = cli.wait_with_timeout(RUN_TIMEOUT);
    let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
    assert_eq!(status.code(), Some(EXIT_FAILURE), "{stderr}");
    assert!(
        stderr.contains("connection to the server was lost"),
        "{stderr}"
    );
}

/// TLS and token settings, often left in the environment, concern --server only: the
/// embedded server is reached through in-memory pipes, in plaintext.
#[test]
fn connection_settings_apply_only_with_server() {
    let settings = [
        ("GRUNDY_TLS_CA", "/nonexistent/ca.pem"),
        ("GRUNDY_CLIENT_CERT", "/nonexistent/client.pem"),
        ("GRUNDY_AUTH_TOKEN_FILE", "/nonexistent/token"),
    ];
    let output = run(
        judge_command(Format::Chess)
            .arg(data_dir().join("chess_sample.in"))
            .envs(settings),
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{}", lossy(&output.stderr));
    assert!(output.stderr.is_empty(), "{}", lossy(&output.stderr));
    assert_eq!(output.stdout, read(&data_dir().join("chess_sample.out")));

    let output = run(
        judge_command(Format::Chess)
            .arg(data_dir().join("chess_sample.in"))
            .args(["--server", "http://127.0.0.1:1"])
            .envs(settings),
        None,
    );
    let stderr = lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_FAILURE), "{stderr}");
    assert!(stderr.contains("TLS options given"), "{stderr}");
}

/// Test cases run a few at a time, but their output keeps input order, and an error after
/// many test cases comes after all of their verdicts.
#[test]
fn an_error_after_many_test_cases_comes_after_all_their_verdicts() {
    let mut input = read(&data_dir().join("chess_random_sparse.in"));
    let lines = input.iter().filter(|&&byte| byte == b'\n').count();
    input.extend_from_slice(b"3\n1 7\n");
    let output = run(&mut judge_command(Format::Chess), Some(input));
    assert_eq!(output.status.code(), Some(EXIT_BAD_INPUT));
    assert_eq!(
        lossy(&output.stderr),
        format!(
            "error: line {}, column 3: an out-neighbour is 7, out of range: vertices are 0 to 2\n",
            lines + 2
        )
    );
    let expected = read(&data_dir().join("chess_random_sparse.out"));
    if let Some(difference) = first_difference(&expected, &output.stdout) {
        panic!("{difference}");
    }
}

/// A graph the server rejects while later games are already streaming: the games before it
/// are printed whole, nothing after it.
#[test]
fn a_rejected_graph_amid_streaming_games_ends_the_output_there() {
    let mut games =
        AddsubGame::parse_all(&lossy(&read(&data_dir().join("addsub_random_small.in"))));
    let games_before = 3;
    let printed_lines: usize = games[..games_before]
        .iter()
        .map(|game| game.rounds.len() + 2)
        .sum();
    let cyclic = AddsubGame {
        successors: vec![vec![1], vec![0]],
        edges: vec![(0, 1), (1, 0)],
        split_counts: vec![1, 1],
        rounds: vec![vec![1, 0]],
    };
    games.insert(games_before, cyclic);
    let input = AddsubGame::to_judge_text(&games).into_bytes();
    let output = run(&mut judge_command(Format::Addsub), Some(input));
    let stderr = lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_BAD_INPUT), "{stderr}");
    assert!(stderr.starts_with("error: game 4 (line "), "{stderr}");
    let expected: Vec<u8> = read(&data_dir().join("addsub_random_small.out"))
        .split_inclusive(|&byte| byte == b'\n')
        .take(printed_lines)
        .flatten()
        .copied()
        .collect();
    if let Some(difference) = first_difference(&expected, &output.stdout) {
        panic!("{difference}");
    }
}

/// A server that requires a token, called without one: one line naming the flag that sends
/// it, no retries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_requiring_a_token_names_auth_token_file() {
    let server = serve(ServerConfig {
        service: service_config(),
        auth_token: Some("s3cret".into()),
        ..ServerConfig::default()
    })
    .await;
    let url = server.url();
    let output = tokio::task::spawn_blocking(move || {
        run(
            judge_command(Format::Chess)
                .arg(data_dir().join("chess_sample.in"))
                .args(["--server", &url]),
            None,
        )
    })
    .await
    .unwrap();
    let stderr = lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_FAILURE), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("requires a bearer token"), "{stderr}");
    assert!(stderr.contains("--auth-token-file FILE"), "{stderr}");
}

/// A server that requires a client certificate (mutual TLS), called without one: one line
/// saying so and naming the flags that give one, no retries. A certificate it does not trust
/// is refused alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_requiring_a_client_certificate_names_the_flags_once() {
    let ours = pki();
    let server = serve(ServerConfig {
        service: service_config(),
        tls: Some(TlsConfig {
            cert_pem: ours.server_cert_pem.into_bytes(),
            key_pem: ours.server_key_pem.into_bytes(),
            client_ca_pem: Some(ours.ca_pem.clone().into_bytes()),
        }),
        ..ServerConfig::default()
    })
    .await;
    let dir = TempDir::new("cli-mtls");
    let ca = dir.write("ca.pem", ours.ca_pem.as_bytes());
    let stranger = pki();
    let cert = dir.write("stranger.pem", stranger.client_cert_pem.as_bytes());
    let key = dir.write("stranger.key", stranger.client_key_pem.as_bytes());
    let url = format!("https://{}", server.address);
    let judge = move |certificate: Option<(&Path, &Path)>| {
        let mut command = judge_command(Format::Chess);
        command
            .arg(data_dir().join("chess_sample.in"))
            .args(["--server", &url, "--tls-ca"])
            .arg(&ca);
        if let Some((cert, key)) = certificate {
            command
                .arg("--tls-cert")
                .arg(cert)
                .arg("--tls-key")
                .arg(key);
        }
        let output = run(&mut command, None);
        let stderr = lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(EXIT_FAILURE), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "no retries: {stderr}");
        assert!(output.stdout.is_empty(), "{}", lossy(&output.stdout));
        stderr
    };
    let (without, with_stranger) =
        tokio::task::spawn_blocking(move || (judge(None), judge(Some((&cert, &key)))))
            .await
            .unwrap();
    for named in [
        "requires a client certificate",
        "--tls-cert CERT.pem",
        "--tls-key KEY.pem",
    ] {
        assert!(without.contains(named), "{named}: {without}");
    }
    assert!(
        with_stranger.contains("refused the TLS handshake (alert"),
        "{with_stranger}"
    );
    assert!(with_stranger.contains("--tls-cert"), "{with_stranger}");
}
