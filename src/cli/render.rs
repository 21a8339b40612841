//! `grundy render`: one test case of a judge file drawn as SVG (by grundy itself) or DOT.
//!
//! The values come from the server over the real API: the graph is registered with
//! `PutGraph` and its values read back with `GetValues`; with `--tokens`, one `EvaluateBatch`
//! with `explain` gives the verdict and the move to highlight.

use std::io::{Read, Write};
use std::path::PathBuf;

use super::args::JudgeFormat;
use super::embedded::InProcessServer;
use super::embedded::viewer_config;
use super::error::{RunError, describe, judge_error};
use super::graphs::{InputGraph, addsub_graph, chess_graph};
use super::retry;
use super::run::{open_input, run_async};
use crate::client::ConnectionArgs;
use crate::client::GrundyClient;
use crate::client::connect;
use crate::engine::{Digraph, Outcome};
use crate::judge::addsub::{AddsubEvent, AddsubReader};
use crate::judge::chess::{ChessEvent, ChessReader};
use crate::proto::{self, evaluate_start::GraphSource, query::Position, vertex_value};
use crate::render::{self, MAX_SVG_EDGES, MAX_SVG_VERTICES, Value};
use crate::service::DEFAULT_MAX_MESSAGE_BYTES;
use crate::service::position_drawing;

/// Picture format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImageFormat {
    /// SVG drawn by grundy (at most a few hundred vertices).
    Svg,
    /// Graphviz DOT, any size (`dot -Tsvg`, or `sfdp` for large graphs).
    Dot,
}

/// Options of `grundy render`.
#[derive(Debug, Clone, clap::Args)]
pub struct RenderArgs {
    /// Judge input file; standard input when absent or "-".
    pub file: Option<PathBuf>,
    /// Judge format of the input.
    #[arg(long, value_enum, default_value = "chess")]
    pub game: JudgeFormat,
    /// Which test case (chess) or game (addsub) to draw, counting from 1.
    #[arg(long = "case", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub case: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "svg")]
    pub format: ImageFormat,
    /// A position, as comma-separated token vertices (addsub: one unit of value on each
    /// listed vertex). The tokens are drawn, with the verdict and the server's move.
    #[arg(long, value_delimiter = ',')]
    pub tokens: Option<Vec<u32>>,
    /// Misère play (the player who cannot move wins; chess only): each vertex shows the
    /// misère outcome letter and remoteness of one token (`W2`, `L3`, `D`) instead of its
    /// value, and --tokens gets the misère verdict and move.
    #[arg(long)]
    pub misere: bool,
    /// Which server computes the values (the embedded one by default).
    #[command(flatten)]
    pub server: ServerChoice,
}

/// Which server computes the values: a running one, or one embedded in-process.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerChoice {
    /// URL of a running grundy-server (e.g. http://127.0.0.1:50051). Without it, a server is
    /// started in-process and used over real gRPC (through in-memory pipes: no port is
    /// opened).
    #[arg(long, env = "GRUNDY_SERVER")]
    pub server: Option<String>,
    /// Largest gRPC message sent or received, in bytes (suffixes KiB, MiB, GiB accepted; at
    /// least 256).
    #[arg(long, default_value_t = DEFAULT_MAX_MESSAGE_BYTES,
          value_parser = crate::service::parse_message_bytes)]
    pub max_message_bytes: usize,
    /// TLS and authentication for --server (ignored without it).
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

impl ServerChoice {
    /// A client of the chosen server, and the embedded server to keep alive meanwhile.
    async fn client(&self) -> Result<(GrundyClient, Option<InProcessServer>), RunError> {
        let max = self.max_message_bytes;
        match &self.server {
            Some(url) => Ok((connect(url, &self.connection, max).await?, None)),
            None => {
                super::judge::warn_unused_connection_flags(&self.connection);
                let (server, client) = InProcessServer::start(viewer_config(max)).await?;
                Ok((client, Some(server)))
            }
        }
    }
}

/// Runs `grundy render`: the picture on stdout; returns the exit code.
pub fn run_render(args: RenderArgs) -> u8 {
    run_async(async move {
        let picture = render(args).await?;
        let mut stdout = std::io::stdout().lock();
        match stdout
            .write_all(picture.as_bytes())
            .and_then(|()| stdout.flush())
        {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(RunError::OutputClosed),
            Err(e) => Err(RunError::Failure(format!("cannot write output: {e}"))),
        }
    })
}

