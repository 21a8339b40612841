//! The one place where CPU-bound work leaves the async runtime: every graph conversion,
//! analysis and query batch runs on tokio's blocking pool behind a permit of [`WorkPool`], so
//! that the work in progress is bounded however many streams ask.
//!
//! Four kinds of work hold separate permits: analyses (validating, hashing and analysing a
//! graph: up to seconds each), evaluations (one query batch: microseconds to milliseconds),
//! searches (query batches whose cost no lookup count bounds: the moves of `explain`, the
//! position analysis of sums, up to a position budget per query) and renders (the
//! playground's `POST /render`: parsing and drawing a graph, up to a second), so that a few
//! long analyses, searches or drawings never hold up the verdicts of other streams, nor the
//! runtime threads that serve every connection.
//! The wait for an analysis, search or render permit is bounded (`--analysis-queue-timeout`):
//! a request that would wait longer is refused with a retryable status naming the queue,
//! instead of queueing without end behind a burst of big graphs or other clients' long
//! searches. Evaluations, microseconds each, wait as long as it takes.
//!
//! An evaluation small enough (see [`INLINE_LOOKUPS`]) runs on the runtime thread that asks
//! instead: its work is a few microseconds, less than the trip to the pool and back.
//!
//! Each job runs in a span of its own ("analysis" or "evaluation"), a child of the span that
//! asked for it (the RPC's), and the time it waited for its permit is recorded in the
//! `grundy_work_slot_wait_seconds` histogram by kind.

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::metrics::gauge::Gauge;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{AcquireError, Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::error::ServiceError;
use super::metrics::{Metrics, WorkKind};

/// Evaluations costing at most this many lookups of a cache-resident table (the caller's
/// estimate: see `QueryEvaluator::cost`) run inline on the runtime thread: at about a
/// nanosecond each, up to some 30-50 microseconds, within tokio's guidance between awaits
/// (a CLI batch of 4,096 queries of a few tokens each is about 27,000). A trip to the
/// blocking pool and back costs tens of microseconds of thread wake-ups: streams of 64-query
/// batches spent more there than on their answers (1.4-1.6x a no-op service's time in
/// `benches/service`), and 4,096-query batches on 64 streams 1.5-1.7x; inline, 1.1-1.4x.
pub(crate) const INLINE_LOOKUPS: u64 = 32768;

/// Drawings of `POST /render` at once. The playground is a person's page, which asks for one
/// picture at a time; two let a second person's picture start while the first is drawn,
/// without letting a burst of them take every core (a 300-vertex drawing takes 0.2-0.3 s of
/// a core in a release build).
pub(crate) const RENDER_SLOTS: usize = 2;

/// Bounded CPU work off the runtime. Cheap to clone (a handle).
#[derive(Debug, Clone)]
pub(crate) struct WorkPool {
    analyses: Arc<Semaphore>,
    analysis_slots: usize,
    analysis_queue_timeout: Duration,
    evaluations: Arc<Semaphore>,
    searches: Arc<Semaphore>,
    search_slots: usize,
    search_queue: Arc<SearchQueue>,
    renders: Arc<Semaphore>,
    metrics: Arc<Metrics>,
}

/// Who waits for a search permit. A search job gives its permit back between queries once it
/// has run [`SEARCH_SLICE`] and someone waits ([`SearchQueue::contended`]), then waits for
/// another turn as a resumed job; a fresh job (a stream's first, or one after it went
/// quiet) goes before every resumed one. So a quick stream waits for at most a query of
/// each running search, not for their whole batches.
#[derive(Debug, Default)]
pub(crate) struct SearchQueue {
    waiting: AtomicUsize,
    fresh_waiting: AtomicUsize,
    fresh_served: Notify,
}

impl SearchQueue {
    /// Whether a search job waits for a permit.
    pub(crate) fn contended(&self) -> bool {
        self.waiting.load(Ordering::Relaxed) > 0
    }
}

/// How long a search job runs before it gives its permit to a waiting one (checked between
/// queries: a query itself runs to its end, within its work budget).
pub(crate) const SEARCH_SLICE: Duration = Duration::from_millis(20);

/// Counts one waiter of a [`SearchQueue`] while it lives (and, for a fresh one, wakes the
/// resumed ones when it goes).
struct Waiter<'a> {
    queue: &'a SearchQueue,
    fresh: bool,
}

