//! CLI tier: judge files run through the real `grundy` and `grundy-server` binaries.
//!
//! `tests/data/` holds judge inputs with the judge's expected output, produced by the original
//! C++ solutions or by independent brute force (`tests/data/README.md` says how, file by file):
//!
//! - `chess_*.in`, `addsub_*.in`: valid input; `.out` is the exact stdout, the exit code is 0.
//!   The prefix names the format (`grundy judge chess` or `grundy judge addsub`).
//! - `bad_chess_*.in`, `bad_addsub_*.in`: malformed input; the exit code is 2, `.out` is the
//!   stdout still printed for everything before the error and `.err` the exact stderr.
//! - `chess_sample.explain.out`: `--explain` output for the chess sample.
//!
//! `GRUNDY_BLESS=1 cargo test --test cli` rewrites the expected files from the actual output
//! instead of comparing (never in CI; review the diff, see the README).

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

const GRUNDY: &str = env!("CARGO_BIN_EXE_grundy");
const GRUNDY_SERVER: &str = env!("CARGO_BIN_EXE_grundy-server");

/// Exit codes of `grundy judge`, as documented in its `--help`. Spelled out here rather than
/// imported from the crate: they are the contract with scripts, which this tier checks.
const EXIT_FAILURE: i32 = 1;
const EXIT_BAD_INPUT: i32 = 2;

/// A run taking longer than this is hung: it is killed and the test fails (instead of
/// blocking the whole test binary).
const RUN_TIMEOUT: Duration = Duration::from_secs(30);

/// How long `grundy-server` may take to log the address it listens on.
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(10);

#[test]
fn golden_files_with_embedded_server() {
    check_golden_files(None, blessing());
}

#[test]
fn golden_files_with_separate_server() {
    let mut server = ServerProcess::start();
    // Never blesses: the embedded-server loop owns the expected files.
    check_golden_files(Some(&server.url), false);
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

    let status = wait_with_timeout(&mut child.0);
    let stderr = stderr.join().expect("stderr reader panicked");
    assert_eq!(status.code(), Some(0), "stderr: {}", lossy(&stderr));
    assert!(stderr.is_empty(), "stderr: {}", lossy(&stderr));
}

