//! Child processes for the tests that drive the real binaries: every run is bounded in time
//! and every child is killed and reaped when its guard drops, so that a failing assertion
//! never leaks a process.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// A run taking longer than this is hung: the test fails and the guard kills the child.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(30);

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

/// Runs `command` with `stdin` as its standard input, collecting both outputs.
pub fn run(command: &mut Command, stdin: Vec<u8>) -> RunOutput {
    let mut child = ChildGuard::spawn(
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let mut pipe = child.0.stdin.take().expect("stdin is piped");
    // The child may stop reading early (malformed input): a broken pipe is fine then.
    let writer = thread::spawn(move || {
        let _ = pipe.write_all(&stdin);
    });
    let stdout = drain(child.0.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.0.stderr.take().expect("stderr is piped"));
    let status = child.wait_with_timeout(RUN_TIMEOUT);
    let _ = writer.join();
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

/// A `grundy-server` process on `127.0.0.1:0` (with `args`), its address learned from its
/// `address=` log line; killed when dropped.
pub struct ServerProcess {
    pub child: ChildGuard,
    pub address: std::net::SocketAddr,
}

impl ServerProcess {
    pub fn start(program: &str, args: &[&str]) -> Self {
        use std::io::BufRead;
        let mut child = ChildGuard::spawn(
            Command::new(program)
                .args(["--listen", "127.0.0.1:0"])
                .args(args)
                .env("RUST_LOG", "info")
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped()),
        );
        let stderr = child.0.stderr.take().expect("stderr is piped");
        let (found, address) = std::sync::mpsc::channel();
        // Reads the log to its end (a full pipe would block the server).
        thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some((_, rest)) = line.split_once("address=") {
                    let parsed = rest.split_whitespace().next().and_then(|a| a.parse().ok());
                    if let Some(parsed) = parsed {
                        let _ = found.send(parsed);
                    }
                }
            }
        });
        let address = address
            .recv_timeout(Duration::from_secs(10))
            .expect("grundy-server logs its address within 10 s");
        Self { child, address }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }
}

/// The lines `child` writes to its piped stderr, as they come (a thread reads them, so that
/// the child never blocks on a full pipe).
pub fn stderr_lines(
    child: &mut std::process::Child,
) -> tokio::sync::mpsc::UnboundedReceiver<String> {
    use std::io::BufRead;
    let stderr = child.stderr.take().expect("stderr is piped");
    let (lines_tx, lines) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines_tx.send(line);
        }
    });
    lines
}