impl<'a> Waiter<'a> {
    fn new(queue: &'a SearchQueue, fresh: bool) -> Self {
        queue.waiting.fetch_add(1, Ordering::Relaxed);
        if fresh {
            queue.fresh_waiting.fetch_add(1, Ordering::Relaxed);
        }
        Self { queue, fresh }
    }
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        self.queue.waiting.fetch_sub(1, Ordering::Relaxed);
        if self.fresh {
            self.queue.fresh_waiting.fetch_sub(1, Ordering::Relaxed);
            self.queue.fresh_served.notify_waiters();
        }
    }
}

impl WorkPool {
    /// At most `analyses` graph analyses, `evaluations` query batches, as many searches and
    /// [`RENDER_SLOTS`] drawings at once; a request waits at most `analysis_queue_timeout`
    /// for an analysis, search or render permit.
    pub(crate) fn new(
        analyses: usize,
        evaluations: usize,
        analysis_queue_timeout: Duration,
        metrics: Arc<Metrics>,
    ) -> Self {
        let slots = |n: usize| n.clamp(1, Semaphore::MAX_PERMITS);
        Self {
            analyses: Arc::new(Semaphore::new(slots(analyses))),
            analysis_slots: slots(analyses),
            analysis_queue_timeout,
            evaluations: Arc::new(Semaphore::new(slots(evaluations))),
            searches: Arc::new(Semaphore::new(slots(evaluations))),
            search_slots: slots(evaluations),
            search_queue: Arc::default(),
            renders: Arc::new(Semaphore::new(RENDER_SLOTS)),
            metrics,
        }
    }

    /// Runs a graph conversion or analysis, waiting for an analysis permit first (at most
    /// the queue timeout: then [`ServiceError::QueueFull`], UNAVAILABLE).
    pub(crate) async fn analyse<T, F>(&self, work: F) -> Result<T, ServiceError>
    where
        F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
        T: Send + 'static,
    {
        let permit = self
            .queued_permit(WorkKind::Analysis, &self.analyses, self.analysis_slots)
            .await?;
        let running = self.metrics.jobs_running(WorkKind::Analysis).clone();
        run(tracing::info_span!("analysis"), running, permit, work).await
    }

    /// Runs the drawing of a `POST /render` (and the parsing of its body), waiting for a
    /// render permit first (at most the queue timeout: then [`ServiceError::QueueFull`]).
    pub(crate) async fn render<T, F>(&self, work: F) -> Result<T, ServiceError>
    where
        F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
        T: Send + 'static,
    {
        let permit = self
            .queued_permit(WorkKind::Render, &self.renders, RENDER_SLOTS)
            .await?;
        let running = self.metrics.jobs_running(WorkKind::Render).clone();
        run(tracing::info_span!("render"), running, permit, work).await
    }

    /// A permit of `permits` (`slots` of them, for the message), waited for at most the
    /// queue timeout (then [`ServiceError::QueueFull`] naming `kind`), the wait recorded.
    async fn queued_permit(
        &self,
        kind: WorkKind,
        permits: &Arc<Semaphore>,
        slots: usize,
    ) -> Result<Result<OwnedSemaphorePermit, AcquireError>, ServiceError> {
        let waiting = Instant::now();
        let waited = self.analysis_queue_timeout;
        let permit = tokio::time::timeout(waited, permits.clone().acquire_owned()).await;
        self.metrics.slot_waited(kind, waiting.elapsed());
        permit.map_err(|_| ServiceError::QueueFull {
            queue: kind,
            slots,
            waited,
        })
    }

