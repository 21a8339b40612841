//! The one-token remoteness table an [`super::Analysis`] keeps: made with the values, or on
//! first need.
//!
//! A cyclic graph gets it with its values (the retrograde pass reads the predecessor lists
//! the generalized labelling built). An acyclic graph gets it when it is first needed: the
//! outcomes, nim-sums and values never read it, and computing it with the values reads a
//! `u32` cell per edge at random instead of a `u8` value (on 10^7 vertices, 40 MB that miss
//! the last-level cache instead of 10 MB that fit), besides the table itself. Only winning
//! moves (the fastest of one token), position analyses and per-vertex remotenesses read it;
//! a caller that answers those can compute it ahead, on its own thread and interruptibly
//! ([`super::Analysis::prepare_remoteness`]).
//!
//! The misère table (the player who cannot move wins) is always computed on first need, by
//! the same passes with the losing parity flipped: Kahn's order and the follower fold on an
//! acyclic graph, the predecessor lists and the retrograde pass on a cyclic one.

use std::sync::{Mutex, OnceLock, PoisonError};

use super::convention::PlayConvention;
use super::graph::Digraph;
use super::interrupt::{Cancelled, Interrupt};
use super::{order, remoteness};

/// A remoteness table, present or computed on first need.
#[derive(Debug)]
pub(super) struct RemotenessTable {
    table: OnceLock<Vec<u32>>,
    /// How a deferred table is computed: the play convention, and whether the graph has a
    /// cycle.
    kind: (PlayConvention, bool),
    /// Held while the table is computed: a second caller waits for the first one's table
    /// instead of computing (and holding) another.
    computing: Mutex<()>,
}

impl RemotenessTable {
    /// A table computed already.
    pub(super) fn ready(table: Vec<u32>) -> Self {
        Self {
            table: OnceLock::from(table),
            kind: (PlayConvention::Normal, true),
            computing: Mutex::new(()),
        }
    }

    /// The table under `convention` of a graph with a cycle or not (`cyclic`), not computed
    /// yet.
    pub(super) fn deferred(convention: PlayConvention, cyclic: bool) -> Self {
        Self {
            table: OnceLock::new(),
            kind: (convention, cyclic),
            computing: Mutex::new(()),
        }
    }

    /// The table if it is computed.
    pub(super) fn get(&self) -> Option<&[u32]> {
        self.table.get().map(Vec::as_slice)
    }

    /// The table of `graph`, computing it first if needed. A cancelled
    /// computation leaves nothing behind; the next call starts again.
    pub(super) fn get_or_compute(
        &self,
        graph: &Digraph,
        interrupt: &Interrupt,
    ) -> Result<&[u32], Cancelled> {
        if let Some(table) = self.get() {
            return Ok(table);
        }
        let _computing = self
            .computing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(table) = self.get() {
            return Ok(table);
        }
        let (convention, cyclic) = self.kind;
        let table = if cyclic {
            remoteness::cyclic_remoteness(graph, convention, interrupt)?
        } else {
            acyclic_remoteness(graph, convention, interrupt)?
        };
        Ok(self.table.get_or_init(|| table))
    }

    /// Bytes the table holds once computed, `vertices` entries: the same before it is (a cache
    /// that admits the analysis has room for its remoteness too, and the bytes it counted in
    /// are the bytes it counts out).
    pub(super) fn heap_bytes(vertices: u32) -> usize {
        (vertices as usize).saturating_mul(size_of::<u32>())
    }
}

impl Clone for RemotenessTable {
    fn clone(&self) -> Self {
        Self {
            table: self.table.clone(),
            kind: self.kind,
            computing: Mutex::new(()),
        }
    }
}

/// The remoteness of every vertex of the acyclic `graph` under `convention`: Kahn's order,
/// then the remoteness pass.
pub(super) fn acyclic_remoteness(
    graph: &Digraph,
    convention: PlayConvention,
    interrupt: &Interrupt,
) -> Result<Vec<u32>, Cancelled> {
    interrupt.check()?;
    let table = match order::acyclic_order_interruptible(graph, interrupt)? {
        Some(order) => Some(remoteness::acyclic_remoteness_as(
            graph, &order, convention, interrupt,
        )?),
        None => None,
    };
    // The analysis found the graph acyclic: Kahn's algorithm cannot stall on it now.
    Ok(table.expect("the graph of a deferred remoteness table is acyclic"))
}
