//! CLI tier: judge files run through the real `grundy` and `grundy-server` binaries.
//!
//! `tests/data/` holds judge inputs with the judge's expected output, produced by the original
//! C++ solutions or by independent brute force (`tests/data/README.md` says how, file by file):
//!
//! - `chess_*.in`, `addsub_*.in`: valid input; `.out` is the exact stdout, the exit code is 0.
//!   The prefix names the format (`grundy judge chess` or `grundy judge addsub`).
//! - `bad_chess_*.in`, `bad_addsub_*.in`: malformed input; the exit code is 2, `.out` is the
//!   stdout still printed for everything before the error and `.err` the exact stderr.
//! - `<stem>.explain.out`: `--explain` output for `<stem>.in` (its moves are checked by
//!   playing them).
//!
//! `GRUNDY_BLESS=1 cargo test --test cli judge::` rewrites the expected files from the actual output
//! instead of comparing (never in CI; review the diff, see the README).

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::process::{ChildGuard, RUN_TIMEOUT, ServerProcess, drain, lines_of, run};
use crate::support::server::{serve, service_config};
use grundy::service::{ServerConfig, TlsConfig};

const GRUNDY: &str = env!("CARGO_BIN_EXE_grundy");
const GRUNDY_SERVER: &str = env!("CARGO_BIN_EXE_grundy-server");

/// Exit codes of `grundy judge`, as documented in its `--help`. Spelled out here rather than
/// imported from the crate: they are the contract with scripts, which this tier checks.
const EXIT_FAILURE: i32 = 1;
const EXIT_BAD_INPUT: i32 = 2;

#[test]
fn golden_files_with_embedded_server() {
    check_golden_files(None, blessing());
}

#[test]
fn golden_files_with_separate_server() {
    let mut server = ServerProcess::start(GRUNDY_SERVER, &[]);
    // Never blesses: the embedded-server loop owns the expected files.
    check_golden_files(Some(&server.url()), false);
    server.assert_still_running();
}

