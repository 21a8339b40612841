//! `grundy play`: the browser playground on an embedded server, optionally opening a judge
//! file. It prints the page's URL and serves until Ctrl-C; it opens no browser by itself.

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;

use super::args::JudgeFormat;
use super::embedded::EmbeddedServer;
use super::embedded::viewer_config;
use super::error::{RunError, judge_error};
use super::output::stderr_line;
use super::run::{open_input, run_async};
use crate::judge::addsub::AddsubReader;
use crate::judge::chess::ChessReader;
use crate::service::DEFAULT_MAX_MESSAGE_BYTES;
use crate::service::{Preload, WebConfig};

/// Largest judge file handed to the page: it draws a few hundred vertices at most.
const MAX_PRELOAD_BYTES: u64 = 1 << 20;

/// Options of `grundy play`.
#[derive(Debug, Clone, clap::Args)]
pub struct PlayArgs {
    /// A judge file to open in the page ("-": standard input); the page starts empty
    /// (with the POJ 2425 sample) without it.
    pub file: Option<PathBuf>,
    /// Judge format of FILE.
    #[arg(long, value_enum, default_value = "chess")]
    pub game: JudgeFormat,
    /// Address to serve the page and the API on (loopback by default; port 0 picks one).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Open the page under misère play (the player who cannot move wins; chess only): its
    /// convention switch starts on misère.
    #[arg(long)]
    pub misere: bool,
}

/// Runs `grundy play` until Ctrl-C; returns the exit code.
pub fn run_play(args: PlayArgs) -> u8 {
    run_async(play(args))
}

async fn play(args: PlayArgs) -> Result<(), RunError> {
    let preload = match &args.file {
        Some(_) => Some(read_preload(&args)?),
        None if args.misere => Some(Preload {
            game: "chess",
            text: String::new(),
            misere: true,
        }),
        None => None,
    };
    let mut config = viewer_config(DEFAULT_MAX_MESSAGE_BYTES);
    config.web = Some(WebConfig { preload });
    let server = EmbeddedServer::start_with(args.listen, config).await?;
    // Stdout carries only the URL, so a script can read it.
    println!("{}/", server.url);
    stderr_line(format_args!(
        "grundy playground at {}/ (Ctrl-C to stop)",
        server.url
    ));
    tokio::signal::ctrl_c()
        .await
        .map_err(|e| RunError::Failure(format!("cannot wait for Ctrl-C: {e}")))?;
    Ok(())
}

/// The judge file, checked to parse (errors by line and column, exit 2) and bounded in size.
fn read_preload(args: &PlayArgs) -> Result<Preload, RunError> {
    let input = open_input(args.file.as_ref())?;
    let mut bytes = Vec::new();
    input
        .take(MAX_PRELOAD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| RunError::Failure(format!("cannot read the input: {e}")))?;
    if bytes.len() as u64 > MAX_PRELOAD_BYTES {
        return Err(RunError::BadInput(format!(
            "the input is over {MAX_PRELOAD_BYTES} bytes, more than the playground can draw; \
             use `grundy render --format dot` for large graphs"
        )));
    }
    let game = match args.game {
        JudgeFormat::Chess => {
            let mut reader = ChessReader::new(bytes.as_slice());
            while reader.next_event().map_err(judge_error)?.is_some() {}
            "chess"
        }
        JudgeFormat::Addsub => {
            let mut reader = AddsubReader::new(bytes.as_slice());
            while reader.next_event().map_err(judge_error)?.is_some() {}
            "addsub"
        }
    };
    let text = String::from_utf8(bytes)
        .map_err(|e| RunError::BadInput(format!("the input is not UTF-8: {e}")))?;
    Ok(Preload {
        game,
        text,
        misere: args.misere,
    })
}
