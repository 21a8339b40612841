//! The remoteness tables made on first need (an acyclic graph's analysis holds its values
//! alone): the first request that reads a graph's remoteness computes it on the work pool, as
//! an analysis; requests for the same graph meanwhile wait their turn without a work slot or a
//! thread, and then find it ready.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::blocking::WorkPool;
use super::error::ServiceError;
use crate::engine::{Analysis, AnalysisError, Interrupt, PlayConvention};

/// One turn per graph id whose remoteness some request is computing or waiting for.
#[derive(Debug, Default)]
pub(crate) struct RemotenessTurns {
    turns: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl RemotenessTurns {
    /// Makes `analysis` (of `graph_id`) ready to answer remotenesses under `convention`: at
    /// once when it is; else, in the turn of `graph_id` and the convention, on `pool` as an
    /// analysis, stopped if this request goes away (the next one waiting then computes it).
    pub(crate) async fn prepare(
        &self,
        pool: &WorkPool,
        graph_id: &str,
        analysis: &Arc<Analysis>,
        convention: PlayConvention,
    ) -> Result<(), ServiceError> {
        if analysis.remoteness_ready_as(convention) {
            return Ok(());
        }
        let turn = match convention {
            PlayConvention::Normal => self.turn(graph_id),
            PlayConvention::Misere => self.turn(&format!("{graph_id} misere")),
        };
        let _ours = turn.lock.lock().await;
        if analysis.remoteness_ready_as(convention) {
            return Ok(());
        }
        let interrupt = Interrupt::new();
        let _stop = interrupt.raise_on_drop();
        let analysis = analysis.clone();
        pool.analyse(move || {
            let started = Instant::now();
            analysis
                .remoteness_table_as(convention, &interrupt)
                .map_err(|cancelled| ServiceError::Analysis(AnalysisError::from(cancelled)))?;
            tracing::debug!(
                seconds = started.elapsed().as_secs_f64(),
                "remoteness table computed"
            );
            Ok(())
        })
        .await
    }

    /// `graph_id`'s turn, shared with the requests already waiting for it.
    fn turn<'a>(&'a self, graph_id: &str) -> Turn<'a> {
        let mut turns = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        let lock = turns.entry(graph_id.to_owned()).or_default().clone();
        Turn {
            turns: self,
            graph_id: graph_id.to_owned(),
            lock,
        }
    }

    /// Graph ids with a turn in use (for tests).
    #[cfg(test)]
    fn in_use(&self) -> usize {
        self.turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// A request's hold on a graph's turn; the last one to let go removes the turn (however the
/// request ends: the future may be dropped at any await).
struct Turn<'a> {
    turns: &'a RemotenessTurns,
    graph_id: String,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut turns = self
            .turns
            .turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // The map's handle and this one: nobody else waits. Handles are taken under the same
        // lock, so none can appear meanwhile.
        if Arc::strong_count(&self.lock) == 2 {
            turns.remove(&self.graph_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::engine::{Game, Limits, analyse};
    use crate::generate::{Shape, graph};
    use crate::service::metrics::Metrics;

    fn acyclic(vertices: u32) -> Arc<Analysis> {
        let game = Game::token_sliding(graph(Shape::Dag, vertices, 8 * u64::from(vertices), 3));
        Arc::new(analyse(game, &Limits::default()).unwrap())
    }

    #[tokio::test]
    async fn requests_for_one_graph_take_one_work_slot_in_turn_and_leave_no_turn_behind() {
        // One analysis slot and a queue timeout of a millisecond: requests that waited for the
        // slot instead of their turn would be refused while the first one computes.
        let pool = WorkPool::new(1, 1, Duration::from_millis(1), Arc::new(Metrics::new()));
        let turns = RemotenessTurns::default();
        let analysis = acyclic(200_000);
        let expected = {
            let fresh = acyclic(200_000);
            fresh.remoteness_table().unwrap().to_vec()
        };
        let prepare = || turns.prepare(&pool, "g", &analysis, PlayConvention::Normal);
        let prepared = tokio::join!(prepare(), prepare(), prepare(), prepare());
        for prepared in <[_; 4]>::from(prepared) {
            assert!(prepared.is_ok(), "{prepared:?}");
        }
        assert!(analysis.remoteness_ready());
        assert_eq!(analysis.remoteness_table().unwrap(), expected.as_slice());
        assert_eq!(turns.in_use(), 0);
    }

    #[tokio::test]
    async fn a_request_that_goes_away_stops_its_computation_and_the_next_one_computes() {
        let pool = WorkPool::new(1, 1, Duration::from_secs(30), Arc::new(Metrics::new()));
        let turns = RemotenessTurns::default();
        let analysis = acyclic(400_000);
        // Dropped at its first await, its job on the pool: the turn is let go.
        let abandoned = turns.prepare(&pool, "g", &analysis, PlayConvention::Normal);
        let _ = tokio::time::timeout(Duration::ZERO, abandoned).await;
        assert_eq!(turns.in_use(), 0);
        turns
            .prepare(&pool, "g", &analysis, PlayConvention::Normal)
            .await
            .unwrap();
        assert!(analysis.remoteness_ready());
        assert_eq!(turns.in_use(), 0);
    }
}
