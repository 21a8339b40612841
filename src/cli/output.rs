//! Output: the stdout writer thread, the progress report on stderr and the judge's lines.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::args::{JudgeFormat, Progress};
use super::error::RunError;
use crate::proto::{self, Outcome, Verdict};

/// Why a verdict has no judge line. The caller prefixes the test case.
#[derive(Debug, thiserror::Error)]
pub(super) enum VerdictError {
    /// The server rejected the query.
    #[error("query {round} rejected: {field}: {message}")]
    Rejected {
        round: u64,
        field: String,
        message: String,
    },
    /// The verdict carries no outcome (a server bug or a newer protocol).
    #[error("query {round}: no outcome")]
    NoOutcome { round: u64 },
}

/// What starts a test case's output: `Game#g:` for addsub, nothing for chess.
pub(super) fn case_header(format: JudgeFormat, number: u64) -> Vec<u8> {
    match format {
        JudgeFormat::Chess => Vec::new(),
        JudgeFormat::Addsub => format!("Game#{number}:\n").into_bytes(),
    }
}

/// What ends a test case's output: a blank line for addsub, nothing for chess.
pub(super) fn case_footer(format: JudgeFormat) -> Vec<u8> {
    match format {
        JudgeFormat::Chess => Vec::new(),
        JudgeFormat::Addsub => b"\n".to_vec(),
    }
}

/// Appends the judge's line for one verdict. `round` is the 1-based query number in the case.
pub(super) fn format_verdict(
    format: JudgeFormat,
    explain: bool,
    round: u64,
    verdict: &Verdict,
    out: &mut Vec<u8>,
) -> Result<(), VerdictError> {
    if let Some(error) = &verdict.error {
        return Err(VerdictError::Rejected {
            round,
            field: error.field.clone(),
            message: error.message.clone(),
        });
    }
    format_outcome(format, round, verdict.outcome(), out)?;
    if explain && let Some(move_) = verdict.best_move.as_ref().and_then(|m| m.kind.as_ref()) {
        write_move(move_, out);
    }
    out.push(b'\n');
    Ok(())
}

/// Appends `WIN` (chess) or `Round#r: WINNING` (addsub), without the newline.
pub(super) fn format_outcome(
    format: JudgeFormat,
    round: u64,
    outcome: Outcome,
    out: &mut Vec<u8>,
) -> Result<(), VerdictError> {
    let word = match (format, outcome) {
        (JudgeFormat::Chess, Outcome::Win) => "WIN",
        (JudgeFormat::Chess, Outcome::Lose) => "LOSE",
        (JudgeFormat::Chess, Outcome::Draw) => "DRAW",
        (JudgeFormat::Addsub, Outcome::Win) => "WINNING",
        (JudgeFormat::Addsub, Outcome::Lose) => "LOSING",
        (JudgeFormat::Addsub, Outcome::Draw) => "DRAWING",
        (_, Outcome::Unspecified) => return Err(VerdictError::NoOutcome { round }),
    };
    if format == JudgeFormat::Addsub {
        let _ = write!(out, "Round#{round}: ");
    }
    out.extend_from_slice(word.as_bytes());
    Ok(())
}

/// Appends the chess judge's line for each outcome (`WIN`, `LOSE` or `DRAW`, and a newline),
/// as [`format_outcome`] and a newline would, with one eight-byte copy a line from a table
/// indexed by the outcome (a branch on random outcomes mispredicted half the time). On an
/// outcome that has no line, the lines before it are kept and its index is returned.
pub(super) fn append_chess_lines(outcomes: &[i32], out: &mut Vec<u8>) -> Result<(), usize> {
    /// Each outcome's line padded to eight bytes, and its length (0: no line).
    const LINES: [(&[u8; 8], usize); 4] = [
        (b"\0\0\0\0\0\0\0\0", 0),
        (b"WIN\n\0\0\0\0", 4),
        (b"LOSE\n\0\0\0", 5),
        (b"DRAW\n\0\0\0", 5),
    ];
    let mut at = out.len();
    // Room for the longest lines, and for the padding the last copy writes past its line.
    out.resize(at + outcomes.len() * 5 + 3, 0);
    for (index, &outcome) in outcomes.iter().enumerate() {
        let (line, len) = *usize::try_from(outcome)
            .ok()
            .and_then(|outcome| LINES.get(outcome))
            .unwrap_or(&LINES[0]);
        if len == 0 {
            out.truncate(at);
            return Err(index);
        }
        out[at..at + 8].copy_from_slice(line);
        at += len;
    }
    out.truncate(at);
    Ok(())
}

/// Picks beyond this many are summarised as `w*count` instead of listed one by one.
const MAX_LISTED_PICKS: u64 = 1000;

