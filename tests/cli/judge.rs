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
//! `GRUNDY_BLESS=1 cargo test --test cli -- judge:: explained::` rewrites the expected files from the actual output
//! instead of comparing (never in CI; review the diff, see the README).

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::process::{ChildGuard, RUN_TIMEOUT, ServerProcess, drain, lines_of, run};

pub(super) const GRUNDY: &str = env!("CARGO_BIN_EXE_grundy");
pub(super) const GRUNDY_SERVER: &str = env!("CARGO_BIN_EXE_grundy-server");

/// Exit codes of `grundy judge`, as documented in its `--help`. Spelled out here rather than
/// imported from the crate: they are the contract with scripts, which this tier checks.
pub(super) const EXIT_FAILURE: i32 = 1;
pub(super) const EXIT_BAD_INPUT: i32 = 2;

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

/// A file that cannot be read is a failure (exit 1) whose message names it: a missing one,
/// and a directory (which opens, and whose first read fails with no name).
#[test]
fn unreadable_input_files_are_failures_naming_the_path() {
    let missing = data_dir().join("no_such_file.in");
    let output = run(judge_command(Format::Chess).arg(&missing), None);
    let stderr = lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_FAILURE), "stderr: {stderr}");
    let named = format!("error: cannot open {}: ", missing.display());
    assert!(stderr.starts_with(&named), "stderr: {stderr}");
    let output = run(judge_command(Format::Chess).arg(data_dir()), None);
    let stderr = lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_FAILURE), "stderr: {stderr}");
    let named = format!(
        "error: cannot read {}: it is a directory",
        data_dir().display()
    );
    assert!(stderr.starts_with(&named), "stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "stderr: {stderr}");
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
pub(super) struct Conversation {
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

// ---------------------------------------------------------------------------------------
// Golden-file loop
// ---------------------------------------------------------------------------------------

/// Runs every golden file (through the embedded server, or the one at `server_url`) and fails
/// with the list of all files that differ, not just the first.
pub(super) fn check_golden_files(server_url: Option<&str>, bless: bool) {
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
pub(super) enum Format {
    Chess,
    Addsub,
}

impl Format {
    /// The format a file stem starts with (`chess_...`, `addsub_...`).
    pub(super) fn from_stem(stem: &str) -> Option<Self> {
        if stem.starts_with("chess_") {
            Some(Self::Chess)
        } else if stem.starts_with("addsub_") {
            Some(Self::Addsub)
        } else {
            None
        }
    }

    pub(super) fn subcommand_arg(self) -> &'static str {
        match self {
            Self::Chess => "chess",
            Self::Addsub => "addsub",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CaseKind {
    /// `chess_*.in`, `addsub_*.in`.
    Golden,
    /// `bad_chess_*.in`, `bad_addsub_*.in`.
    Malformed,
}

/// One input file of `tests/data/`.
pub(super) struct DataCase {
    /// The file stem, e.g. `chess_sample`: names the case in failure reports.
    pub(super) name: String,
    pub(super) format: Format,
    pub(super) input: PathBuf,
}

impl DataCase {
    /// The expected-output file next to the input: `<name>.<extension>`.
    pub(super) fn expected(&self, extension: &str) -> PathBuf {
        data_dir().join(format!("{}.{extension}", self.name))
    }
}

pub(super) fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
}

/// The `.in` files of one kind, sorted by name.
pub(super) fn data_cases(kind: CaseKind) -> Vec<DataCase> {
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
pub(super) fn blessing() -> bool {
    std::env::var_os("GRUNDY_BLESS").is_some_and(|value| value == "1")
}

/// Compares `actual` with the file at `expected_path`, or (blessing) overwrites the file.
pub(super) fn check_expected(
    expected_path: &Path,
    actual: &[u8],
    bless: bool,
) -> Result<(), String> {
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
pub(super) fn first_difference(expected: &[u8], actual: &[u8]) -> Option<String> {
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

pub(super) fn show_line(line: Option<&[u8]>) -> String {
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
pub(super) fn judge_command(format: Format) -> Command {
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

pub(super) fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

pub(super) fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