    /// A search permit: fresh searches first (see [`SearchQueue`]), a fresh one waiting at
    /// most the queue timeout (then [`ServiceError::QueueFull`]).
    async fn search_permit(
        &self,
        resumed: bool,
    ) -> Result<Result<OwnedSemaphorePermit, AcquireError>, ServiceError> {
        let queue = &*self.search_queue;
        let waiting = Instant::now();
        let waited = self.analysis_queue_timeout;
        let _waiter = Waiter::new(queue, !resumed);
        let admitted = async {
            if resumed {
                loop {
                    let served = queue.fresh_served.notified();
                    tokio::pin!(served);
                    served.as_mut().enable();
                    if queue.fresh_waiting.load(Ordering::Relaxed) == 0 {
                        break;
                    }
                    served.await;
                }
            }
            self.searches.clone().acquire_owned().await
        };
        // A resumed job's stream was admitted already, and is answering a batch: it waits for
        // its turn without the queue timeout (its client's deadline still bounds it), rather
        // than fail halfway behind a steady flow of fresh searches.
        let permit = if resumed {
            Ok(admitted.await)
        } else {
            tokio::time::timeout(waited, admitted).await
        };
        self.metrics
            .slot_waited(WorkKind::Search, waiting.elapsed());
        permit.map_err(|_| ServiceError::QueueFull {
            queue: WorkKind::Search,
            slots: self.search_slots,
            waited,
        })
    }

    /// Who waits for a search permit, for the jobs that slice their work.
    pub(crate) fn search_queue(&self) -> Arc<SearchQueue> {
        self.search_queue.clone()
    }

    /// Runs optional work of the analysis kind only if an analysis permit is free now: `None`
    /// (the work not run) when none is. It never queues, so it never delays an analysis that
    /// waits for a slot, nor waits itself (the hashing of an upload's chunks, which can fall
    /// back to hashing the whole graph later).
    pub(crate) fn try_analyse<T, F>(
        &self,
        work: F,
    ) -> Option<impl Future<Output = Result<T, ServiceError>> + use<T, F>>
    where
        F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
        T: Send + 'static,
    {
        let permit = self.analyses.clone().try_acquire_owned().ok()?;
        let running = self.metrics.jobs_running(WorkKind::Analysis).clone();
        Some(run(
            tracing::info_span!("analysis"),
            running,
            Ok(permit),
            work,
        ))
    }

    /// Runs query batches of `lookups` table lookups: inline when at most [`INLINE_LOOKUPS`],
    /// else on the pool after waiting for an evaluation permit. `None` (not bounded by a
    /// count, as when moves are searched) waits for a search permit instead, at most the
    /// queue timeout (then [`ServiceError::QueueFull`]): a search may run for seconds, and
    /// a stream must not queue without end behind other clients' searches.
    ///
    /// A `resumed` search (one that gave its permit back after its slice) waits until no
    /// fresh search waits, then for a permit, without the queue timeout.
    pub(crate) async fn evaluate<T, F>(
        &self,
        lookups: Option<u64>,
        resumed: bool,
        work: F,
    ) -> Result<T, ServiceError>
    where
        F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
        T: Send + 'static,
    {
        if lookups.is_some_and(|lookups| lookups <= INLINE_LOOKUPS) {
            // It waited for nothing; counted, so that the histogram counts every job.
            self.metrics
                .slot_waited(WorkKind::Evaluation, Duration::ZERO);
            let _entered = tracing::info_span!("evaluation").entered();
            return std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .unwrap_or_else(|_| Err(ServiceError::Internal("evaluation panicked".into())));
        }
        let (kind, permit, span) = match lookups {
            Some(_) => {
                let waiting = Instant::now();
                let permit = self.evaluations.clone().acquire_owned().await;
                let kind = WorkKind::Evaluation;
                self.metrics.slot_waited(kind, waiting.elapsed());
                (kind, permit, tracing::info_span!("evaluation"))
            }
            None => {
                let kind = WorkKind::Search;
                let permit = self.search_permit(resumed).await?;
                (kind, permit, tracing::info_span!("search"))
            }
        };
        let running = self.metrics.jobs_running(kind).clone();
        run(span, running, permit, work).await
    }
}

