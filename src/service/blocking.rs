//! The one place where CPU-bound work leaves the async runtime: every graph conversion,
//! analysis and query batch runs on tokio's blocking pool behind a permit of [`WorkPool`], so
//! that the work in progress is bounded however many streams ask.
//!
//! Two kinds of work hold separate permits: analyses (validating, hashing and analysing a
//! graph: up to seconds each) and evaluations (one query batch: microseconds to
//! milliseconds), so that a few long analyses never hold up the verdicts of other streams.

use std::sync::Arc;

use tokio::sync::Semaphore;

use super::error::ServiceError;

/// Bounded CPU work off the runtime. Cheap to clone (a handle).
#[derive(Debug, Clone)]
pub(crate) struct WorkPool {
    analyses: Arc<Semaphore>,
    evaluations: Arc<Semaphore>,
}

impl WorkPool {
    /// At most `analyses` graph analyses and `evaluations` query batches at once.
    pub(crate) fn new(analyses: usize, evaluations: usize) -> Self {
        let permits = |n: usize| Arc::new(Semaphore::new(n.clamp(1, Semaphore::MAX_PERMITS)));
        Self {
            analyses: permits(analyses),
            evaluations: permits(evaluations),
        }
    }

    /// Runs a graph conversion or analysis, waiting for an analysis permit first.
    pub(crate) async fn analyse<T, F>(&self, work: F) -> Result<T, ServiceError>
    where
        F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
        T: Send + 'static,
    {
        run(&self.analyses, work).await
    }

    /// Runs a query batch, waiting for an evaluation permit first.
    pub(crate) async fn evaluate<T, F>(&self, work: F) -> Result<T, ServiceError>
    where
        F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
        T: Send + 'static,
    {
        run(&self.evaluations, work).await
    }
}

/// Runs `work` on the blocking pool under a permit of `permits`; a panic there becomes
/// INTERNAL, a runtime shutting down (the CLI's embedded server at exit) UNAVAILABLE.
async fn run<T, F>(permits: &Arc<Semaphore>, work: F) -> Result<T, ServiceError>
where
    F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
    T: Send + 'static,
{
    let permit = permits
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| ServiceError::Internal("the work pool is closed".into()))?;
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
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
