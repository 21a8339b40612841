//! The flags of `grundy judge` (and of the commands that read judge files alike).

use std::path::PathBuf;

use crate::client::ConnectionArgs;
use crate::proto;
use crate::service::DEFAULT_MAX_MESSAGE_BYTES;

use super::retry::DEFAULT_RETRIES;

/// Which judge format to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum JudgeFormat {
    /// "A Chess Game" (POJ 2425): token sliding, prints WIN / LOSE (DRAW on cyclic graphs).
    Chess,
    /// Addition-Subtraction Game (LA 4411 / UVa 12163): prints Game#g: / Round#r: lines.
    Addsub,
}

/// When to show progress on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Progress {
    /// Only when stderr is a terminal.
    Auto,
    /// Even when stderr is a file or a pipe.
    Always,
    /// Never.
    Never,
}

/// Options of `grundy judge`.
#[derive(Debug, Clone, clap::Args)]
pub struct JudgeArgs {
    /// Append the winning move to each winning line (and a draw-keeping move to DRAW lines).
    /// Output is then no longer judge-exact.
    #[arg(long)]
    pub explain: bool,
    /// Misère play: the player who cannot move wins (chess only). A position of several
    /// movable tokens is searched within the position budget (--position-budget); one the
    /// search cannot settle is an error naming its test case and query (exit 1).
    #[arg(long)]
    pub misere: bool,
    /// Most positions the misère search of one query may visit; 0 means 10^6. With
    /// --server, 0 means that server's budget (--analysis-position-budget), which also caps
    /// larger values. Used with --misere only.
    #[arg(long, default_value_t = 0)]
    pub position_budget: u64,
    /// The input and how it travels.
    #[command(flatten)]
    pub input: InputArgs,
}

/// Options of `grundy analyse`.
#[derive(Debug, Clone, clap::Args)]
pub struct AnalyseArgs {
    /// Most moves listed per position (the best ones; the others are counted in
    /// "moves_omitted"); 0 means 256. With --server, 0 means that server's cap
    /// (--analysis-max-moves, 256 by default), which also caps larger values.
    #[arg(long, default_value_t = 0)]
    pub max_moves: u32,
    /// Most positions the exact remoteness search of one query may visit (positions with
    /// several tokens); 0 means 10^6. With --server, 0 means that server's budget
    /// (--analysis-position-budget, 10^6 by default), which also caps larger values. Over
    /// it, "remoteness" is absent and "remoteness_unknown" says why (under --misere, the
    /// query is an error instead: its outcome is not known either).
    #[arg(long, default_value_t = 0)]
    pub position_budget: u64,
    /// Misère play: the player who cannot move wins (chess only). The same JSON keys, with
    /// "nim_sum" always 0.
    #[arg(long)]
    pub misere: bool,
    /// The input and how it travels.
    #[command(flatten)]
    pub input: InputArgs,
}

/// What `judge` and `analyse` share: the judge file, the servers, batching and reporting.
#[derive(Debug, Clone, clap::Args)]
pub struct InputArgs {
    /// Judge input format.
    #[arg(value_enum)]
    pub format: JudgeFormat,
    /// Judge input file; standard input when absent or "-".
    pub file: Option<PathBuf>,
    /// URL of a running grundy-server (e.g. http://127.0.0.1:50051), or several
    /// comma-separated: test cases are spread over them, and a stream that breaks is resumed
    /// on the next one. Without it, a server is started in-process and used over real gRPC
    /// (HTTP/2 through in-memory pipes: no port is opened).
    #[arg(long, env = "GRUNDY_SERVER")]
    pub server: Option<String>,
    /// How many times in a row a test case's stream is resumed after a lost connection or an
    /// UNAVAILABLE answer (capped exponential backoff from 100 ms to 2 s), before the run
    /// fails (exit 1).
    #[arg(long, env = "GRUNDY_RETRIES", default_value_t = DEFAULT_RETRIES)]
    pub retries: u32,
    /// Queries per request message.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    pub batch_size: u32,
    /// A line on stderr per test case: time to parse its graph, to upload it (PutGraph, for
    /// graphs larger than one message), to open its stream, and to answer its queries.
    #[arg(long)]
    pub timings: bool,
    /// Progress (test cases, queries, rate) on stderr.
    #[arg(long, value_enum, default_value = "auto")]
    pub progress: Progress,
    /// Largest gRPC message sent or received, in bytes (suffixes KiB, MiB, GiB accepted; at
    /// least 256). Query batches are cut well under it;
    /// a graph too large for one message is uploaded with PutGraph in chunks and evaluated by
    /// id; a single query that cannot fit in one message is an error (exit 1).
    #[arg(long, default_value_t = DEFAULT_MAX_MESSAGE_BYTES,
          value_parser = crate::service::parse_message_bytes)]
    pub max_message_bytes: usize,
    /// TLS and authentication for --server (ignored without it: the embedded server is
    /// reached through in-memory pipes, in plaintext).
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// What a run prints for each query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Report {
    /// The judge's lines (with the winning move appended, with `explain`).
    Judge {
        /// `--explain`.
        explain: bool,
        /// `--misere`, with the position budget of its searches (`--position-budget`).
        misere: Option<u64>,
    },
    /// A JSON object per query: the position analysis (`grundy analyse`).
    Analysis {
        /// `EvaluateStart.analysis`.
        options: proto::AnalysisOptions,
        /// `--misere`.
        misere: bool,
    },
}

impl Report {
    /// `EvaluateStart.explain`.
    pub(super) fn explain(&self) -> bool {
        matches!(self, Self::Judge { explain: true, .. })
    }

    /// `EvaluateStart.analysis`: asked by `analyse`, and by a misère `judge` for its
    /// position budget only (no moves; the judge's lines do not show the analysis).
    pub(super) fn analysis(&self) -> Option<proto::AnalysisOptions> {
        match self {
            Self::Judge {
                misere: Some(budget),
                ..
            } => Some(proto::AnalysisOptions {
                // One move: the best, for --explain (0 would mean the server's cap).
                max_moves: 1,
                position_budget: *budget,
            }),
            Self::Judge { misere: None, .. } => None,
            Self::Analysis { options, .. } => Some(*options),
        }
    }

    /// Whether the report shows the analysis (`grundy analyse`).
    pub(super) fn shows_analysis(&self) -> bool {
        matches!(self, Self::Analysis { .. })
    }

    /// `EvaluateStart.play_convention`.
    pub(super) fn play_convention(&self) -> proto::PlayConvention {
        match self {
            Self::Judge {
                misere: Some(_), ..
            }
            | Self::Analysis { misere: true, .. } => proto::PlayConvention::Misere,
            _ => proto::PlayConvention::Unspecified,
        }
    }

    /// Whether the verdicts come in full (moves, analyses, misère play), not packed.
    pub(super) fn full_verdicts(&self) -> bool {
        !matches!(
            self,
            Self::Judge {
                explain: false,
                misere: None
            }
        )
    }
}