/// Runs `work` in `span` on the blocking pool under `permit` (held until the work returns,
/// even when the caller stopped waiting), counted in `running` meanwhile; a panic there
/// becomes INTERNAL, a runtime shutting down (the CLI's embedded server at exit) UNAVAILABLE.
async fn run<T, F>(
    span: tracing::Span,
    running: Gauge,
    permit: Result<OwnedSemaphorePermit, AcquireError>,
    work: F,
) -> Result<T, ServiceError>
where
    F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
    T: Send + 'static,
{
    let permit = permit.map_err(|_| ServiceError::Internal("the work pool is closed".into()))?;
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let _running = Running::start(running);
        let _entered = span.enter();
        work()
    })
    .await
    .map_err(|error| {
        if error.is_cancelled() {
            ServiceError::ShuttingDown
        } else {
            ServiceError::Internal(format!("worker failed: {error}"))
        }
    })?
}

/// A job counted in a gauge while it runs (until it returns or unwinds).
struct Running(Gauge);

impl Running {
    fn start(gauge: Gauge) -> Self {
        gauge.inc();
        Self(gauge)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    /// A search holding every search permit (here blocked until told to finish) does not hold
    /// up an evaluation: that has permits of its own.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_long_search_does_not_hold_up_evaluations() {
        let pool = WorkPool::new(1, 1, Duration::from_secs(10), Arc::new(Metrics::new()));
        let (finish, finished) = mpsc::channel::<()>();
        let (started, mut running) = tokio::sync::mpsc::channel::<()>(1);
        let search = tokio::spawn({
            let pool = pool.clone();
            async move {
                pool.evaluate(None, false, move || {
                    started.blocking_send(()).unwrap();
                    finished.recv().unwrap();
                    Ok("search")
                })
                .await
            }
        });
        running.recv().await.expect("the search started");
        let evaluation = pool.evaluate(Some(INLINE_LOOKUPS + 1), false, || Ok("evaluation"));
        let evaluation = tokio::time::timeout(Duration::from_secs(10), evaluation).await;
        assert_eq!(
            evaluation.expect("waited behind the search").unwrap(),
            "evaluation"
        );
        // A second search waits for the first one's permit.
        let second = pool.evaluate(None, false, || Ok("second search"));
        tokio::pin!(second);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), &mut second)
                .await
                .is_err(),
            "two searches ran on one permit"
        );
        finish.send(()).unwrap();
        assert_eq!(search.await.unwrap().unwrap(), "search");
        assert_eq!(second.await.unwrap(), "second search");
    }

    /// An analysis that runs until the sender is sent to (or dropped), once it has started.
    async fn hold_analysis(
        pool: &WorkPool,
    ) -> (
        tokio::task::JoinHandle<Result<(), ServiceError>>,
        mpsc::Sender<()>,
    ) {
        let (started, wait) = mpsc::channel();
        let (release, hold) = mpsc::channel::<()>();
        let holder = {
            let pool = pool.clone();
            tokio::spawn(async move {
                pool.analyse(move || {
                    started.send(()).unwrap();
                    hold.recv().ok();
                    Ok(())
                })
                .await
            })
        };
        tokio::task::spawn_blocking(move || wait.recv().unwrap())
            .await
            .unwrap();
        (holder, release)
    }

    #[tokio::test]
    async fn an_analysis_waits_for_its_slot_at_most_the_queue_timeout() {
        let pool = WorkPool::new(1, 1, Duration::from_millis(50), Arc::new(Metrics::new()));
        let (holder, release) = hold_analysis(&pool).await;
        // The slot is held: another analysis waits out its queue timeout.
        let refused = pool.analyse(|| Ok(())).await;
        assert!(matches!(
            refused,
            Err(ServiceError::QueueFull {
                queue: WorkKind::Analysis,
                ..
            })
        ));
        release.send(()).unwrap();
        holder.await.unwrap().unwrap();
        pool.analyse(|| Ok(())).await.unwrap();
    }
}