/// `--explain` names a legal move for every WIN, and that move wins: it leaves a LOSE position.
#[test]
fn explain_gives_legal_winning_moves() {
    let input_path = data_dir().join("chess_sample.in");
    let output = run(
        judge_command(Format::Chess)
            .arg(&input_path)
            .arg("--explain"),
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{}", lossy(&output.stderr));
    if let Err(difference) = check_expected(
        &data_dir().join("chess_sample.explain.out"),
        &output.stdout,
        blessing(),
    ) {
        panic!("chess_sample.explain.out: {difference}");
    }

    let cases = ChessCase::parse_all(&String::from_utf8_lossy(&read(&input_path)));
    let verdicts = String::from_utf8(read(&data_dir().join("chess_sample.out"))).unwrap();
    let explained = String::from_utf8(output.stdout).expect("output is UTF-8");
    let mut explained = explained.lines();
    let mut verdicts = verdicts.lines();
    // The same graphs, queried at the positions the explained moves lead to.
    let mut after_moves = Vec::new();
    for case in &cases {
        let mut queries_after = Vec::new();
        for tokens in &case.queries {
            let line = explained.next().expect("a line per query");
            let verdict = verdicts.next().expect("a verdict per query");
            match parse_explained(line) {
                ("WIN", Some((from, to))) if verdict == "WIN" => {
                    let token = tokens.iter().position(|&t| t == from);
                    let token = token.unwrap_or_else(|| {
                        panic!("{line:?}: no token on {from} in the query {tokens:?}")
                    });
                    assert!(
                        case.successors[from as usize].contains(&to),
                        "{line:?}: no edge {from} -> {to}"
                    );
                    let mut moved = tokens.clone();
                    moved[token] = to;
                    queries_after.push(moved);
                }
                ("LOSE", None) if verdict == "LOSE" => {}
                _ => panic!("{line:?}: expected the verdict {verdict} with a move iff WIN"),
            }
        }
        after_moves.push(ChessCase {
            successors: case.successors.clone(),
            queries: queries_after,
        });
    }
    assert_eq!(explained.next(), None, "more output lines than queries");

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
    let moves = after_moves.iter().map(|case| case.queries.len()).sum();
    assert_eq!(
        verdicts_after,
        vec!["LOSE"; moves],
        "an explained move does not win"
    );
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

/// What a finished run produced.
struct RunOutput {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Runs `command` to completion with `stdin` as its input (none: an empty stdin), collecting
/// both outputs concurrently so that neither pipe can fill up and stall the child.
fn run(command: &mut Command, stdin: Option<Vec<u8>>) -> RunOutput {
    let mut child = ChildGuard::spawn(
        command
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    if let Some(input) = stdin {
        let mut pipe = child.0.stdin.take().expect("stdin is piped");
        // The child may stop reading early (malformed input): a broken pipe is fine then.
        thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    let stdout = drain(child.0.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.0.stderr.take().expect("stderr is piped"));
    let status = wait_with_timeout(&mut child.0);
    RunOutput {
        status,
        stdout: stdout.join().expect("stdout reader panicked"),
        stderr: stderr.join().expect("stderr reader panicked"),
    }
}

/// Reads a pipe to its end on a thread.
fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// Waits for `child`, failing the test if it runs longer than `RUN_TIMEOUT` (the caller's
/// `ChildGuard` then kills it).
fn wait_with_timeout(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + RUN_TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().expect("cannot wait for a child process") {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "process {} still running after {RUN_TIMEOUT:?}",
            child.id()
        );
        thread::sleep(Duration::from_millis(5));
    }
}

/// A child process that is killed and reaped when dropped, so that a failing assertion (a
/// panic) never leaks it.
struct ChildGuard(Child);

impl ChildGuard {
    fn spawn(command: &mut Command) -> Self {
        let program = command.get_program().to_string_lossy().into_owned();
        Self(
            command
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {program}: {e}")),
        )
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// A `grundy-server` on a free loopback port chosen by the OS, killed when dropped.
struct ServerProcess {
    child: ChildGuard,
    url: String,
    /// Its stderr so far, for failure messages.
    log: Arc<Mutex<String>>,
}

impl ServerProcess {
    /// Starts the server on `127.0.0.1:0` and learns the port from its `address=` log line
    /// (no race, unlike picking a free port first and passing it).
    fn start() -> Self {
        let mut child = ChildGuard::spawn(
            Command::new(GRUNDY_SERVER)
                .args(["--listen", "127.0.0.1:0"])
                // The address is logged at info level; no colours in the way of parsing.
                .env("RUST_LOG", "info")
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped()),
        );
        let stderr = child.0.stderr.take().expect("stderr is piped");
        let log = Arc::new(Mutex::new(String::new()));
        let address = Self::watch_log(stderr, log.clone())
            .recv_timeout(SERVER_START_TIMEOUT)
            .unwrap_or_else(|_| {
                panic!(
                    "grundy-server did not log its address within {SERVER_START_TIMEOUT:?}:\n{}",
                    log.lock().unwrap()
                )
            });
        Self {
            child,
            url: format!("http://{address}"),
            log,
        }
    }

    /// Copies the server's stderr into `log` until it closes, on a thread (a full pipe would
    /// block the server), and sends the listening address as soon as it appears.
    fn watch_log(stderr: ChildStderr, log: Arc<Mutex<String>>) -> mpsc::Receiver<SocketAddr> {
        let (address_sender, address) = mpsc::channel();
        thread::spawn(move || {
            let mut address_sender = Some(address_sender);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let (Some(sender), Some(found)) = (&address_sender, listening_address(&line)) {
                    let _ = sender.send(found);
                    address_sender = None;
                }
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        address
    }

    /// Fails if the server died while serving the test's streams.
    fn assert_still_running(&mut self) {
        if let Some(status) = self.child.0.try_wait().expect("cannot poll grundy-server") {
            panic!(
                "grundy-server exited during the test ({status}):\n{}",
                self.log.lock().unwrap()
            );
        }
    }
}

/// The `address=IP:PORT` field of the server's "listening" log line, if `line` holds one.
fn listening_address(line: &str) -> Option<SocketAddr> {
    let plain = strip_ansi_escapes(line);
    let (_, rest) = plain.split_once("address=")?;
    rest.split_whitespace().next()?.parse().ok()
}

/// `line` without terminal colour sequences (`ESC [ ... letter`), in case the log is coloured
/// despite `NO_COLOR`.
fn strip_ansi_escapes(line: &str) -> String {
    let mut plain = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
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

/// `("WIN", Some((from, to)))` for `WIN move FROM -> TO`, `("LOSE", None)` for `LOSE`.
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
