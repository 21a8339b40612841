//! The bookkeeping of one RPC; its response streams are produced in [`responder`]; its
//! lifetime is read in [`deadline`] (the client's deadline), [`departure`] (a client that
//! left) and [`activity`] (when its body last brought bytes).
//!
//! Every RPC holds an [`Rpc`] guard from its first line to the end of its response stream: it
//! holds a slot of `max_concurrent_streams`, counts as an active stream, carries the span and,
//! when dropped, records the outcome in the metrics and the log. Every wait of a stream (for
//! the client's next message, for a computation, for room in the response buffer) also ends
//! when the client leaves, its deadline passes or the server cancels streams at shutdown.

pub(crate) mod activity;
pub(crate) mod deadline;
pub(crate) mod departure;
pub(crate) mod protocol;
mod responder;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, watch};
use tokio::time::Instant;
use tonic::{Code, Status};
use tracing::Span;

use super::error::{ServiceError, reason_name, request_stream_status, status_reason};
use super::lifecycle::{ActiveGuard, Phase, cancelled};
use super::metrics::{MessageSizes, Metrics, QueryCounts, code_name};
use crate::engine::Analysis;
use crate::proto::ErrorReason;
use crate::wire::WireMessage;
use activity::BodyActivity;
use deadline::{Deadline, deadline_passed};
use departure::{ClientLeft, left_with};
use protocol::Protocol;

pub(crate) use responder::{Responder, ResponseStream, Verdicts};

/// A boxed future borrowing its producer's state.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The bookkeeping of one RPC; see the module documentation.
pub(crate) struct Rpc {
    name: &'static str,
    /// How the call came in (the metrics' `protocol` label).
    protocol: Protocol,
    pub(crate) span: Span,
    /// The size histograms of this method's messages.
    pub(crate) sizes: MessageSizes,
    started: Instant,
    deadline: Option<Deadline>,
    phase: watch::Receiver<Phase>,
    counts: QueryCounts,
    /// The final status code; None when the client went away before the RPC finished (the
    /// handler's future dropped, or its responses no longer read).
    code: Option<Code>,
    /// The reason in the final status's `ErrorInfo`, when it has one.
    reason: Option<ErrorReason>,
    metrics: Arc<Metrics>,
    /// Set when the client left mid-stream (absent when the service is called directly).
    client_left: Option<ClientLeft>,
    /// When the request body last brought a frame (absent when the service is called
    /// directly).
    activity: Option<BodyActivity>,
    _active: ActiveGuard,
    _slot: OwnedSemaphorePermit,
}

/// What [`Rpc::new`] needs besides the RPC's name.
pub(crate) struct RpcParts {
    pub(crate) protocol: Protocol,
    pub(crate) started: Instant,
    pub(crate) deadline: Option<Deadline>,
    pub(crate) phase: watch::Receiver<Phase>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) active: ActiveGuard,
    pub(crate) slot: OwnedSemaphorePermit,
    pub(crate) client_left: Option<ClientLeft>,
    pub(crate) activity: Option<BodyActivity>,
}

/// Why a response stream stopped early.
pub(crate) enum Stop {
    /// The client is gone: nobody to tell.
    ClientGone,
    /// Reported to the client as the stream's final status.
    Failed(Status),
}

impl From<ServiceError> for Stop {
    fn from(error: ServiceError) -> Self {
        Self::Failed(error.into())
    }
}

impl From<Status> for Stop {
    fn from(status: Status) -> Self {
        Self::Failed(status)
    }
}

impl Rpc {
    /// Starts the bookkeeping of the RPC `name` (its slot and active count already taken).
    pub(crate) fn new(name: &'static str, parts: RpcParts) -> Self {
        let span = tracing::info_span!(
            "rpc",
            rpc = name,
            graph_id = tracing::field::Empty,
            vertices = tracing::field::Empty,
            edges = tracing::field::Empty,
        );
        parts.metrics.inflight_streams.inc();
        Self {
            name,
            protocol: parts.protocol,
            span,
            sizes: parts.metrics.message_sizes(name),
            started: parts.started,
            deadline: parts.deadline,
            phase: parts.phase,
            counts: QueryCounts::default(),
            code: None,
            reason: None,
            metrics: parts.metrics,
            client_left: parts.client_left,
            activity: parts.activity,
            _active: parts.active,
            _slot: parts.slot,
        }
    }

    /// Records the graph the RPC works on in its span.
    pub(crate) fn record_graph(&self, graph_id: &str, analysis: &Analysis) {
        let graph = analysis.game().graph();
        self.span.record("graph_id", graph_id);
        self.span.record("vertices", graph.vertex_count());
        self.span.record("edges", graph.edge_count());
    }

    /// Marks the RPC as failed with `status`, and returns it.
    pub(crate) fn fail(&mut self, status: Status) -> Status {
        self.failed_with(&status);
        status
    }

    /// Records `status` as the RPC's final status.
    fn failed_with(&mut self, status: &Status) {
        self.code = Some(status.code());
        self.reason = status_reason(status);
    }

    /// When the request body last brought a frame, for [`within_idle_timeout`] (absent when
    /// the service is called directly).
    pub(crate) fn activity(&self) -> Option<BodyActivity> {
        self.activity.clone()
    }

    /// Marks a unary RPC as answered.
    pub(crate) fn succeed(&mut self) {
        self.code = Some(Code::Ok);
    }

