//! The load: `streams` concurrent `Evaluate` streams, one connection each, each sending packed
//! token batches with at most `window` batches unanswered, for a fixed time. Measures the
//! answered queries per second of the whole run and the latency of every batch (from handing
//! it to the client's request stream to receiving its response).

use std::sync::Arc;
use std::time::Duration;

use grundy::generate::Rng;
use grundy::proto::{
    self, EvaluateRequest, EvaluateStart, PackedTokenQueries, QueryBatch,
    evaluate_request::Payload, evaluate_start::GraphSource,
    grundy_service_client::GrundyServiceClient,
};
use prost::Message;
use tokio::sync::{Barrier, Semaphore, mpsc};
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

/// Batches one stream sends at most, whatever the duration.
const MAX_BATCHES: usize = 10_000_000;

/// What one run sends.
#[derive(Debug, Clone)]
pub struct Load {
    /// The graph every stream starts with.
    pub graph: proto::Graph,
    /// Distinct batches, sent in turn (shared by all streams).
    pub batches: Arc<Vec<PackedTokenQueries>>,
    /// Concurrent streams.
    pub streams: usize,
    /// Batches a stream may have unanswered.
    pub window: usize,
    /// How long the streams keep sending.
    pub duration: Duration,
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Queries answered.
    pub queries: u64,
    /// Wall time from the first batch sent to the last response of every stream.
    pub elapsed: Duration,
    /// Every batch's latency, sorted.
    pub latencies: Vec<Duration>,
    /// Encoded bytes of the verdict responses received.
    pub response_bytes: u64,
}

impl Measured {
    /// Queries per second.
    pub fn qps(&self) -> f64 {
        self.queries as f64 / self.elapsed.as_secs_f64()
    }

    /// The latency at quantile `q` (0..=1).
    pub fn latency(&self, q: f64) -> Duration {
        let last = self.latencies.len().saturating_sub(1);
        let index = ((last as f64) * q).round() as usize;
        self.latencies.get(index).copied().unwrap_or_default()
    }

    /// Mean encoded bytes of a verdict response.
    pub fn bytes_per_response(&self) -> u64 {
        self.response_bytes / (self.latencies.len() as u64).max(1)
    }
}

/// `count` batches of `queries` token queries each (1 to `max_tokens` tokens on vertices
/// below `vertex_count`), seeded.
pub fn batches(
    count: usize,
    queries: usize,
    max_tokens: u64,
    vertex_count: u32,
) -> Vec<PackedTokenQueries> {
    let mut rng = Rng::new(11);
    (0..count)
        .map(|_| {
            let mut batch = PackedTokenQueries::default();
            for _ in 0..queries {
                let tokens = rng.between(1, max_tokens);
                batch.token_counts.push(tokens as u32);
                for _ in 0..tokens {
                    batch
                        .vertices
                        .push(rng.below(u64::from(vertex_count)) as u32);
                }
            }
            batch
        })
        .collect()
}

/// Runs `load` against the server at `url`.
pub async fn run(url: &str, load: &Load) -> Measured {
    let barrier = Arc::new(Barrier::new(load.streams + 1));
    let mut tasks = Vec::with_capacity(load.streams);
    for stream in 0..load.streams {
        let channel = Channel::from_shared(url.to_string())
            .expect("a valid URL")
            .connect()
            .await
            .expect("the bench server accepts connections");
        let load = load.clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            one_stream(channel, &load, stream, &barrier).await
        }));
    }
    barrier.wait().await;
    let started = Instant::now();
    let mut measured = Measured {
        queries: 0,
        elapsed: Duration::ZERO,
        latencies: Vec::new(),
        response_bytes: 0,
    };
    for task in tasks {
        let one = task.await.expect("a stream task does not panic");
        measured.queries += one.queries;
        measured.response_bytes += one.response_bytes;
        measured.latencies.extend(one.latencies);
    }
    measured.elapsed = started.elapsed();
    measured.latencies.sort_unstable();
    measured
}

/// One stream: opens it (graph sent, summary received), waits for every stream to be open,
/// then sends batches for `load.duration` and reads every answer.
async fn one_stream(channel: Channel, load: &Load, stream: usize, barrier: &Barrier) -> Measured {
    let mut client = GrundyServiceClient::new(channel)
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX);
    let (requests, outbound) = mpsc::channel(load.window + 1);
    requests
        .send(start(load.graph.clone()))
        .await
        .expect("the request stream is open");
    let mut responses = client
        .evaluate(ReceiverStream::new(outbound))
        .await
        .expect("the stream opens")
        .into_inner();
    let summary = responses.message().await.expect("a summary").expect("one");
    assert!(summary.graph.is_some(), "the first response is the summary");
    barrier.wait().await;

    let window = Arc::new(Semaphore::new(load.window));
    let (sent_tx, mut sent) = mpsc::unbounded_channel();
    let batches = load.batches.clone();
    let deadline = Instant::now() + load.duration;
    tokio::spawn(async move {
        let mut next_id = 0u64;
        let turns = (0..batches.len()).cycle().skip(stream).take(MAX_BATCHES);
        for turn in turns {
            let permit = window.clone().acquire_owned().await.expect("open");
            if Instant::now() >= deadline {
                return; // dropping `requests` half-closes the stream
            }
            let mut batch = batches[turn].clone();
            batch.first_query_id = next_id;
            next_id += batch.token_counts.len() as u64;
            let _ = sent_tx.send((Instant::now(), batch.token_counts.len(), permit));
            if requests.send(queries(batch)).await.is_err() {
                return;
            }
        }
    });

    let mut measured = Measured {
        queries: 0,
        elapsed: Duration::ZERO,
        latencies: Vec::new(),
        response_bytes: 0,
    };
    while let Some(response) = responses.message().await.expect("no stream error") {
        let (sent_at, count, permit) = sent.recv().await.expect("a response answers a batch");
        measured.latencies.push(sent_at.elapsed());
        drop(permit);
        let verdicts = response.packed_verdicts.as_ref().expect("packed verdicts");
        assert_eq!(verdicts.outcomes.len(), count, "one verdict per query");
        measured.queries += count as u64;
        measured.response_bytes += response.encoded_len() as u64;
    }
    measured
}

fn start(graph: proto::Graph) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Start(EvaluateStart {
            graph_source: Some(GraphSource::Graph(graph)),
            explain: false,
            analysis: None,
            play_convention: 0,
        })),
    }
}

fn queries(batch: PackedTokenQueries) -> EvaluateRequest {
    EvaluateRequest {
        payload: Some(Payload::Queries(QueryBatch {
            queries: Vec::new(),
            packed_tokens: Some(batch),
        })),
    }
}
