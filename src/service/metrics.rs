//! Prometheus metrics: the counters and histograms the service updates, encoded as
//! OpenMetrics text by `prometheus-client` (served at `/metrics` by `metrics_exporter`).

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tonic::Code;

use super::rpc::protocol::Protocol;
use crate::proto::{Outcome, Verdict};

/// Labels of `grundy_requests_total`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RequestLabels {
    /// The RPC method, e.g. "Evaluate".
    pub(crate) rpc: &'static str,
    /// The final gRPC status code, e.g. "OK", "RESOURCE_EXHAUSTED".
    pub(crate) code: &'static str,
    /// The `ErrorInfo` reason of the final status, e.g. "IDLE_TIMEOUT", "GRAPH_TOO_LARGE";
    /// empty when it has none (OK, a client that left before its deadline).
    pub(crate) reason: &'static str,
    /// How the call came in: "grpc", "grpc-web" or "json", see [`Protocol`].
    pub(crate) protocol: &'static str,
}

/// Labels of `grundy_rpc_duration_seconds`: one histogram per method, code and protocol,
/// without the reason (a histogram is a dozen series).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DurationLabels {
    rpc: &'static str,
    code: &'static str,
    protocol: &'static str,
}

/// Labels of the per-method histograms of message sizes.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct MethodLabels {
    /// The RPC method, e.g. "Evaluate".
    pub(crate) rpc: &'static str,
}

/// Labels of `grundy_work_slot_wait_seconds`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct WorkLabels {
    /// "analysis", "evaluation", "search" or "render", see [`WorkKind`].
    pub(crate) kind: &'static str,
}

/// The four kinds of CPU work of the work pool, each with its own permits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkKind {
    /// Validating, hashing or analysing a graph.
    Analysis,
    /// Answering query batches.
    Evaluation,
    /// Answering query batches with searched moves or position analysis.
    Search,
    /// Drawing a graph for the playground (`POST /render`).
    Render,
}

impl WorkKind {
    /// Every kind, in the order of [`WorkKind::index`].
    const ALL: [Self; 4] = [Self::Analysis, Self::Evaluation, Self::Search, Self::Render];

    /// The kind's place in [`WorkKind::ALL`] (and in the arrays of its series).
    fn index(self) -> usize {
        match self {
            Self::Analysis => 0,
            Self::Evaluation => 1,
            Self::Search => 2,
            Self::Render => 3,
        }
    }

    /// The kind's name, as the metrics' `kind` label and a queue's name in errors.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Analysis => "analysis",
            Self::Evaluation => "evaluation",
            Self::Search => "search",
            Self::Render => "render",
        }
    }
}

/// A histogram family whose histograms share one set of buckets.
type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// The size histograms of one method's messages (handles into the families).
#[derive(Debug, Clone)]
pub(crate) struct MessageSizes {
    /// Encoded bytes of each request message.
    pub(crate) request: Histogram,
    /// Encoded bytes of each response message.
    pub(crate) response: Histogram,
}

/// Buckets of RPC durations: 0.1 ms .. about 30 min (a stream may run long).
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 4.0, 13))
}

/// Buckets of slot waits: 0.1 ms .. about 7 min.
fn wait_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 4.0, 12))
}

/// Buckets of message sizes: 16 B .. 1 GiB.
fn size_histogram() -> Histogram {
    Histogram::new(exponential_buckets(16.0, 4.0, 14))
}

/// Labels of `grundy_queries_total`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct QueryLabels {
    /// "win", "lose", "draw", or "error" for a malformed query.
    pub(crate) outcome: &'static str,
}

/// The series of `queries`, one per outcome.
#[derive(Debug)]
struct Answered {
    win: Counter,
    lose: Counter,
    draw: Counter,
    error: Counter,
}

