//! An in-process server on `127.0.0.1:0` and the request builders and calls the service tests
//! share.

use std::net::SocketAddr;
use std::time::Duration;

use grundy::proto::{
    self, EvaluateBatchRequest, EvaluateRequest, EvaluateStart, Query, QueryBatch,
    evaluate_request::Payload, evaluate_start::GraphSource,
    grundy_service_client::GrundyServiceClient, query::Position,
};
use grundy::service::{self, ServerConfig, ServerError};
use grundy::service::{GameService, ServiceConfig};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_stream::StreamExt;
use tonic::Streaming;
use tonic::transport::Channel;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

/// Bound on every wait of the tests.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// A server on a loopback port, serving until [`TestServer::begin_shutdown`]. Dropping it stops
/// it (without waiting).
pub struct TestServer {
    pub address: SocketAddr,
    /// The service state, to inspect streams, metrics and the registry.
    pub service: GameService,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), ServerError>>,
}

/// Starts a server with `config` (its shutdown future is a oneshot, as tonic's tests do).
pub async fn serve(config: ServerConfig) -> TestServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let service = GameService::new(config.service.clone());
    let (shutdown, stopped) = oneshot::channel::<()>();
    let handle = service.clone();
    let task = tokio::spawn(async move {
        service::run_service(listener, handle, &config, async {
            let _ = stopped.await;
        })
        .await
    });
    TestServer {
        address,
        service,
        shutdown: Some(shutdown),
        task,
    }
}

/// Starts a server with default settings around `service`.
pub async fn serve_service(service: ServiceConfig) -> TestServer {
    serve(ServerConfig {
        service,
        ..ServerConfig::default()
    })
    .await
}

/// The service settings of the tests: two computations at once, as on a small machine.
pub fn service_config() -> ServiceConfig {
    ServiceConfig {
        compute_concurrency: 2,
        ..ServiceConfig::default()
    }
}

/// A server of the tests' service settings ([`service_config`]) and default transport.
pub fn server_config() -> ServerConfig {
    ServerConfig {
        service: service_config(),
        ..ServerConfig::default()
    }
}

/// Small limits, for the tests of what each limit refuses: graphs of at most 10 vertices and
/// 12 edges, 5 queries a stream, messages of 64 KiB.
pub fn small_limits() -> ServerConfig {
    let config = server_config();
    ServerConfig {
        service: ServiceConfig {
            max_vertices: 10,
            max_edges: 12,
            max_queries_per_stream: 5,
            ..config.service
        },
        max_message_bytes: 64 << 10,
        ..config
    }
}