#[test]
fn malformed_inputs_report_line_and_column() {
    let bless = blessing();
    let cases = data_cases(CaseKind::Malformed);
    let mut failures = Vec::new();
    for case in &cases {
        let output = run(judge_command(case.format).arg(&case.input), None);
        let mut problems = Vec::new();
        if output.status.code() != Some(EXIT_BAD_INPUT) {
            problems.push(format!(
                "exit status {}, expected code {EXIT_BAD_INPUT}",
                output.status
            ));
        }
        if let Err(difference) = check_expected(&case.expected("out"), &output.stdout, bless) {
            problems.push(format!("stdout: {difference}"));
        }
        if let Err(difference) = check_expected(&case.expected("err"), &output.stderr, bless) {
            problems.push(format!("stderr: {difference}"));
        }
        if !problems.is_empty() {
            failures.push(format!("{}: {}", case.name, problems.join("; ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} malformed inputs failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn reads_standard_input_when_file_is_dash_or_absent() {
    let input = read(&data_dir().join("chess_sample.in"));
    let expected = read(&data_dir().join("chess_sample.out"));
    for file_args in [&["-"][..], &[][..]] {
        let output = run(
            judge_command(Format::Chess).args(file_args),
            Some(input.clone()),
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "grundy judge chess {file_args:?} < chess_sample.in: {}",
            lossy(&output.stderr)
        );
        if let Some(difference) = first_difference(&expected, &output.stdout) {
            panic!("grundy judge chess {file_args:?} < chess_sample.in: {difference}");
        }
    }
}

/// A file as standard input that a script has already read into (as `read` leaves it): grundy
/// reads from where the descriptor stands, as reading it would, and leaves the descriptor at
/// the end, whether it reads the file in place (a regular file) or as a stream.
#[test]
fn a_file_on_standard_input_is_read_from_where_its_descriptor_stands() {
    use std::io::{Seek, SeekFrom};
    let prefix = b"this line was read before grundy ran\n";
    let mut text = prefix.to_vec();
    text.extend(read(&data_dir().join("chess_sample.in")));
    let expected = read(&data_dir().join("chess_sample.out"));
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stdin_read_from_its_offset.in");
    fs::write(&path, &text).unwrap();
    let mut file = fs::File::open(&path).unwrap();
    file.seek(SeekFrom::Start(prefix.len() as u64)).unwrap();
    // The child's standard input shares the file's offset with this handle.
    let mut shared = file.try_clone().unwrap();
    let mut child = ChildGuard::spawn(
        judge_command(Format::Chess)
            .stdin(Stdio::from(file))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let stdout = drain(child.0.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.0.stderr.take().expect("stderr is piped"));
    let status = child.wait_with_timeout(RUN_TIMEOUT);
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert_eq!(status.code(), Some(0), "{}", lossy(&stderr));
    if let Some(difference) = first_difference(&expected, &stdout) {
        panic!("chess_sample.in after a line already read: {difference}");
    }
    assert_eq!(shared.stream_position().unwrap(), text.len() as u64);
    fs::remove_file(&path).unwrap();
}

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

#[test]
fn max_message_bytes_takes_units_and_refuses_sizes_too_small_to_work() {
    let sample = data_dir().join("chess_sample.in");
    let output = run(
        judge_command(Format::Chess)
            .arg(&sample)
            .args(["--max-message-bytes", "1MiB"]),
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{}", lossy(&output.stderr));
    assert_eq!(output.stdout, read(&data_dir().join("chess_sample.out")));
    for small in ["0", "1", "2"] {
        let output = run(
            judge_command(Format::Chess)
                .arg(&sample)
                .args(["--max-message-bytes", small]),
            None,
        );
        let stderr = lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(EXIT_BAD_INPUT),
            "{small}: {stderr}"
        );
        assert!(stderr.contains("too small"), "{small}: {stderr}");
        assert!(!stderr.contains("127.0.0.1"), "{small}: {stderr}");
    }
}

#[test]
fn missing_input_file_is_a_failure() {
    let output = run(
        judge_command(Format::Chess).arg(data_dir().join("no_such_file.in")),
        None,
    );
    let stderr = lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_FAILURE), "stderr: {stderr}");
    assert!(stderr.starts_with("error: cannot open"), "stderr: {stderr}");
}

/// Like `grundy ... | head -1`: the reader leaving early must not turn into an error.
#[test]
fn closed_stdout_is_not_an_error() {
    // Megabytes of output: far more than the pipe buffer and grundy's internal queue hold,
    // so grundy is still writing when the pipe closes.
    const QUERIES: usize = 1_000_000;
    let input = Path::new(env!("CARGO_TARGET_TMPDIR")).join("closed_stdout.in");
    let mut text = String::from("2\n1 1\n0\n");
    text.push_str(&"1 0\n".repeat(QUERIES));
    text.push_str("0\n");
    fs::write(&input, text).expect("cannot write the generated input");

    let mut child = ChildGuard::spawn(
        judge_command(Format::Chess)
            .arg(&input)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let stderr = drain(child.0.stderr.take().expect("stderr is piped"));
    let mut stdout = BufReader::new(child.0.stdout.take().expect("stdout is piped"));
    let mut first_line = String::new();
    stdout
        .read_line(&mut first_line)
        .expect("cannot read grundy's stdout");
    assert_eq!(first_line, "WIN\n");
    drop(stdout);

    let status = child.wait_with_timeout(RUN_TIMEOUT);
    let stderr = stderr.join().expect("stderr reader panicked");
    assert_eq!(status.code(), Some(0), "stderr: {}", lossy(&stderr));
    assert!(stderr.is_empty(), "stderr: {}", lossy(&stderr));
}

/// A program that writes a query and waits for its answer gets it: grundy does not hold
/// verdicts back until a batch fills or the input ends.
#[test]
fn answers_each_query_as_soon_as_it_is_read() {
    let mut judge = Conversation::start(&mut judge_command(Format::Chess));
    // The sample's first graph: Grundy values (2, 0, 1, 0).
    judge.ask("4\n2 1 2\n0\n1 3\n0\n1 0\n", "WIN");
    judge.ask("2 1 3\n", "LOSE");
    judge.ask("1 2\n", "WIN");
    judge.end("0\n");
}

/// `grundy judge` with its input written a line at a time and its answers read as they come.
struct Conversation {
    child: ChildGuard,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
    stderr: std::thread::JoinHandle<Vec<u8>>,
}

impl Conversation {
    fn start(command: &mut Command) -> Self {
        let mut child = ChildGuard::spawn(
            command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        );
        Self {
            stdin: child.0.stdin.take().expect("stdin is piped"),
            lines: lines_of(child.0.stdout.take().expect("stdout is piped")),
            stderr: drain(child.0.stderr.take().expect("stderr is piped")),
            child,
        }
    }

    /// Writes `text` and expects `expected` as the next line of output, while the input
    /// stays open.
    fn ask(&mut self, text: &str, expected: &str) {
        self.stdin
            .write_all(text.as_bytes())
            .and_then(|()| self.stdin.flush())
            .expect("cannot write to grundy");
        let answer = self
            .lines
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no answer to {text:?} while the input stays open"));
        assert_eq!(answer, expected, "answer to {text:?}");
    }

    /// Writes `last`, closes the input and expects a clean exit, nothing more on stdout and
    /// nothing on stderr.
    fn end(mut self, last: &str) {
        self.stdin
            .write_all(last.as_bytes())
            .expect("cannot write to grundy");
        drop(self.stdin);
        let status = self.child.wait_with_timeout(RUN_TIMEOUT);
        let stderr = self.stderr.join().expect("stderr reader panicked");
        assert_eq!(status.code(), Some(0), "stderr: {}", lossy(&stderr));
        assert!(stderr.is_empty(), "stderr: {}", lossy(&stderr));
        assert!(self.lines.recv().is_err(), "output after the last answer");
    }
}

/// A server that ends a quiet stream (`--stream-idle-timeout`) fails nothing: the next query
/// opens a new stream on the same server and is answered, with no retry and no message.
#[test]
fn a_stream_the_server_ended_for_quiet_resumes_with_the_next_query() {
    let server = ServerProcess::start(GRUNDY_SERVER, &["--stream-idle-timeout", "200ms"]);
    let mut judge =
        Conversation::start(judge_command(Format::Chess).args(["--server", &server.url()]));
    judge.ask("4\n2 1 2\n0\n1 3\n0\n1 0\n", "WIN");
    // Nobody types: the server ends the stream.
    server.wait_for_log("DEADLINE_EXCEEDED", Duration::from_secs(10));
    judge.ask("2 1 3\n", "LOSE");
    judge.ask("1 2\n", "WIN");
    judge.end("0\n");
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

/// `--batch-size 1` over 60,000 queries prints every line, in order, as the default batch
/// size does. (It once stalled after 20,000 to 45,000 lines in about a third of the runs,
/// every thread idle: the in-order writer blocked the thread that drives the dispatcher, and
/// a wake-up was lost.) Three runs, each bounded by the run timeout.
#[test]
fn batch_size_one_over_many_queries_finishes_with_every_line() {
    let generated = Command::new(GRUNDY)
        .args([
            "gen", "chess", "--cases", "1", "--n", "50", "--shape", "dag",
        ])
        .args(["--queries", "60000", "--seed", "8"])
        .output()
        .unwrap();
    assert!(generated.status.success());
    let input = generated.stdout;
    let judged = |extra: &[&str]| {
        let output = run(
            judge_command(Format::Chess)
                .args(["--progress", "never"])
                .args(extra),
            Some(input.clone()),
        );
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        output.stdout
    };
    let expected = judged(&[]);
    assert_eq!(expected.iter().filter(|&&b| b == b'\n').count(), 60_000);
    for _ in 0..3 {
        assert!(judged(&["--batch-size", "1"]) == expected, "output differs");
    }
}

/// Requests are cut to fit --max-message-bytes; a query that cannot fit in one message is an
/// error naming it (exit 1), after the verdicts before it; a graph that cannot is uploaded in
/// chunks.
#[test]
fn messages_stay_under_max_message_bytes() {
    for (format, name, limit) in [
        (Format::Chess, "chess_many_tokens", "2000"),
        (Format::Chess, "chess_random_small", "300"),
        (Format::Addsub, "addsub_random_max_v", "1000"),
    ] {
        let output = run(
            judge_command(format)
                .arg(data_dir().join(format!("{name}.in")))
                .args(["--max-message-bytes", limit]),
            None,
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{name}: {}",
            lossy(&output.stderr)
        );
        let expected = read(&data_dir().join(format!("{name}.out")));
        if let Some(difference) = first_difference(&expected, &output.stdout) {
            panic!("{name} with --max-message-bytes {limit}: {difference}");
        }
    }

    // chess_many_tokens: query 11 of test case 1 has 1000 tokens.
    let output = run(
        judge_command(Format::Chess)
            .arg(data_dir().join("chess_many_tokens.in"))
            .args(["--max-message-bytes", "1000"]),
        None,
    );
    assert_eq!(output.status.code(), Some(EXIT_FAILURE));
    assert_eq!(
        lossy(&output.stderr),
        "error: test case 1 (line 1): query 11 takes 1017 bytes encoded, more than \
         --max-message-bytes 1000 allows in one message\n"
    );
    let expected = read(&data_dir().join("chess_many_tokens.out"));
    let first_ten: Vec<u8> = expected
        .split_inclusive(|&byte| byte == b'\n')
        .take(10)
        .flatten()
        .copied()
        .collect();
    assert_eq!(lossy(&output.stdout), lossy(&first_ten));

    // A graph larger than one message goes through PutGraph in chunks: the same output.
    let output = run(
        judge_command(Format::Chess)
            .arg(data_dir().join("chess_random_max_n.in"))
            .args(["--max-message-bytes", "1000"]),
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{}", lossy(&output.stderr));
    let expected = read(&data_dir().join("chess_random_max_n.out"));
    if let Some(difference) = first_difference(&expected, &output.stdout) {
        panic!("chess_random_max_n through chunks: {difference}");
    }
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

/// Every `<stem>.explain.out` is the `--explain` output for `<stem>.in`, and its moves are
/// checked independently of the recording: each is legal, and grundy judges the position it
/// leads to as the verdict demands (LOSE after a WIN move, DRAW after a DRAW move).
#[test]
fn explained_moves_are_legal_and_keep_their_promise() {
    let entries = fs::read_dir(data_dir()).expect("cannot list tests/data");
    let mut stems: Vec<String> = entries
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            Some(name.strip_suffix(".explain.out")?.to_string())
        })
        .collect();
    stems.sort();
    assert!(stems.len() >= 3, "explain files: {stems:?}");
    for stem in &stems {
        let format = Format::from_stem(stem).expect("an explain file names its format");
        let input_path = data_dir().join(format!("{stem}.in"));
        let output = run(
            judge_command(format).arg(&input_path).arg("--explain"),
            None,
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{stem}: {}",
            lossy(&output.stderr)
        );
        if let Err(difference) = check_expected(
            &data_dir().join(format!("{stem}.explain.out")),
            &output.stdout,
            blessing(),
        ) {
            panic!("{stem}.explain.out: {difference}");
        }
        let input = String::from_utf8(read(&input_path)).expect("input is UTF-8");
        let verdicts = String::from_utf8(read(&data_dir().join(format!("{stem}.out")))).unwrap();
        let explained = String::from_utf8(output.stdout).expect("output is UTF-8");
        match format {
            Format::Chess => check_chess_moves(stem, &input, &verdicts, &explained),
            Format::Addsub => check_addsub_moves(stem, &input, &verdicts, &explained),
        }
    }
}

/// WIN lines move to a LOSE position, DRAW lines to a DRAW one, LOSE lines name no move.
fn check_chess_moves(stem: &str, input: &str, verdicts: &str, explained: &str) {
    let cases = ChessCase::parse_all(input);
    let mut explained = explained.lines();
    let mut verdicts = verdicts.lines();
    // The same graphs, queried at the positions the explained moves lead to.
    let mut after_moves = Vec::new();
    let mut expected_after = Vec::new();
    for case in &cases {
        let mut queries_after = Vec::new();
        for tokens in &case.queries {
            let line = explained.next().expect("a line per query");
            let verdict = verdicts.next().expect("a verdict per query");
            match parse_explained(line) {
                (word, Some((from, to))) if word == verdict && word != "LOSE" => {
                    let token = tokens.iter().position(|&t| t == from);
                    let token = token.unwrap_or_else(|| {
                        panic!("{stem}: {line:?}: no token on {from} in the query {tokens:?}")
                    });
                    assert!(
                        case.successors[from as usize].contains(&to),
                        "{stem}: {line:?}: no edge {from} -> {to}"
                    );
                    let mut moved = tokens.clone();
                    moved[token] = to;
                    queries_after.push(moved);
                    expected_after.push(if word == "WIN" { "LOSE" } else { "DRAW" });
                }
                ("LOSE", None) if verdict == "LOSE" => {}
                _ => panic!(
                    "{stem}: {line:?}: expected the verdict {verdict}, with a move unless LOSE"
                ),
            }
        }
        after_moves.push(ChessCase {
            successors: case.successors.clone(),
            queries: queries_after,
        });
    }
    assert_eq!(
        explained.next(),
        None,
        "{stem}: more output lines than queries"
    );

    let judge_text = ChessCase::to_judge_text(&after_moves);
    let output = run(
        &mut judge_command(Format::Chess),
        Some(judge_text.into_bytes()),
    );
    assert_eq!(output.status.code(), Some(0), "{}", lossy(&output.stderr));
    let verdicts_after: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        verdicts_after, expected_after,
        "{stem}: an explained move does not do what its verdict promises"
    );
}

/// WINNING lines name a legal split (a unit taken from a vertex holding one, K_v picks among
/// its out-neighbours, in increasing order) that leaves a LOSING round.
fn check_addsub_moves(stem: &str, input: &str, verdicts: &str, explained: &str) {
    let games = AddsubGame::parse_all(input);
    let mut explained = explained.lines();
    let mut verdicts = verdicts.lines();
    let mut after_moves = Vec::new();
    for game in &games {
        let mut rounds_after = Vec::new();
        for _header_or_round in 0..game.rounds.len() + 2 {
            let line = explained.next().expect("a line per judge line");
            let verdict = verdicts.next().expect("a judge line");
            let Some((verdict_line, picks)) = line.split_once(" move ") else {
                assert_eq!(line, verdict, "{stem}: only WINNING lines have a move");
                continue;
            };
            assert_eq!(verdict_line, verdict, "{stem}: {line:?}");
            assert!(verdict.ends_with(": WINNING"), "{stem}: {line:?}");
            let round: usize = verdict
                .strip_prefix("Round#")
                .and_then(|rest| rest.split(':').next())
                .and_then(|number| number.parse().ok())
                .unwrap_or_else(|| panic!("{stem}: {line:?}: no round number"));
            let (vertex, picks) = picks.split_once(" -> ").expect("`v -> picks`");
            let vertex: usize = vertex.parse().expect("a vertex");
            let mut values = game.rounds[round - 1].clone();
            assert!(values[vertex] >= 1, "{stem}: {line:?}: no unit on {vertex}");
            values[vertex] -= 1;
            let mut pick_count = 0u64;
            let mut previous = 0u32;
            for pick in picks.split(' ') {
                let (target, count) = match pick.split_once('*') {
                    Some((target, count)) => (target, count.parse::<u64>().expect("a count")),
                    None => (pick, 1),
                };
                let target: u32 = target.parse().expect("a vertex");
                assert!(target >= previous, "{stem}: {line:?}: picks out of order");
                assert!(
                    game.successors[vertex].contains(&target),
                    "{stem}: {line:?}: no edge {vertex} -> {target}"
                );
                previous = target;
                pick_count += count;
                // Only parity matters, and it keeps the values small.
                values[target as usize] += count % 2;
            }
            assert_eq!(
                pick_count,
                u64::from(game.split_counts[vertex]),
                "{stem}: {line:?}: K_{vertex} picks expected"
            );
            rounds_after.push(values);
        }
        after_moves.push(AddsubGame {
            rounds: rounds_after,
            ..game.clone()
        });
    }
    assert_eq!(
        explained.next(),
        None,
        "{stem}: more output lines than expected"
    );

    let output = run(
        &mut judge_command(Format::Addsub),
        Some(AddsubGame::to_judge_text(&after_moves).into_bytes()),
    );
    assert_eq!(output.status.code(), Some(0), "{}", lossy(&output.stderr));
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        assert!(
            line.is_empty() || line.starts_with("Game#") || line.ends_with(": LOSING"),
            "{stem}: an explained move does not win: {line}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Golden-file loop
// ---------------------------------------------------------------------------------------

/// Runs every golden file (through the embedded server, or the one at `server_url`) and fails
/// with the list of all files that differ, not just the first.
fn check_golden_files(server_url: Option<&str>, bless: bool) {
    let cases = data_cases(CaseKind::Golden);
    let mut failures = Vec::new();
    for case in &cases {
        let mut command = judge_command(case.format);
        command.arg(&case.input);
        if let Some(url) = server_url {
            command.args(["--server", url]);
        }
        let output = run(&mut command, None);
        let mut problems = Vec::new();
        if output.status.code() != Some(0) {
            problems.push(format!("exit status {}, expected 0", output.status));
        }
        if let Err(difference) = check_expected(&case.expected("out"), &output.stdout, bless) {
            problems.push(format!("stdout: {difference}"));
        }
        if !output.stderr.is_empty() {
            problems.push(format!("stderr: {}", lossy(&output.stderr).trim_end()));
        }
        if !problems.is_empty() {
            failures.push(format!("{}: {}", case.name, problems.join("; ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden files failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// A judge format, named by the prefix of a data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Chess,
    Addsub,
}

impl Format {
    /// The format a file stem starts with (`chess_...`, `addsub_...`).
    fn from_stem(stem: &str) -> Option<Self> {
        if stem.starts_with("chess_") {
            Some(Self::Chess)
        } else if stem.starts_with("addsub_") {
            Some(Self::Addsub)
        } else {
            None
        }
    }

    fn subcommand_arg(self) -> &'static str {
        match self {
            Self::Chess => "chess",
            Self::Addsub => "addsub",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CaseKind {
    /// `chess_*.in`, `addsub_*.in`.
    Golden,
    /// `bad_chess_*.in`, `bad_addsub_*.in`.
    Malformed,
}

/// One input file of `tests/data/`.
struct DataCase {
    /// The file stem, e.g. `chess_sample`: names the case in failure reports.
    name: String,
    format: Format,
    input: PathBuf,
}

impl DataCase {
    /// The expected-output file next to the input: `<name>.<extension>`.
    fn expected(&self, extension: &str) -> PathBuf {
        data_dir().join(format!("{}.{extension}", self.name))
    }
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
}

/// The `.in` files of one kind, sorted by name.
fn data_cases(kind: CaseKind) -> Vec<DataCase> {
    let entries = fs::read_dir(data_dir()).expect("cannot list tests/data");
    let mut cases: Vec<DataCase> = entries
        .map(|entry| entry.expect("cannot list tests/data").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "in"))
        .filter_map(|input| {
            let name = input.file_stem()?.to_str()?.to_string();
            let format = match kind {
                CaseKind::Golden => Format::from_stem(&name)?,
                CaseKind::Malformed => Format::from_stem(name.strip_prefix("bad_")?)?,
            };
            Some(DataCase {
                name,
                format,
                input,
            })
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(!cases.is_empty(), "no {kind:?} files in tests/data");
    cases
}

/// `GRUNDY_BLESS=1`: rewrite expected files from the actual output instead of comparing.
fn blessing() -> bool {
    std::env::var_os("GRUNDY_BLESS").is_some_and(|value| value == "1")
}

/// Compares `actual` with the file at `expected_path`, or (blessing) overwrites the file.
fn check_expected(expected_path: &Path, actual: &[u8], bless: bool) -> Result<(), String> {
    if bless {
        fs::write(expected_path, actual)
            .map_err(|e| format!("cannot bless {}: {e}", expected_path.display()))?;
        return Ok(());
    }
    let expected = fs::read(expected_path)
        .map_err(|e| format!("cannot read {}: {e}", expected_path.display()))?;
    match first_difference(&expected, actual) {
        None => Ok(()),
        Some(difference) => Err(difference),
    }
}

/// Where `actual` first departs from `expected`, line by line; `None` when they are equal.
/// Lines keep their `\n`, so a missing final newline or a stray `\r` shows up.
fn first_difference(expected: &[u8], actual: &[u8]) -> Option<String> {
    if expected == actual {
        return None;
    }
    let mut expected_lines = expected.split_inclusive(|&byte| byte == b'\n');
    let mut actual_lines = actual.split_inclusive(|&byte| byte == b'\n');
    let mut line_number = 1;
    loop {
        match (expected_lines.next(), actual_lines.next()) {
            (Some(wanted), Some(got)) if wanted == got => line_number += 1,
            (wanted, got) => {
                return Some(format!(
                    "first difference at line {line_number}: expected {}, got {}",
                    show_line(wanted),
                    show_line(got)
                ));
            }
        }
    }
}

fn show_line(line: Option<&[u8]>) -> String {
    match line {
        Some(line) => format!("{:?}", String::from_utf8_lossy(line)),
        None => "end of output".to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------

/// `grundy judge FORMAT` in a controlled environment: without `RUST_LOG` (log lines would land
/// in the compared stderr) and without `GRUNDY_SERVER` (it would replace the embedded server).
fn judge_command(format: Format) -> Command {
    let mut command = Command::new(GRUNDY);
    command
        .args(["judge", format.subcommand_arg()])
        .env_remove("RUST_LOG")
        .env_remove("GRUNDY_SERVER");
    command
}

// ---------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A POJ 2425 test case, for checking explained moves against the graph.
struct ChessCase {
    successors: Vec<Vec<u32>>,
    queries: Vec<Vec<u32>>,
}

impl ChessCase {
    /// Parses a well-formed judge file (test data only: panics on anything else).
    fn parse_all(text: &str) -> Vec<Self> {
        let mut numbers = text
            .split_ascii_whitespace()
            .map(|token| token.parse::<u32>().expect("test data holds numbers"));
        fn take(numbers: &mut impl Iterator<Item = u32>, count: u32) -> Vec<u32> {
            (0..count)
                .map(|_| numbers.next().expect("truncated test data"))
                .collect()
        }
        let mut cases = Vec::new();
        while let Some(vertex_count) = numbers.next() {
            let mut successors = Vec::new();
            for _ in 0..vertex_count {
                let degree = numbers.next().expect("an out-degree");
                successors.push(take(&mut numbers, degree));
            }
            let mut queries = Vec::new();
            loop {
                match numbers.next().expect("a query or 0") {
                    0 => break,
                    token_count => queries.push(take(&mut numbers, token_count)),
                }
            }
            cases.push(Self {
                successors,
                queries,
            });
        }
        cases
    }

    /// The judge file holding `cases`, one adjacency list or query per line.
    fn to_judge_text(cases: &[Self]) -> String {
        let mut lines = Vec::new();
        for case in cases {
            lines.push(case.successors.len().to_string());
            for list in case.successors.iter().chain(&case.queries) {
                let counted = std::iter::once(list.len() as u32).chain(list.iter().copied());
                lines.push(counted.map(|n| n.to_string()).collect::<Vec<_>>().join(" "));
            }
            lines.push("0".to_string());
        }
        lines.join("\n") + "\n"
    }
}

/// An LA 4411 game, for checking explained moves against the graph.
#[derive(Clone)]
struct AddsubGame {
    successors: Vec<Vec<u32>>,
    /// Edges in input order, to write the game back.
    edges: Vec<(u32, u32)>,
    split_counts: Vec<u32>,
    rounds: Vec<Vec<u64>>,
}

impl AddsubGame {
    /// Parses a well-formed judge file (test data only: panics on anything else).
    fn parse_all(text: &str) -> Vec<Self> {
        let mut numbers = text
            .split_ascii_whitespace()
            .map(|token| token.parse::<u64>().expect("test data holds numbers"));
        let mut next = || numbers.next().expect("truncated test data");
        let game_count = next();
        (0..game_count)
            .map(|_| {
                let (vertex_count, edge_count) = (next() as usize, next());
                let mut successors = vec![Vec::new(); vertex_count];
                let edges: Vec<(u32, u32)> = (0..edge_count)
                    .map(|_| (next() as u32, next() as u32))
                    .collect();
                for &(from, to) in &edges {
                    successors[from as usize].push(to);
                }
                let split_counts = (0..vertex_count).map(|_| next() as u32).collect();
                let round_count = next();
                let rounds = (0..round_count)
                    .map(|_| (0..vertex_count).map(|_| next()).collect())
                    .collect();
                Self {
                    successors,
                    edges,
                    split_counts,
                    rounds,
                }
            })
            .collect()
    }

    fn to_judge_text(games: &[Self]) -> String {
        let join = |numbers: &mut dyn Iterator<Item = u64>| {
            numbers.map(|n| n.to_string()).collect::<Vec<_>>().join(" ")
        };
        let mut lines = vec![games.len().to_string()];
        for game in games {
            lines.push(format!("{} {}", game.successors.len(), game.edges.len()));
            lines.extend(game.edges.iter().map(|(from, to)| format!("{from} {to}")));
            lines.push(join(&mut game.split_counts.iter().map(|&k| u64::from(k))));
            lines.push(game.rounds.len().to_string());
            lines.extend(
                game.rounds
                    .iter()
                    .map(|round| join(&mut round.iter().copied())),
            );
        }
        lines.join("\n") + "\n"
    }
}

/// `("WIN", Some((from, to)))` for `WIN move FROM -> TO` (also `DRAW move ...`),
/// `("LOSE", None)` for `LOSE`.
fn parse_explained(line: &str) -> (&str, Option<(u32, u32)>) {
    let mut words = line.split(' ');
    let verdict = words.next().unwrap_or_default();
    let rest: Vec<&str> = words.collect();
    match rest.as_slice() {
        [] => (verdict, None),
        ["move", from, "->", to] => match (from.parse(), to.parse()) {
            (Ok(from), Ok(to)) => (verdict, Some((from, to))),
            _ => panic!("{line:?}: malformed move"),
        },
        _ => panic!("{line:?}: expected `VERDICT` or `VERDICT move FROM -> TO`"),
    }
}

/// `grundy analyse`: every `<stem>.analyse.jsonl` is the output for `<stem>.in`, exactly; and
/// independently of that recording, each line's outcome is the judge's (the `.out` file, from
/// the original C++ solutions or brute force), every chess move is listed best first, and a
/// malformed input fails as `judge` fails, with the lines of everything before it.
#[test]
fn analyse_prints_one_json_line_per_query_in_input_order() {
    let stems = [
        "chess_sample",
        "chess_cyclic_small",
        "chess_multi_edges",
        "addsub_sample",
    ];
    for stem in stems {
        let format = Format::from_stem(stem).expect("the stem names its format");
        let input_path = data_dir().join(format!("{stem}.in"));
        let output = run(analyse_command(format).arg(&input_path), None);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{stem}: {}",
            lossy(&output.stderr)
        );
        let expected = data_dir().join(format!("{stem}.analyse.jsonl"));
        if let Err(difference) = check_expected(&expected, &output.stdout, blessing()) {
            panic!("{stem}.analyse.jsonl: {difference}");
        }
        let judged = String::from_utf8(read(&data_dir().join(format!("{stem}.out")))).unwrap();
        let outcomes: Vec<&str> = judged
            .lines()
            .filter_map(|line| match format {
                Format::Chess => Some(line.trim()),
                Format::Addsub => line.strip_prefix("Round#")?.split(": ").nth(1),
            })
            .collect();
        let lines: Vec<serde_json::Value> = String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).expect("each line is a JSON object"))
            .collect();
        assert_eq!(lines.len(), outcomes.len(), "{stem}: one line per query");
        for (line, judged) in lines.iter().zip(&outcomes) {
            let outcome = line["outcome"].as_str().unwrap();
            let expected = match *judged {
                "WINNING" => "WIN",
                "LOSING" => "LOSE",
                other => other,
            };
            assert_eq!(outcome, expected, "{stem}: {line}");
            if format == Format::Chess {
                check_best_first(stem, line);
            }
        }
    }
    let bad = data_dir().join("bad_chess_token_out_of_range.in");
    let output = run(analyse_command(Format::Chess).arg(&bad), None);
    assert_eq!(output.status.code(), Some(EXIT_BAD_INPUT));
    let judged = run(judge_command(Format::Chess).arg(&bad), None);
    assert_eq!(lossy(&output.stderr), lossy(&judged.stderr));
    assert_eq!(
        String::from_utf8(output.stdout).unwrap().lines().count(),
        String::from_utf8(judged.stdout).unwrap().lines().count(),
        "the lines of everything before the error are printed"
    );
}

/// Winning moves by increasing remoteness, then drawing moves, then losing moves by
/// decreasing remoteness; the position's remoteness follows from its best move.
fn check_best_first(stem: &str, line: &serde_json::Value) {
    let rank = |m: &serde_json::Value| match m["outcome"].as_str().unwrap() {
        "WIN" => (0, m["remoteness"].as_i64().unwrap_or(i64::MAX)),
        "DRAW" => (1, 0),
        _ => (2, -m["remoteness"].as_i64().unwrap_or(i64::MIN + 1)),
    };
    let moves = line["moves"].as_array().unwrap();
    for pair in moves.windows(2) {
        assert!(
            rank(&pair[0]) <= rank(&pair[1]),
            "{stem}: not best first: {line}"
        );
    }
    let remoteness = line["remoteness"].as_i64();
    match (line["outcome"].as_str().unwrap(), moves.first()) {
        ("LOSE", None) => assert_eq!(remoteness, Some(0), "{stem}: {line}"),
        ("WIN" | "LOSE", Some(best)) => assert_eq!(
            remoteness,
            best["remoteness"].as_i64().map(|r| r + 1),
            "{stem}: {line}"
        ),
        ("DRAW", _) => assert_eq!(remoteness, None, "{stem}: {line}"),
        _ => panic!("{stem}: {line}"),
    }
}

fn analyse_command(format: Format) -> Command {
    let mut command = Command::new(GRUNDY);
    command
        .args(["analyse", format.subcommand_arg()])
        .env_remove("RUST_LOG")
        .env_remove("GRUNDY_SERVER");
    command
}
