//! The one place where CPU-bound work leaves the async runtime: every graph conversion,
//! analysis and query batch runs on tokio's blocking pool behind a permit of [`WorkPool`], so
//! that the work in progress is bounded however many streams ask.
//!
//! Two kinds of work hold separate permits: analyses (validating, hashing and analysing a
//! graph: up to seconds each) and evaluations (one query batch: microseconds to
//! milliseconds), so that a few long analyses never hold up the verdicts of other streams.
//!
//! Each job runs in a span of its own ("analysis" or "evaluation"), a child of the span that
//! asked for it (the RPC's), and the time it waited for its permit is recorded in the
//! `grundy_work_slot_wait_seconds` histogram by kind.

use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::error::ServiceError;
use super::metrics::{Metrics, WorkKind};

/// Bounded CPU work off the runtime. Cheap to clone (a handle).
#[derive(Debug, Clone)]
pub(crate) struct WorkPool {
    analyses: Arc<Semaphore>,
    evaluations: Arc<Semaphore>,
    metrics: Arc<Metrics>,
}

impl WorkPool {
    /// At most `analyses` graph analyses and `evaluations` query batches at once.
    pub(crate) fn new(analyses: usize, evaluations: usize, metrics: Arc<Metrics>) -> Self {
        let permits = |n: usize| Arc::new(Semaphore::new(n.clamp(1, Semaphore::MAX_PERMITS)));
        Self {
            analyses: permits(analyses),
            evaluations: permits(evaluations),
            metrics,
        }
    }

    /// Runs a graph conversion or analysis, waiting for an analysis permit first.
    pub(crate) async fn analyse<T, F>(&self, work: F) -> Result<T, ServiceError>
    where
        F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
        T: Send + 'static,
    {
        self.run(WorkKind::Analysis, &self.analyses, work).await
    }

    /// Runs a query batch, waiting for an evaluation permit first.
    pub(crate) async fn evaluate<T, F>(&self, work: F) -> Result<T, ServiceError>
    where
        F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
        T: Send + 'static,
    {
        self.run(WorkKind::Evaluation, &self.evaluations, work)
            .await
    }

    /// Runs `work` on the blocking pool under a permit of `permits`; a panic there becomes
    /// INTERNAL, a runtime shutting down (the CLI's embedded server at exit) UNAVAILABLE.
    async fn run<T, F>(
        &self,
        kind: WorkKind,
        permits: &Arc<Semaphore>,
        work: F,
    ) -> Result<T, ServiceError>
    where
        F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
        T: Send + 'static,
    {
        let span = match kind {
            WorkKind::Analysis => tracing::info_span!("analysis"),
            WorkKind::Evaluation => tracing::info_span!("evaluation"),
        };
        let waiting = Instant::now();
        let permit = permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| ServiceError::Internal("the work pool is closed".into()))?;
        self.metrics.slot_waited(kind, waiting.elapsed());
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
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
}