impl TestServer {
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.url())
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    /// The headers of an `Evaluate` call for a raw HTTP/2 client (one that writes its own
    /// gRPC frames, as the byte-level tests do).
    pub fn raw_evaluate_request(&self) -> http::Request<()> {
        self.raw_request("Evaluate")
    }

    /// The headers of a call of `method` of `grundy.v1.GrundyService` for a raw HTTP/2 client.
    pub fn raw_request(&self, method: &str) -> http::Request<()> {
        http::Request::post(format!("{}/grundy.v1.GrundyService/{method}", self.url()))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .unwrap()
    }

    /// A raw HTTP/2 client on a connection of its own (driven by a task), for the byte-level
    /// tests: it writes its own gRPC frames after [`Self::raw_request`]'s headers.
    pub async fn raw_client(&self) -> h2::client::SendRequest<bytes::Bytes> {
        let tcp = tokio::net::TcpStream::connect(self.address).await.unwrap();
        let (client, connection) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(connection);
        client
    }

    /// A new plaintext client.
    pub async fn client(&self) -> GrundyServiceClient<Channel> {
        GrundyServiceClient::new(self.channel().await)
    }

    /// Starts the shutdown (as SIGTERM does) without waiting for it.
    pub fn begin_shutdown(&mut self) {
        let _ = self.shutdown.take().expect("shut down once").send(());
    }

    /// Waits for the server to return.
    pub async fn stopped(&mut self) -> Result<(), ServerError> {
        tokio::time::timeout(PATIENCE, &mut self.task)
            .await
            .expect("the server stops in time")
            .expect("the server task does not panic")
    }

    /// Waits until no RPC is in progress.
    pub async fn wait_idle(&self) {
        tokio::time::timeout(PATIENCE, self.service.wait_idle())
            .await
            .expect("every stream ends in time");
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// docs/games.md sample, test case 1: 0 -> {1, 2}, 2 -> {3}; values 2, 0, 1, 0.
pub fn sample_graph() -> proto::Graph {
    proto::Graph {
        vertex_count: 4,
        out_degrees: vec![2, 0, 1, 0],
        targets: vec![1, 2, 3],
        split_counts: vec![],
        fixed_targets: Vec::new(),
    }
}

/// The outcome of one token on `vertex` of [`sample_graph`]: values 2, 0, 1, 0, so a token on
/// an even vertex wins.
pub fn sample_outcome(vertex: u32) -> i32 {
    if vertex.is_multiple_of(2) {
        proto::Outcome::Win as i32
    } else {
        proto::Outcome::Lose as i32
    }
}

/// A path 0 -> 1 -> ... -> n-1.
pub fn chain(n: u32) -> proto::Graph {
    proto::Graph {
        vertex_count: n,
        out_degrees: (0..n).map(|v| u32::from(v + 1 < n)).collect(),
        targets: (1..n).collect(),
        split_counts: vec![],
        fixed_targets: Vec::new(),
    }
}

/// A cycle 0 -> 1 -> ... -> n-1 -> 0.
pub fn cycle(n: u32) -> proto::Graph {
    proto::Graph {
        vertex_count: n,
        out_degrees: vec![1; n as usize],
        targets: (1..n).chain([0]).collect(),
        split_counts: vec![],
        fixed_targets: Vec::new(),
    }
}

/// The cyclic labelling's worst case: a transitive tournament on `k` vertices (vertex i
/// points at every j < i) plus a self-loop on the top vertex, which makes every vertex's
/// value wait for its own stage: about k^3 / 2 edge visits.
pub fn tournament_with_self_loop(k: u32) -> proto::Graph {
    let mut graph = proto::Graph {
        vertex_count: k,
        out_degrees: (0..k).collect(),
        targets: (0..k).flat_map(|i| 0..i).collect(),
        split_counts: vec![],
        fixed_targets: Vec::new(),
    };
    graph.out_degrees[k as usize - 1] += 1;
    graph.targets.push(k - 1);
    graph
}

/// The first message of an `Evaluate` stream on an inline graph.
pub fn start(graph: proto::Graph) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::Graph(graph)),
            explain: false,
            analysis: None,
            play_convention: 0,
        })),
    }
}

/// The first message of an `Evaluate` stream on the registered graph `graph_id`.
pub fn start_id(graph_id: &str) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::GraphId(graph_id.into())),
            explain: false,
            analysis: None,
            play_convention: 0,
        })),
    }
}

/// An `EvaluateBatch` request of `queries` on the graph `source`.
pub fn batch_request(source: GraphSource, queries: Vec<Query>) -> EvaluateBatchRequest {
    EvaluateBatchRequest {
        start: Some(EvaluateStart {
            graph_source: Some(source),
            explain: false,
            analysis: None,
            play_convention: 0,
        }),
        queries,
    }
}

/// A query of the token list `vertices`.
pub fn tokens(id: u64, vertices: &[u32]) -> Query {
    Query {
        id,
        position: Some(Position::Tokens(proto::TokenPosition {
            vertices: vertices.to_vec(),
        })),
    }
}

/// A request message carrying `queries`.
pub fn batch(queries: Vec<Query>) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries,
            packed_tokens: None,
        })),
    }
}

