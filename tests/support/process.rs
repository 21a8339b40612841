//! Child processes for the tests that drive the real binaries: every run is bounded in time
//! and every child is killed and reaped when its guard drops, so that a failing assertion
//! never leaks a process.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// A run taking longer than this is hung: the test fails and the guard kills the child.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(30);

/// How long `grundy-server` may take to log the address it listens on.
pub const SERVER_START_TIMEOUT: Duration = Duration::from_secs(10);

/// A child process that is killed and reaped when dropped.
pub struct ChildGuard(pub Child);

impl ChildGuard {
    pub fn spawn(command: &mut Command) -> Self {
        let program = command.get_program().to_string_lossy().into_owned();
        Self(
            command
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {program}: {e}")),
        )
    }

    /// Waits for the child, failing the test after `timeout` (the guard then kills it).
    pub fn wait_with_timeout(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.0.try_wait().expect("cannot wait for a child process") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "process {} still running after {timeout:?}",
                self.0.id()
            );
            thread::sleep(Duration::from_millis(2));
        }
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

/// What a finished run printed.
pub struct RunOutput {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl std::fmt::Debug for RunOutput {
    /// The outputs as text, for failure messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOutput")
            .field("status", &self.status)
            .field("stdout", &String::from_utf8_lossy(&self.stdout))
            .field("stderr", &String::from_utf8_lossy(&self.stderr))
            .finish()
    }
}

/// Runs `command` to completion within [`RUN_TIMEOUT`] with `stdin` as its standard input
/// (`None`: `/dev/null`), collecting both outputs concurrently so that neither pipe can fill
/// up and stall the child.
pub fn run(command: &mut Command, stdin: Option<Vec<u8>>) -> RunOutput {
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
    let writer = stdin.map(|input| {
        let mut pipe = child.0.stdin.take().expect("stdin is piped");
        // The child may stop reading early (malformed input): a broken pipe is fine then.
        thread::spawn(move || {
            let _ = pipe.write_all(&input);
        })
    });
    let stdout = drain(child.0.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.0.stderr.take().expect("stderr is piped"));
    let status = child.wait_with_timeout(RUN_TIMEOUT);
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    RunOutput {
        status,
        stdout: stdout.join().expect("stdout reader panicked"),
        stderr: stderr.join().expect("stderr reader panicked"),
    }
}

/// Reads a pipe to its end on a thread.
pub fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// The lines of `pipe` as they come, read on a thread (so that the child never blocks on a
/// full pipe); the channel closes at the end of the pipe.
pub fn lines_of(pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (line_sender, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if line_sender.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// A `grundy-server` process on `127.0.0.1:0` (with `args`), its address learned from its
/// `address=` log line (no race, unlike picking a free port first and passing it); killed
/// when dropped.
pub struct ServerProcess {
    pub child: ChildGuard,
    pub address: SocketAddr,
    /// Its stderr so far, for failure messages.
    log: Arc<Mutex<String>>,
    /// The thread copying its stderr into `log`, until the pipe closes.
    copier: Option<thread::JoinHandle<()>>,
}

impl ServerProcess {
    pub fn start(program: &str, args: &[&str]) -> Self {
        Self::start_with_env(program, args, &[])
    }

    /// Like [`ServerProcess::start`], with these environment variables set too.
    pub fn start_with_env(program: &str, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = ChildGuard::spawn(
            Command::new(program)
                .args(["--listen", "127.0.0.1:0"])
                .args(args)
                .envs(env.iter().copied())
                // The address is logged at info level; no colours in the way of parsing.
                .env("RUST_LOG", "info")
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped()),
        );
        let stderr = child.0.stderr.take().expect("stderr is piped");
        let log = Arc::new(Mutex::new(String::new()));
        let (address_sender, address) = mpsc::channel();
        let copy = log.clone();
        // Copies the log until it closes (a full pipe would block the server), sending the
        // listening address as soon as it appears.
        let copier = thread::spawn(move || {
            let mut address_sender = Some(address_sender);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let (Some(sender), Some(found)) = (&address_sender, listening_address(&line)) {
                    let _ = sender.send(found);
                    address_sender = None;
                }
                let mut copy = copy.lock().unwrap();
                copy.push_str(&line);
                copy.push('\n');
            }
        });
        let address = address
            .recv_timeout(SERVER_START_TIMEOUT)
            .unwrap_or_else(|_| {
                panic!(
                    "{program} did not log its address within {SERVER_START_TIMEOUT:?}:\n{}",
                    log.lock().unwrap()
                )
            });
        Self {
            child,
            address,
            log,
            copier: Some(copier),
        }
    }

    /// Waits until the server has logged a line holding `text`; fails the test after `timeout`.
    pub fn wait_for_log(&self, text: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while !self.log.lock().unwrap().contains(text) {
            assert!(
                Instant::now() < deadline,
                "the server did not log {text:?} within {timeout:?}:\n{}",
                self.log.lock().unwrap()
            );
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stops the server as an orchestrator does (SIGTERM), waits for it to exit, and returns
    /// everything it logged.
    pub fn stop(mut self) -> String {
        // SAFETY: kill(2) on the child's own pid, which the guard has not reaped yet.
        unsafe {
            libc::kill(self.child.0.id() as libc::pid_t, libc::SIGTERM);
        }
        self.child.wait_with_timeout(RUN_TIMEOUT);
        // The pipe is closed once the server has exited: the copier reaches its end.
        if let Some(copier) = self.copier.take() {
            copier.join().expect("the log copier does not panic");
        }
        self.log.lock().unwrap().clone()
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Fails if the server died while serving the test's streams.
    pub fn assert_still_running(&mut self) {
        if let Some(status) = self.child.0.try_wait().expect("cannot poll the server") {
            panic!(
                "the server exited during the test ({status}):\n{}",
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

/// The lines `child` writes to its piped stderr, as they come (a thread reads them, so that
/// the child never blocks on a full pipe).
pub fn stderr_lines(
    child: &mut std::process::Child,
) -> tokio::sync::mpsc::UnboundedReceiver<String> {
    let stderr = child.stderr.take().expect("stderr is piped");
    let (lines_tx, lines) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    lines
}