/// Every metric of the server, registered once.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub(crate) requests: Family<RequestLabels, Counter>,
    rpc_duration_seconds: HistogramFamily<DurationLabels>,
    request_message_bytes: HistogramFamily<MethodLabels>,
    response_message_bytes: HistogramFamily<MethodLabels>,
    /// The series of `queries` by outcome, and of `work_slot_wait_seconds` by kind, looked up
    /// once: every response and every job updates them, and a family's lookup takes its lock
    /// and hashes the labels.
    answered: Answered,
    /// The series of `work_slot_wait_seconds`, by [`WorkKind::index`].
    slot_waits: [Histogram; 4],
    /// The series of `work_jobs_running`, by [`WorkKind::index`].
    jobs_running: [Gauge; 4],
    pub(crate) table_compute_seconds: Histogram,
    pub(crate) cache_hits: Counter,
    pub(crate) cache_misses: Counter,
    pub(crate) cache_evictions: Counter,
    pub(crate) cache_bytes: Gauge,
    pub(crate) cache_entries: Gauge,
    pub(crate) inflight_streams: Gauge,
    pub(crate) auth_failures: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Every metric, registered, at zero.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("grundy");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "requests",
            "RPCs finished, by method, final gRPC status code, the status's error reason and the \
             protocol (grpc, grpc-web, json)",
            requests.clone(),
        );
        let rpc_duration_seconds: HistogramFamily<DurationLabels> =
            Family::new_with_constructor(duration_histogram);
        registry.register(
            "rpc_duration_seconds",
            "RPC latency, from arrival to the final status, by method, gRPC status code and \
             protocol",
            rpc_duration_seconds.clone(),
        );
        let work_slot_wait_seconds: HistogramFamily<WorkLabels> =
            Family::new_with_constructor(wait_histogram);
        registry.register(
            "work_slot_wait_seconds",
            "Time a job waited for a permit of the work pool, by kind (analysis: a graph \
             analysis slot, --compute-concurrency; evaluation: a query batch, zero for \
             a small one answered inline; search: a batch whose moves or sums are searched; \
             render: a drawing of POST /render)",
            work_slot_wait_seconds.clone(),
        );
        let work_jobs_running = Family::<WorkLabels, Gauge>::default();
        registry.register(
            "work_jobs_running",
            "Jobs of the work pool running, by kind (as work_slot_wait_seconds; a small \
             evaluation answered inline is not one); the job of a request that went away \
             stops at its next check",
            work_jobs_running.clone(),
        );
        let request_message_bytes: HistogramFamily<MethodLabels> =
            Family::new_with_constructor(size_histogram);
        registry.register(
            "request_message_bytes",
            "Encoded size of each request message, by method",
            request_message_bytes.clone(),
        );
        let response_message_bytes: HistogramFamily<MethodLabels> =
            Family::new_with_constructor(size_histogram);
        registry.register(
            "response_message_bytes",
            "Encoded size of each response message, by method",
            response_message_bytes.clone(),
        );
        let queries = Family::<QueryLabels, Counter>::default();
        registry.register(
            "queries",
            "Queries answered, by outcome (error: malformed query, answered in band)",
            queries.clone(),
        );
        // 0.5 ms .. about 35 min.
        let table_compute_seconds = Histogram::new(exponential_buckets(0.0005, 4.0, 12));
        registry.register(
            "table_compute_seconds",
            "Time to validate and analyse a graph (compute its per-vertex table)",
            table_compute_seconds.clone(),
        );
        let cache_hits = Counter::default();
        registry.register(
            "cache_hits",
            "Graph lookups answered from the table cache",
            cache_hits.clone(),
        );
        let cache_misses = Counter::default();
        registry.register(
            "cache_misses",
            "Graph lookups not in the table cache (computed, or joined a computation under way)",
            cache_misses.clone(),
        );
        let cache_evictions = Counter::default();
        registry.register(
            "cache_evictions",
            "Tables evicted from the cache to stay under --cache-bytes",
            cache_evictions.clone(),
        );
        let cache_bytes = Gauge::default();
        registry.register(
            "cache_bytes",
            "Bytes held by cached graphs and tables",
            cache_bytes.clone(),
        );
        let cache_entries = Gauge::default();
        registry.register(
            "cache_entries",
            "Graphs in the table cache",
            cache_entries.clone(),
        );
        let inflight_streams = Gauge::default();
        registry.register(
            "inflight_streams",
            "RPCs of grundy.v1.GrundyService in progress",
            inflight_streams.clone(),
        );
        let auth_failures = Counter::default();
        registry.register(
            "auth_failures",
            "Calls refused for a missing or wrong bearer token",
            auth_failures.clone(),
        );
        let answered_as = |outcome| queries.get_or_create(&QueryLabels { outcome }).clone();
        let answered = Answered {
            win: answered_as("win"),
            lose: answered_as("lose"),
            draw: answered_as("draw"),
            error: answered_as("error"),
        };
        let labels = |kind: WorkKind| WorkLabels { kind: kind.label() };
        let slot_waits =
            WorkKind::ALL.map(|kind| work_slot_wait_seconds.get_or_create(&labels(kind)).clone());
        let jobs_running =
            WorkKind::ALL.map(|kind| work_jobs_running.get_or_create(&labels(kind)).clone());
        Self {
            registry,
            requests,
            rpc_duration_seconds,
            request_message_bytes,
            response_message_bytes,
            answered,
            slot_waits,
            jobs_running,
            table_compute_seconds,
            cache_hits,
            cache_misses,
            cache_evictions,
            cache_bytes,
            cache_entries,
            inflight_streams,
            auth_failures,
        }
    }

    /// Counts one finished RPC and records its latency.
    pub(crate) fn request_finished(
        &self,
        rpc: &'static str,
        protocol: Protocol,
        code: Code,
        reason: &'static str,
        elapsed: Duration,
    ) {
        let (code, protocol) = (code_name(code), protocol.label());
        let labels = RequestLabels {
            rpc,
            code,
            reason,
            protocol,
        };
        self.requests.get_or_create(&labels).inc();
        self.rpc_duration_seconds
            .get_or_create(&DurationLabels {
                rpc,
                code,
                protocol,
            })
            .observe(elapsed.as_secs_f64());
    }

    /// Records how long a job of `kind` waited for its permit.
    pub(crate) fn slot_waited(&self, kind: WorkKind, waited: Duration) {
        self.slot_waits[kind.index()].observe(waited.as_secs_f64());
    }

    /// The gauge of the jobs of `kind` running on the work pool.
    pub(crate) fn jobs_running(&self, kind: WorkKind) -> &Gauge {
        &self.jobs_running[kind.index()]
    }

    /// Jobs of `kind` running on the work pool now (`work_jobs_running`).
    pub fn work_jobs_running(&self, kind: WorkKind) -> i64 {
        self.jobs_running(kind).get()
    }

    /// The message size histograms of the method `rpc`.
    pub(crate) fn message_sizes(&self, rpc: &'static str) -> MessageSizes {
        let labels = MethodLabels { rpc };
        MessageSizes {
            request: self.request_message_bytes.get_or_create(&labels).clone(),
            response: self.response_message_bytes.get_or_create(&labels).clone(),
        }
    }

    /// Counts answered queries by outcome.
    pub(crate) fn queries_answered(&self, counts: &QueryCounts) {
        let answered = &self.answered;
        for (counter, count) in [
            (&answered.win, counts.win),
            (&answered.lose, counts.lose),
            (&answered.draw, counts.draw),
            (&answered.error, counts.error),
        ] {
            if count > 0 {
                counter.inc_by(count);
            }
        }
    }

    /// The metrics in the OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