async fn render(args: RenderArgs) -> Result<String, RunError> {
    let input = open_input(args.file.as_ref())?;
    let case = read_case(input, args.game, args.case)?;
    let graph = &case.graph;
    let edges = graph.targets.len() as u64;
    if args.format == ImageFormat::Svg
        && (graph.vertex_count > MAX_SVG_VERTICES || edges > MAX_SVG_EDGES)
    {
        // Before any work: the same message the renderer gives.
        let error = render::RenderError::TooLarge {
            vertices: graph.vertex_count,
            edges,
        };
        return Err(RunError::Failure(format!("{}: {error}", case.label)));
    }
    let out_of_range = args
        .tokens
        .iter()
        .flatten()
        .enumerate()
        .find(|&(_, &v)| v >= graph.vertex_count);
    if let Some((i, v)) = out_of_range {
        return Err(RunError::BadInput(format!(
            "--tokens[{i}]: vertex {v} is out of range ({} has {} vertices)",
            case.label, graph.vertex_count
        )));
    }

    let convention = if args.misere {
        proto::PlayConvention::Misere
    } else {
        proto::PlayConvention::Unspecified
    };
    let (mut client, _embedded) = args.server.client().await?;
    let graph_id = register(&mut client, &case, &args.server).await?;
    let values = get_values(&mut client, &graph_id, convention, &case.label).await?;
    let verdict = match &args.tokens {
        Some(tokens) => {
            Some(evaluate(&mut client, &graph_id, tokens, convention, &case.label).await?)
        }
        None => None,
    };
    let InputGraph { label, graph } = case;
    let digraph = Digraph::from_out_degrees(graph.vertex_count, &graph.out_degrees, graph.targets)
        .map_err(|e| RunError::Failure(format!("{label}: {e}")))?;
    let split_counts = (!graph.split_counts.is_empty()).then_some(graph.split_counts);
    let position = args.tokens.as_deref().zip(verdict.as_ref());
    let drawing = position_drawing(&label, digraph, split_counts, values, position, args.misere);
    let picture = match args.format {
        ImageFormat::Svg => drawing.to_svg(),
        ImageFormat::Dot => drawing.to_dot(),
    };
    picture.map_err(|e| RunError::Failure(format!("{label}: {e}")))
}

/// Reads the input up to test case (or game) `wanted` and returns its graph.
fn read_case(input: impl Read, game: JudgeFormat, wanted: u64) -> Result<InputGraph, RunError> {
    let mut seen = 0u64;
    match game {
        JudgeFormat::Chess => {
            let mut reader = ChessReader::new(input);
            while let Some(event) = reader.next_event().map_err(judge_error)? {
                if let ChessEvent::Graph {
                    case,
                    location,
                    vertex_count,
                    out_degrees,
                    targets,
                } = event
                {
                    seen = case;
                    if case == wanted {
                        return Ok(chess_graph(
                            case,
                            location,
                            vertex_count,
                            out_degrees,
                            targets,
                        ));
                    }
                }
            }
        }
        JudgeFormat::Addsub => {
            let mut reader = AddsubReader::new(input);
            while let Some(event) = reader.next_event().map_err(judge_error)? {
                if let AddsubEvent::Game {
                    game,
                    location,
                    vertex_count,
                    edges,
                    split_counts,
                    ..
                } = event
                {
                    seen = game;
                    if game == wanted {
                        return Ok(addsub_graph(
                            game,
                            location,
                            vertex_count,
                            &edges,
                            split_counts,
                        ));
                    }
                }
            }
        }
    }
    Err(RunError::BadInput(format!(
        "--case {wanted}: the input has only {seen} test case{}",
        if seen == 1 { "" } else { "s" }
    )))
}

fn server_error(label: &str, what: &str, status: tonic::Status) -> RunError {
    let message = format!("{label}: {what}: {}", describe(&status));
    match status.code() {
        tonic::Code::InvalidArgument => RunError::BadInput(message),
        _ => RunError::Failure(message),
    }
}