fn write_move(move_: &proto::r#move::Kind, out: &mut Vec<u8>) {
    use proto::r#move::Kind;
    match move_ {
        Kind::Token(token) => {
            let _ = write!(
                out,
                " move {} -> {}",
                token.source_vertex, token.target_vertex
            );
        }
        Kind::Split(split) => {
            let _ = write!(out, " move {} ->", split.vertex);
            // All K picks in increasing vertex order: the pairs join the pair target's place,
            // merged with its odd pick when it has one (one run `w*count`, not two).
            let mut pair_picks = 2 * u64::from(split.pair_count);
            for &target in &split.odd_targets {
                if pair_picks > 0 && split.pair_target <= target {
                    if split.pair_target == target {
                        write_picks(target, pair_picks + 1, out);
                        pair_picks = 0;
                        continue;
                    }
                    write_picks(split.pair_target, pair_picks, out);
                    pair_picks = 0;
                }
                write_picks(target, 1, out);
            }
            if pair_picks > 0 {
                write_picks(split.pair_target, pair_picks, out);
            }
        }
    }
}

/// ` w` `picks` times, or ` w*picks` for a long run.
fn write_picks(target: u32, picks: u64, out: &mut Vec<u8>) {
    if picks > MAX_LISTED_PICKS {
        let _ = write!(out, " {target}*{picks}");
    } else {
        for _ in 0..picks {
            let _ = write!(out, " {target}");
        }
    }
}

/// Stdout, owned by a writer thread so that a slow reader never blocks the async runtime.
pub(super) struct Output {
    chunks: Option<mpsc::Sender<Vec<u8>>>,
    writer: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Output {
    /// Starts the writer thread.
    pub(super) fn spawn() -> Result<Self, RunError> {
        let (chunks, mut receiver) = mpsc::channel::<Vec<u8>>(64);
        let writer = std::thread::Builder::new()
            .name("grundy-stdout".into())
            .spawn(move || {
                let stdout = std::io::stdout();
                let mut stdout = stdout.lock();
                while let Some(chunk) = receiver.blocking_recv() {
                    stdout.write_all(&chunk)?;
                    // Flush when caught up, so output appears as verdicts arrive.
                    if receiver.is_empty() {
                        stdout.flush()?;
                    }
                }
                stdout.flush()
            })
            .map_err(|e| RunError::Failure(format!("cannot start the output thread: {e}")))?;
        Ok(Self {
            chunks: Some(chunks),
            writer: Some(writer),
        })
    }

    /// Queues `chunk` for stdout, waiting while the writer is behind; fails once the writer
    /// has stopped (quietly for a closed pipe).
    ///
    /// The wait is async on purpose: the judge's dispatcher runs in the same future as the
    /// in-order writer, on the thread that `block_on`s it. Blocking that thread here (as a
    /// `blocking_send` inside `block_in_place` once did) parks it on the same thread parker
    /// that `block_on` waits on, so a wake-up meant for the dispatcher was consumed by the
    /// inner wait and lost: the run stalled with every channel idle (seen with `--batch-size
    /// 1`).
    pub(super) async fn send(&mut self, chunk: Vec<u8>) -> Result<(), RunError> {
        if chunk.is_empty() {
            return Ok(());
        }
        let chunks = self.chunks.as_ref().ok_or(RunError::OutputClosed)?;
        if chunks.send(chunk).await.is_err() {
            // A closed channel means the writer stopped: say why.
            return Err(self.writer_error());
        }
        Ok(())
    }

    /// Why the writer stopped: a closed pipe is a quiet stop, anything else a failure.
    fn writer_error(&mut self) -> RunError {
        self.join_writer().err().unwrap_or(RunError::OutputClosed)
    }

    /// Flushes everything and waits for the writer.
    pub(super) fn finish(mut self) -> Result<(), RunError> {
        self.join_writer()
    }

    /// Closes the channel and waits for the writer thread (once: later calls find nothing to
    /// join). A closed pipe is not an error; a write error or a panic is.
    fn join_writer(&mut self) -> Result<(), RunError> {
        self.chunks = None;
        match self.writer.take().map(|w| w.join()) {
            Some(Ok(Err(e))) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(RunError::Failure(format!("cannot write output: {e}")))
            }
            Some(Err(_)) => Err(RunError::Failure("the output thread panicked".into())),
            _ => Ok(()),
        }
    }
}

/// Writes one line to stderr, ignoring a closed stderr (`2> >(head -c 100)`): a message
/// nobody reads is no reason to fail, let alone to panic as `eprintln!` does.
pub fn stderr_line(line: std::fmt::Arguments<'_>) {
    stderr_text(format_args!("{line}\n"));
}

/// Writes `text` to stderr as is (no newline added), ignoring a closed stderr.
pub fn stderr_text(text: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_fmt(text);
}