/// The next response, or the stream's final status; panics on a clean end or a hang. Reads
/// a client's `Streaming` or, called directly, the service's own response stream.
pub async fn next<M, S>(stream: &mut S) -> Result<M, tonic::Status>
where
    S: tokio_stream::Stream<Item = Result<M, tonic::Status>> + Unpin,
{
    tokio::time::timeout(PATIENCE, stream.next())
        .await
        .expect("a response in time")
        .expect("the stream is still open")
}

/// The next `count` full verdicts of `stream`, over as many messages as they came in.
pub async fn full_verdicts(
    stream: &mut Streaming<proto::EvaluateResponse>,
    count: usize,
) -> Vec<proto::Verdict> {
    let mut verdicts = Vec::new();
    while verdicts.len() < count {
        verdicts.extend(next_ok(stream).await.verdicts);
    }
    assert_eq!(verdicts.len(), count, "{verdicts:?}");
    verdicts
}

/// A server with `config`, and a client connected to it.
pub async fn start_server(config: ServiceConfig) -> (TestServer, GrundyServiceClient<Channel>) {
    let server = serve_service(config).await;
    let client = server.client().await;
    (server, client)
}

/// The next response; panics on a stream error, a clean end or a hang.
pub async fn next_ok<M, S>(stream: &mut S) -> M
where
    S: tokio_stream::Stream<Item = Result<M, tonic::Status>> + Unpin,
{
    next(stream).await.expect("no stream error")
}

/// An open `Evaluate` stream past its summary: the request sender and the response stream.
pub struct Stream {
    pub requests: tokio::sync::mpsc::Sender<EvaluateRequest>,
    pub responses: Streaming<proto::EvaluateResponse>,
}

/// Opens an `Evaluate` stream on `graph` and reads its summary.
pub async fn open_stream(client: &mut GrundyServiceClient<Channel>, graph: proto::Graph) -> Stream {
    let (requests, rx) = tokio::sync::mpsc::channel(16);
    requests.send(start(graph)).await.unwrap();
    let mut responses = client
        .evaluate(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .expect("the stream opens")
        .into_inner();
    let summary = next(&mut responses).await.unwrap();
    assert!(summary.graph.is_some(), "first response: the summary");
    Stream {
        requests,
        responses,
    }
}

/// Opens a stream with `requests` already queued; returns the sender to add more, and the
/// responses or the call's refusal.
pub async fn open(
    client: &mut GrundyServiceClient<Channel>,
    requests: Vec<EvaluateRequest>,
) -> (
    tokio::sync::mpsc::Sender<EvaluateRequest>,
    Result<Streaming<proto::EvaluateResponse>, tonic::Status>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    for request in requests {
        tx.send(request).await.unwrap();
    }
    let response = client
        .evaluate(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .map(|r| r.into_inner());
    (tx, response)
}

/// A request message of packed token queries, numbered from `first_query_id`.
pub fn packed(first_query_id: u64, queries: &[&[u32]]) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries: vec![],
            packed_tokens: Some(proto::PackedTokenQueries {
                first_query_id,
                token_counts: queries.iter().map(|q| q.len() as u32).collect(),
                vertices: queries.concat(),
            }),
        })),
    }
}

/// Splits `graph` into PutGraph chunks of at most `size` entries per list.
pub fn chunks(graph: &proto::Graph, size: usize) -> Vec<proto::PutGraphRequest> {
    let pieces =
        |list: &[u32]| -> Vec<Vec<u32>> { list.chunks(size).map(<[u32]>::to_vec).collect() };
    let degrees = pieces(&graph.out_degrees);
    let targets = pieces(&graph.targets);
    let splits = pieces(&graph.split_counts);
    let count = degrees.len().max(targets.len()).max(splits.len()).max(1);
    (0..count)
        .map(|i| proto::PutGraphRequest {
            chunk: Some(proto::Graph {
                vertex_count: if i == 0 { graph.vertex_count } else { 0 },
                out_degrees: degrees.get(i).cloned().unwrap_or_default(),
                targets: targets.get(i).cloned().unwrap_or_default(),
                split_counts: splits.get(i).cloned().unwrap_or_default(),
                fixed_targets: Vec::new(),
            }),
        })
        .collect()
}

