//! Requests: graphs, streams and verdicts, raw HTTP/2 and HTTP/1.1 pieces.

use std::future::poll_fn;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use bytes::Bytes;
use grundy::generate::{Shape, graph};
use grundy::proto::{
    self, AnalysisOptions, EvaluateRequest, EvaluateStart, Query, QueryBatch, Verdict,
    evaluate_request::Payload, evaluate_start::GraphSource,
    grundy_service_client::GrundyServiceClient, query::Position,
};
use tokio::sync::mpsc;
use tonic::transport::Channel;
use tonic::{Request, Streaming};

use crate::Target;
use crate::observe::within;

pub(crate) async fn connect(t: &Target) -> Result<GrundyServiceClient<Channel>> {
    Ok(GrundyServiceClient::connect(format!("http://{}", t.server)).await?)
}

/// A generated graph in its wire form.
pub(crate) fn wire(shape: Shape, vertices: u32, edges: u64, seed: u64) -> proto::Graph {
    let digraph = graph(shape, vertices, edges, seed);
    let out_degrees = digraph.offsets().windows(2).map(|w| w[1] - w[0]).collect();
    let targets = digraph.targets().to_vec();
    proto::Graph {
        vertex_count: vertices,
        out_degrees,
        targets,
        ..Default::default()
    }
}

/// A graph where each vertex `v` points at `v + step` for each step that stays in range.
pub(crate) fn steps(vertices: u32, steps: &[u32]) -> proto::Graph {
    let mut graph = proto::Graph {
        vertex_count: vertices,
        ..Default::default()
    };
    for v in 0..vertices {
        let before = graph.targets.len();
        graph
            .targets
            .extend(steps.iter().map(|s| v + s).filter(|&w| w < vertices));
        graph
            .out_degrees
            .push((graph.targets.len() - before) as u32);
    }
    graph
}

pub(crate) fn opening(graph: proto::Graph, analysis: Option<AnalysisOptions>) -> EvaluateStart {
    let graph_source = Some(GraphSource::Graph(graph));
    EvaluateStart {
        graph_source,
        explain: false,
        analysis,
        play_convention: 0,
    }
}

pub(crate) fn start(graph: proto::Graph, analysis: Option<AnalysisOptions>) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Start(opening(graph, analysis))),
    }
}

pub(crate) fn tokens(id: u64, vertices: &[u32]) -> Query {
    let position = Position::Tokens(proto::TokenPosition {
        vertices: vertices.to_vec(),
    });
    Query {
        id,
        position: Some(position),
    }
}

pub(crate) fn batch(
    queries: Vec<Query>,
    packed_tokens: Option<proto::PackedTokenQueries>,
) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries,
            packed_tokens,
        })),
    }
}

/// A batch of packed queries of `tokens` tokens each, from id 0.
pub(crate) fn packed(tokens: u32, vertices: Vec<u32>) -> EvaluateRequest {
    let token_counts = vec![tokens; vertices.len() / tokens as usize];
    batch(
        vec![],
        Some(proto::PackedTokenQueries {
            first_query_id: 0,
            token_counts,
            vertices,
        }),
    )
}

type Stream = (
    mpsc::Sender<EvaluateRequest>,
    Streaming<proto::EvaluateResponse>,
);

/// An `Evaluate` stream of `requests` (more may be sent), past its summary.
pub(crate) async fn open(
    client: &mut GrundyServiceClient<Channel>,
    deadline: Option<Duration>,
    requests: Vec<EvaluateRequest>,
) -> Result<Stream> {
    let (tx, rx) = mpsc::channel(16);
    for message in requests {
        tx.send(message).await?;
    }
    let mut request = Request::new(tokio_stream::wrappers::ReceiverStream::new(rx));
    if let Some(deadline) = deadline {
        request.set_timeout(deadline);
    }
    let mut stream = within(client.evaluate(request)).await??.into_inner();
    within(stream.message()).await??.context("no summary")?;
    Ok((tx, stream))
}

/// The next verdict of `stream`, or the status that ended it.
pub(crate) async fn next_verdict(
    stream: &mut Streaming<proto::EvaluateResponse>,
) -> Result<Verdict> {
    loop {
        let message = within(stream.message()).await?;
        let message = message.map_err(|s| anyhow!("{:?}: {}", s.code(), s.message()))?;
        let verdicts = message.context("the stream ended early")?.verdicts;
        if let Some(verdict) = verdicts.into_iter().next() {
            return Ok(verdict);
        }
    }
}

/// How a verdict's remoteness came out: the number, or why it is absent.
pub(crate) fn remoteness(verdict: &Verdict) -> String {
    let unknown = || format!("{:?}", verdict.remoteness_unknown()).to_lowercase();
    verdict.remoteness.map_or_else(unknown, |r| r.to_string())
}

/// The milliseconds of one small `EvaluateBatch` call, read to its end.
pub(crate) async fn small_call(client: &mut GrundyServiceClient<Channel>) -> Result<f64> {
    let start = Some(opening(steps(4, &[1, 2]), None));
    let request = proto::EvaluateBatchRequest {
        start,
        queries: vec![tokens(1, &[0])],
    };
    let began = Instant::now();
    let mut stream = within(client.evaluate_batch(request)).await??.into_inner();
    while within(stream.message()).await??.is_some() {}
    Ok(began.elapsed().as_secs_f64() * 1e3)
}

/// The status of a raw HTTP/2 call, `CODE:MESSAGE`, from the headers of an answer of trailers
/// only or from its trailers.
pub(crate) async fn raw_status(response: h2::client::ResponseFuture) -> Result<String> {
    let (parts, mut body) = response.await?.into_parts();
    let mut status = parts.headers;
    if !status.contains_key("grpc-status") {
        while let Some(data) = body.data().await {
            let _ = body.flow_control().release_capacity(data?.len());
        }
        status = body.trailers().await?.unwrap_or_default();
    }
    let field = |name| status.get(name).and_then(|v| v.to_str().ok()).unwrap_or("");
    Ok(format!(
        "{}:{}",
        field("grpc-status"),
        field("grpc-message")
    ))
}

/// Sends `data` on `send` as the server's flow control lets it in, without ending the stream.
pub(crate) async fn send_all(send: &mut h2::SendStream<Bytes>, mut data: Bytes) -> Result<()> {
    while !data.is_empty() {
        send.reserve_capacity(data.len());
        let granted = poll_fn(|cx| send.poll_capacity(cx))
            .await
            .context("stream closed")??;
        send.send_data(data.split_to(granted.min(data.len())), false)?;
    }
    Ok(())
}

/// The head of `POST /render` with a body of `length` bytes.
pub(crate) fn render_head(address: &str, length: usize) -> String {
    format!(
        "POST /render HTTP/1.1\r\nHost: {address}\r\nContent-Length: {length}\r\n\
         Connection: close\r\n\r\n"
    )
}

/// The status code of an HTTP/1.1 answer.
pub(crate) fn http_status(response: &[u8]) -> Option<u16> {
    std::str::from_utf8(response.get(9..12)?).ok()?.parse().ok()
}