/// Progress on stderr: test cases, queries and rate, refreshed twice a second.
pub(super) struct ProgressReport {
    counters: Arc<ProgressCounters>,
    ticker: Option<tokio::task::JoinHandle<()>>,
    started: Instant,
}

/// What the progress report shows, updated by the test cases.
#[derive(Default)]
pub(super) struct ProgressCounters {
    /// Test cases completed.
    pub(super) cases: AtomicU64,
    /// Verdicts received.
    pub(super) queries: AtomicU64,
}

impl ProgressCounters {
    /// The progress line: test cases, queries and rate since `started`.
    fn line(&self, started: Instant) -> String {
        let queries = self.queries.load(Ordering::Relaxed);
        let cases = self.cases.load(Ordering::Relaxed);
        let rate = queries as f64 / started.elapsed().as_secs_f64().max(1e-9);
        format!("grundy: {cases} cases done, {queries} queries, {rate:.0} queries/s ")
    }
}

impl ProgressReport {
    /// Starts the report (a ticker task) when `mode` and stderr call for it.
    pub(super) fn start(mode: Progress) -> Self {
        let counters = Arc::new(ProgressCounters::default());
        let enabled = match mode {
            Progress::Always => true,
            Progress::Never => false,
            Progress::Auto => std::io::stderr().is_terminal(),
        };
        let started = Instant::now();
        let ticker = enabled.then(|| {
            let counters = counters.clone();
            tokio::spawn(async move {
                let mut interval = tokio::time::interval(Duration::from_millis(500));
                interval.tick().await;
                loop {
                    interval.tick().await;
                    stderr_text(format_args!("\r{}", counters.line(started)));
                }
            })
        });
        Self {
            counters,
            ticker,
            started,
        }
    }

    /// The counters test cases update.
    pub(super) fn counters(&self) -> Arc<ProgressCounters> {
        self.counters.clone()
    }

    /// Stops the ticker and replaces its line by the final counts (also after a run too short
    /// for any refresh).
    pub(super) fn finish(self) {
        if let Some(ticker) = self.ticker {
            ticker.abort();
            stderr_line(format_args!("\r\x1b[K{}", self.counters.line(self.started)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::SplitMove;

    fn split_line(odd_targets: Vec<u32>, pair_target: u32, pair_count: u32) -> String {
        let mut out = Vec::new();
        let split = SplitMove {
            vertex: 0,
            odd_targets,
            pair_target,
            pair_count,
        };
        write_move(&proto::r#move::Kind::Split(split), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn split_moves_list_every_pick_in_order_with_long_runs_counted() {
        assert_eq!(split_line(vec![1, 3], 0, 0), " move 0 -> 1 3");
        assert_eq!(split_line(vec![1, 3], 2, 1), " move 0 -> 1 2 2 3");
        assert_eq!(split_line(vec![1, 3], 5, 1), " move 0 -> 1 3 5 5");
        // The pair target's odd pick joins its pairs: one run.
        assert_eq!(split_line(vec![1, 3], 1, 1), " move 0 -> 1 1 1 3");
        assert_eq!(split_line(vec![1, 3], 1, 1000), " move 0 -> 1*2001 3");
        assert_eq!(split_line(vec![2], 2, 500), " move 0 -> 2*1001");
        assert_eq!(split_line(vec![], 4, 501), " move 0 -> 4*1002");
    }

    #[test]
    fn chess_lines_are_what_format_outcome_writes() {
        let mut generator = crate::generate::Rng::new(0x2545_f491_4f6c_dd1du64);
        for round in 0..2_000 {
            let rng = generator.next_u64();
            // Outcomes 1 to 3, and now and then one without a line (0, 4, negative).
            let outcomes: Vec<i32> = (0..round % 40)
                .map(|i| match (rng >> i) % 50 {
                    0 if round % 3 == 0 => [0, 4, -1, i32::MAX][(rng >> 8) as usize % 4],
                    r => 1 + (r % 3) as i32,
                })
                .collect();
            let mut expected = b"before\n".to_vec();
            let mut failed = None;
            for (index, &outcome) in outcomes.iter().enumerate() {
                let outcome = Outcome::try_from(outcome).unwrap_or(Outcome::Unspecified);
                if format_outcome(JudgeFormat::Chess, 1, outcome, &mut expected).is_err() {
                    failed = Some(index);
                    break;
                }
                expected.push(b'\n');
            }
            let mut got = b"before\n".to_vec();
            let result = append_chess_lines(&outcomes, &mut got);
            assert_eq!(result, failed.map_or(Ok(()), Err), "{outcomes:?}");
            assert_eq!(got, expected, "{outcomes:?}");
        }
    }
}