/// Uploads `requests` in one `PutGraph` call.
pub async fn put(
    client: &mut GrundyServiceClient<Channel>,
    requests: Vec<proto::PutGraphRequest>,
) -> Result<proto::PutGraphResponse, tonic::Status> {
    client
        .put_graph(tokio_stream::iter(requests))
        .await
        .map(|r| r.into_inner())
}

/// Runs one Evaluate stream: `source`, then one batch of `queries`; returns the responses.
pub async fn evaluate(
    client: &mut GrundyServiceClient<Channel>,
    source: GraphSource,
    queries: Vec<Query>,
) -> Result<Vec<proto::EvaluateResponse>, tonic::Status> {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tx.send(EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(source),
            explain: false,
            analysis: None,
            play_convention: 0,
        })),
    })
    .await
    .unwrap();
    tx.send(batch(queries)).await.unwrap();
    drop(tx);
    let mut stream = client
        .evaluate(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await?
        .into_inner();
    let mut responses = Vec::new();
    while let Some(response) = tokio::time::timeout(PATIENCE, stream.message())
        .await
        .expect("a response in time")?
    {
        responses.push(response);
    }
    Ok(responses)
}

/// The serving status the health service reports for `service` (`""`: the whole server).
pub async fn health_of(channel: Channel, service: &str) -> Result<ServingStatus, tonic::Status> {
    let response = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: service.into(),
        })
        .await?;
    Ok(response.into_inner().status())
}

/// What a raw call got: the body's bytes, then its status, from the headers of an answer of
/// trailers only or from the trailers.
#[derive(Debug)]
pub struct RawAnswer {
    pub body: Vec<u8>,
    pub code: Option<tonic::Code>,
    /// `grpc-message` as sent (percent-encoded).
    pub message: String,
}

/// Reads a raw call's answer to its end (within [`PATIENCE`] for each part).
pub async fn raw_answer(response: h2::client::ResponseFuture) -> RawAnswer {
    let (parts, mut body) = tokio::time::timeout(PATIENCE, response)
        .await
        .expect("response headers in time")
        .unwrap()
        .into_parts();
    let mut bytes = Vec::new();
    let mut status = parts.headers;
    if !status.contains_key("grpc-status") {
        while let Some(data) = tokio::time::timeout(PATIENCE, body.data())
            .await
            .expect("the answer in time")
        {
            let data = data.unwrap();
            let _ = body.flow_control().release_capacity(data.len());
            bytes.extend_from_slice(&data);
        }
        status = body.trailers().await.unwrap().unwrap_or_default();
    }
    let field = |name: &str| status.get(name).map(|v| v.to_str().unwrap().to_string());
    RawAnswer {
        body: bytes,
        code: field("grpc-status").map(|code| tonic::Code::from_i32(code.parse().unwrap())),
        message: field("grpc-message").unwrap_or_default(),
    }
}

/// A gRPC length-prefixed message: the flags byte, the big-endian length, the payload.
pub fn grpc_frame(flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut bytes = vec![flags];
    bytes.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// An `Evaluate` stream of `requests` on `client`, read to its end (or its failure) on a task
/// of its own: a client busy elsewhere, that the test aborts when it wants it gone.
pub fn evaluate_in_background(
    mut client: GrundyServiceClient<Channel>,
    requests: Vec<EvaluateRequest>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut stream = client
            .evaluate(tokio_stream::iter(requests))
            .await
            .unwrap()
            .into_inner();
        while stream.message().await.is_ok_and(|m| m.is_some()) {}
    })
}

/// Waits until `condition` holds, looking every 5 ms, at most [`PATIENCE`]; `what` names
/// what did not happen.
pub async fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + PATIENCE;
    while !condition() {
        assert!(std::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