/// Queries answered, by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct QueryCounts {
    pub(crate) win: u64,
    pub(crate) lose: u64,
    pub(crate) draw: u64,
    pub(crate) error: u64,
}

impl QueryCounts {
    pub(crate) fn total(&self) -> u64 {
        self.win + self.lose + self.draw + self.error
    }

    /// Counts one verdict of `outcome` (see [`QueryCounts::outcome_of`]).
    pub(crate) fn count(&mut self, outcome: Option<Outcome>) {
        match outcome {
            Some(Outcome::Win) => self.win += 1,
            Some(Outcome::Lose) => self.lose += 1,
            Some(Outcome::Draw) => self.draw += 1,
            _ => self.error += 1,
        }
    }

    /// What a full verdict counts as: `None`, an error, for an error or an outcome outside
    /// the enum.
    pub(crate) fn outcome_of(verdict: &Verdict) -> Option<Outcome> {
        match verdict.error {
            Some(_) => None,
            None => Outcome::try_from(verdict.outcome).ok(),
        }
    }

    pub(crate) fn add(&mut self, other: &QueryCounts) {
        self.win += other.win;
        self.lose += other.lose;
        self.draw += other.draw;
        self.error += other.error;
    }
}

/// The canonical upper-case name of a gRPC status code, as in the gRPC specification.
pub(crate) fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_work_kind_has_its_own_series() {
        for (place, kind) in WorkKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.index(), place, "{kind:?}");
        }
        let metrics = Metrics::new();
        metrics.jobs_running(WorkKind::Search).inc();
        assert_eq!(metrics.work_jobs_running(WorkKind::Search), 1);
        assert_eq!(metrics.work_jobs_running(WorkKind::Analysis), 0);
        assert_eq!(metrics.work_jobs_running(WorkKind::Evaluation), 0);
    }
}