    /// Reads the first message of a request stream under the same guards, ending the RPC
    /// with DEADLINE_EXCEEDED when the request body brings nothing for `start_timeout` before
    /// it is whole: a stream that never starts must not hold its concurrency slot forever,
    /// while a large first message on a slow link arrives as long as its frames keep coming.
    /// Its size is recorded in the request-size metric.
    pub(crate) async fn first_message<T: WireMessage>(
        &mut self,
        next: impl Future<Output = Result<Option<T>, Status>>,
        start_timeout: Duration,
    ) -> Result<Option<T>, Status> {
        let activity = self.activity.clone();
        let first = async {
            tokio::select! {
                biased;
                message = next => Some(message),
                () = silent_for(start_timeout, Instant::now(), activity.as_ref()) => None,
            }
        };
        let first = match self.guard(first).await? {
            Some(message) => message.map_err(request_stream_status)?,
            None => return Err(ServiceError::StartTimeout(start_timeout).into()),
        };
        if let Some(first) = &first {
            self.sizes.request.observe(first.wire_len() as f64);
        }
        Ok(first)
    }

    /// Awaits `work`, unless the server cancels streams or the client's deadline passes
    /// first.
    ///
    /// Both are checked before `work` is polled; `work` is then polled first, so that work
    /// ready at once (an evaluation done inline, a batch already read, room in the response
    /// buffer: most waits of a busy stream) costs no registration with the server's phase or
    /// the timer. Only a wait that has to sleep registers for all three.
    pub(crate) async fn guard<T>(&mut self, work: impl Future<Output = T>) -> Result<T, Status> {
        self.stopped()?;
        let deadline = self.deadline;
        tokio::select! {
            biased;
            value = work => Ok(value),
            () = cancelled(&mut self.phase) => Err(ServiceError::ShuttingDown.into()),
            () = deadline_passed(deadline) => Err(deadline_exceeded(deadline)),
        }
    }

    /// An error if the server has cancelled streams or the client's deadline has passed.
    fn stopped(&self) -> Result<(), Status> {
        if *self.phase.borrow() == Phase::Cancelling {
            return Err(ServiceError::ShuttingDown.into());
        }
        match self.deadline {
            Some(deadline) if deadline.at <= Instant::now() => {
                Err(deadline_exceeded(Some(deadline)))
            }
            _ => Ok(()),
        }
    }

    /// Counts verdicts handed to the client.
    fn count_answered(&mut self, counts: &QueryCounts) {
        self.metrics.queries_answered(counts);
        self.counts.add(counts);
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        // Dropped without a code: the handler's future was dropped, i.e. the client left. A
        // client that left mid-stream also made whatever failure the handler saw in its
        // truncated request (an incomplete graph, a broken stream).
        let left = self.client_left.as_ref().is_some_and(ClientLeft::left);
        let (code, reason) = match self.code {
            Some(code) if code == Code::Ok || !left => (code, self.reason),
            _ => left_with(self.deadline, Instant::now()),
        };
        let reason = reason.map_or("", reason_name);
        let counts = self.counts;
        tracing::info!(
            parent: &self.span,
            code = code_name(code),
            reason,
            protocol = self.protocol.label(),
            duration_ms = self.started.elapsed().as_secs_f64() * 1e3,
            queries = counts.total(),
            win = counts.win,
            lose = counts.lose,
            draw = counts.draw,
            errors = counts.error,
            "rpc finished"
        );
        self.metrics.request_finished(
            self.name,
            self.protocol,
            code,
            reason,
            self.started.elapsed(),
        );
        self.metrics.inflight_streams.dec();
    }
}

/// The error of a stream whose deadline passed.
fn deadline_exceeded(deadline: Option<Deadline>) -> Status {
    let timeout = deadline.map_or(Duration::ZERO, |d| d.timeout);
    ServiceError::DeadlineExceeded(timeout).into()
}

/// Awaits `next`, the client's next request; with `idle_timeout` set, gives up once the
/// stream has been quiet that long, counted from when `quiet` is done (the client has read
/// every response, say) or from the last frame of the request body (`activity`: a message
/// still arriving is no silence), whichever is later, and says how long it waited (the
/// caller's IDLE_TIMEOUT). Await it under the RPC's guard, which stops it on the client's
/// deadline and on the server's stop.
pub(crate) async fn within_idle_timeout<T>(
    next: impl Future<Output = T>,
    quiet: impl Future<Output = ()>,
    idle_timeout: Option<Duration>,
    activity: Option<&BodyActivity>,
) -> Result<T, Duration> {
    let Some(idle_timeout) = idle_timeout else {
        return Ok(next.await);
    };
    tokio::select! {
        biased;
        request = next => Ok(request),
        () = async {
            quiet.await;
            silent_for(idle_timeout, Instant::now(), activity).await;
        } => Err(idle_timeout),
    }
}

/// Done once the request body has brought no frame for `timeout`, counted from `since` or
/// from its last frame, whichever is later (never, for a timeout past the clock's range).
async fn silent_for(timeout: Duration, since: Instant, activity: Option<&BodyActivity>) {
    loop {
        let last = activity.map_or(since, |activity| activity.last().max(since));
        let Some(until) = last.checked_add(timeout) else {
            return std::future::pending().await;
        };
        if Instant::now() >= until {
            return;
        }
        tokio::time::sleep_until(until).await;
    }
}
