//! `grundy`: the client CLI. Judge files in, gRPC calls out, the judge's output back.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use grundy::cli::{self, JudgeArgs};

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
}

fn main() -> ExitCode {
    cli::init_tracing_with("warn");
    let args = Args::parse();
    let code = match args.command {
        Command::Judge(judge) => cli::run_judge(judge),
    };
    ExitCode::from(code)
}
