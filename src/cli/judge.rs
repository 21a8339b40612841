//! One run of `grundy judge` or `grundy analyse`: the parser thread, the dispatcher of test
//! cases and the in-order writer, wired together.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::args::{AnalyseArgs, InputArgs, JudgeArgs, JudgeFormat, Report};
use super::dispatch::{Dispatcher, write_in_order};
use super::endpoints::Endpoints;
use super::error::RunError;
use super::input::{batch_limit_bytes, parse_input};
use super::output::stderr_line;
use super::output::{Output, ProgressReport};
use super::run::{open_input, run_async};
use crate::client::ConnectionArgs;
use crate::proto;
use crate::service::AnalysisCaps;

/// Runs `grundy judge`; returns the process exit code. Errors are printed to stderr.
pub fn run_judge(args: JudgeArgs) -> u8 {
    let budget = match (args.position_budget, &args.input.server) {
        (0, None) => AnalysisCaps::default().position_budget,
        (asked, _) => asked,
    };
    let report = Report::Judge {
        explain: args.explain,
        misere: args.misere.then_some(budget),
    };
    if let Some(code) = refuse_misere_addsub(args.misere, &args.input) {
        return code;
    }
    run_async(run(args.input, report))
}

/// Refuses `--misere` on an addsub file, before anything runs: exit 2 with a message
/// naming the convention and the game.
fn refuse_misere_addsub(misere: bool, input: &InputArgs) -> Option<u8> {
    if misere && input.format == JudgeFormat::Addsub {
        stderr_line(format_args!(
            "error: --misere is not supported for the Addition-Subtraction game (addsub): \
             only token sliding (chess) is played misère"
        ));
        return Some(2);
    }
    None
}

/// Runs `grundy analyse`; returns the process exit code. Errors are printed to stderr.
///
/// A running server (`--server`) reads 0 as its own cap and caps what is asked; the
/// embedded server has no caps of its own (the engine's maxima, as for its other limits), so
/// it is asked for exactly what the flags say, 0 meaning a server's default caps.
pub fn run_analyse(args: AnalyseArgs) -> u8 {
    let defaults = AnalysisCaps::default();
    let or_default = |asked: u64, default: u64| match (asked, &args.input.server) {
        (0, None) => default,
        _ => asked,
    };
    let report = Report::Analysis {
        options: proto::AnalysisOptions {
            max_moves: or_default(args.max_moves.into(), defaults.max_moves.into()) as u32,
            position_budget: or_default(args.position_budget, defaults.position_budget),
        },
        misere: args.misere,
    };
    if let Some(code) = refuse_misere_addsub(args.misere, &args.input) {
        return code;
    }
    run_async(run(args.input, report))
}

/// One run over the judge file of `args`, printing `report` for each query.
async fn run(args: InputArgs, report: Report) -> Result<(), RunError> {
    let input = open_input(args.file.as_ref())?;
    // The parser starts first: it reads and batches the first test case while the server
    // starts (or the connections open), which is most of a small run's set-up. If they
    // fail, the run ends with their error and the process exits: the parser, perhaps
    // blocked reading a terminal, goes with it, having read at most its buffer and the
    // batches the channel holds (input that nothing else reads after grundy).
    let (event_tx, events) = mpsc::channel(16);
    let parser_args = args.clone();
    let parser_report = report.clone();
    let parser = std::thread::Builder::new()
        .name("grundy-parser".into())
        .spawn(move || parse_input(parser_args, parser_report, input, event_tx))
        .map_err(|e| RunError::Failure(format!("cannot start the parser thread: {e}")))?;
    let endpoints = match &args.server {
        Some(servers) => {
            Endpoints::connect(servers, &args.connection, args.max_message_bytes).await?
        }
        // The embedded server is plaintext through pipes: TLS and token settings (often
        // inherited from GRUNDY_* variables) are only for --server, and ignored with a word.
        None => {
            warn_unused_connection_flags(&args.connection);
            Endpoints::embedded(args.max_message_bytes).await?
        }
    };

    let mut output = Output::spawn()?;
    let progress = ProgressReport::start(args.progress);

    let (slot_tx, slots) = mpsc::unbounded_channel();
    let dispatcher = Dispatcher {
        endpoints: Arc::new(endpoints),
        format: args.format,
        report,
        progress: progress.counters(),
        slots: slot_tx,
        retries: args.retries,
        batch_bytes: batch_limit_bytes(args.max_message_bytes),
        timings: args.timings,
    };
    let result = {
        let dispatched = dispatcher.run(events, parser);
        let written = write_in_order(slots, &mut output);
        tokio::pin!(dispatched, written);
        // The writer stops at the first error in input order; the dispatcher (perhaps waiting
        // for input) is then dropped, and with it the events channel, which stops the parser.
        tokio::select! {
            result = &mut written => result,
            () = &mut dispatched => written.await,
        }
    };
    progress.finish();
    let flushed = output.finish();
    result.and(flushed)
}

/// Says on stderr which connection flags of the command line a run without `--server`
/// ignores. Settings inherited from `GRUNDY_*` variables are ignored silently: an environment
/// set up for a remote server must not make every embedded run noisy.
pub(super) fn warn_unused_connection_flags(connection: &ConnectionArgs) {
    let on_command_line = |flag: &str| {
        std::env::args_os().any(|arg| {
            arg.to_str().is_some_and(|arg| {
                arg == flag
                    || arg
                        .strip_prefix(flag)
                        .is_some_and(|rest| rest.starts_with('='))
            })
        })
    };
    let given: Vec<&str> = [
        ("--auth-token-file", connection.auth_token_file.is_some()),
        ("--tls-ca", connection.tls_ca.is_some()),
        ("--tls-cert", connection.tls_cert.is_some()),
        ("--tls-key", connection.tls_key.is_some()),
        ("--tls-server-name", connection.tls_server_name.is_some()),
    ]
    .into_iter()
    .filter_map(|(flag, set)| (set && on_command_line(flag)).then_some(flag))
    .collect();
    if !given.is_empty() {
        stderr_line(format_args!(
            "grundy: warning: {} ignored without --server (the embedded server is reached \
             through in-memory pipes, in plaintext, with no token)",
            given.join(", ")
        ));
    }
}
