//! `grundy`: the client CLI. Judge files in, gRPC calls out, the judge's output back.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use std::io::Write;

use grundy::cli::{self, AnalyseArgs, JudgeArgs, PlayArgs, RenderArgs};
use grundy::generate;
use grundy::service::{LogFormat, init_tracing};

/// Evaluate impartial games on directed graphs through the grundy gRPC service.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Answer a judge file (POJ 2425 "chess" or LA 4411 "addsub") byte for byte like the judge.
    ///
    /// Exit codes: 0 success, 1 failure (server unreachable, server error, I/O),
    /// 2 malformed input (reported as "error: line L, column C: ..." after printing the
    /// verdicts of everything before it).
    Judge(JudgeArgs),
    /// Analyse every query of a judge file: a JSON object per query, one per line, in input
    /// order: its outcome, nim-sum, remoteness (moves to the end with best play) and every
    /// move best first with its outcome and remoteness (chess); one winning move per vertex
    /// that has one (addsub). The judge's flags apply.
    ///
    /// Exit codes as for judge: 0 success, 1 failure, 2 malformed input (reported with its
    /// line and column after the lines of everything before it).
    #[command(alias = "analyze")]
    Analyse(AnalyseArgs),
    /// Draw one test case of a judge file as SVG (or DOT): each vertex with its value and
    /// coloured by the outcome of a single token there; with --tokens, the position, its
    /// verdict and the server's move.
    ///
    /// Exit codes: 0 success, 1 failure (server, I/O, a graph too large for SVG),
    /// 2 malformed input.
    Render(RenderArgs),
    /// Serve the browser playground on an embedded server and print its URL (stdout) until
    /// Ctrl-C; it opens no browser by itself.
    Play(PlayArgs),
    /// Write a seeded random judge file to stdout (for benchmarks and tests).
    Gen {
        #[command(subcommand)]
        format: GenFormat,
    },
}

#[derive(Debug, Subcommand)]
enum GenFormat {
    /// POJ 2425 input: test cases of a graph and token queries.
    Chess(generate::ChessSpec),
    /// LA 4411 input: games of an acyclic graph with split counts and rounds.
    Addsub(generate::AddsubSpec),
}

/// Streams a generated file to stdout; a closed pipe ends it quietly.
fn run_gen(format: GenFormat) -> u8 {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let written = match &format {
        GenFormat::Chess(spec) => generate::write_chess(spec, &mut out),
        GenFormat::Addsub(spec) => generate::write_addsub(spec, &mut out),
    }
    .and_then(|()| out.flush());
    match written {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            cli::stderr_line(format_args!("error: cannot write output: {e}"));
            cli::EXIT_FAILURE
        }
    }
}

fn main() -> ExitCode {
    // Only warnings and errors unless RUST_LOG says otherwise: the embedded server's
    // per-call info lines would bury the messages meant for the user.
    init_tracing(LogFormat::Text, "warn");
    let args = Args::parse();
    let code = match args.command {
        Command::Judge(judge) => cli::run_judge(judge),
        Command::Analyse(analyse) => cli::run_analyse(analyse),
        Command::Render(render) => cli::run_render(render),
        Command::Play(play) => cli::run_play(play),
        Command::Gen { format } => run_gen(format),
    };
    ExitCode::from(code)
}