/// Registers the graph (one chunk) and returns its id. The first call of a run: an http://
/// `server` that turns out to speak TLS, or a TLS server that refuses the handshake, is
/// explained here, as `judge` does.
async fn register(
    client: &mut GrundyClient,
    case: &InputGraph,
    server: &ServerChoice,
) -> Result<String, RunError> {
    let chunk = proto::PutGraphRequest {
        chunk: Some(case.graph.clone()),
    };
    match client.put_graph(tokio_stream::once(chunk)).await {
        Ok(response) => Ok(response.into_inner().graph_id),
        Err(status) => {
            if let Some(url) = &server.server
                && let Some(explained) =
                    retry::tls_failure(&status, url, Some(&server.connection)).await
            {
                return Err(RunError::Failure(format!("{}: {explained}", case.label)));
            }
            Err(server_error(&case.label, "PutGraph", status))
        }
    }
}

/// Every vertex value of a registered graph.
async fn get_values(
    client: &mut GrundyClient,
    graph_id: &str,
    convention: proto::PlayConvention,
    label: &str,
) -> Result<Vec<Value>, RunError> {
    let request = proto::GetValuesRequest {
        graph_id: graph_id.to_string(),
        play_convention: convention.into(),
        ..Default::default()
    };
    let mut pages = client
        .get_values(request)
        .await
        .map_err(|status| server_error(label, "GetValues", status))?
        .into_inner();
    let mut values = Vec::new();
    while let Some(page) = pages
        .message()
        .await
        .map_err(|status| server_error(label, "GetValues", status))?
    {
        if page.graph.is_some() {
            continue; // the summary
        }
        if page.first_vertex as usize != values.len() {
            return Err(RunError::Failure(format!(
                "{label}: GetValues sent vertex {} where {} was expected",
                page.first_vertex,
                values.len()
            )));
        }
        for (i, value) in page.values.into_iter().enumerate() {
            if convention == proto::PlayConvention::Misere {
                let outcome = match value.outcome() {
                    proto::Outcome::Win => Outcome::Win,
                    proto::Outcome::Lose => Outcome::Lose,
                    proto::Outcome::Draw => Outcome::Draw,
                    proto::Outcome::Unspecified => {
                        let vertex = page.first_vertex as usize + i;
                        return Err(RunError::Failure(format!(
                            "{label}: GetValues sent no misère outcome for vertex {vertex}"
                        )));
                    }
                };
                let remoteness = value.remoteness;
                values.push(Value::Misere {
                    outcome,
                    remoteness,
                });
                continue;
            }
            values.push(match value.value {
                Some(vertex_value::Value::Finite(v)) => Value::Finite(v),
                Some(vertex_value::Value::Infinite(k)) => Value::Infinite(k.finite_followers),
                None => {
                    let vertex = page.first_vertex as usize + i;
                    return Err(RunError::Failure(format!(
                        "{label}: GetValues sent no value for vertex {vertex}"
                    )));
                }
            });
        }
    }
    Ok(values)
}

/// The verdict on `tokens`, with the server's move.
async fn evaluate(
    client: &mut GrundyClient,
    graph_id: &str,
    tokens: &[u32],
    convention: proto::PlayConvention,
    label: &str,
) -> Result<proto::Verdict, RunError> {
    let request = proto::EvaluateBatchRequest {
        start: Some(proto::EvaluateStart {
            graph_source: Some(GraphSource::GraphId(graph_id.to_string())),
            explain: true,
            analysis: None,
            play_convention: convention.into(),
        }),
        queries: vec![proto::Query {
            id: 0,
            position: Some(Position::Tokens(proto::TokenPosition {
                vertices: tokens.to_vec(),
            })),
        }],
    };
    let mut responses = client
        .evaluate_batch(request)
        .await
        .map_err(|status| server_error(label, "EvaluateBatch", status))?
        .into_inner();
    while let Some(response) = responses
        .message()
        .await
        .map_err(|status| server_error(label, "EvaluateBatch", status))?
    {
        if let Some(verdict) = response.verdicts.into_iter().next() {
            if let Some(error) = verdict.error {
                return Err(RunError::BadInput(format!(
                    "{label}: --tokens rejected: {}: {}",
                    error.field, error.message
                )));
            }
            return Ok(verdict);
        }
    }
    Err(RunError::Failure(format!(
        "{label}: the server sent no verdict"
    )))
}
