//! The per-vertex table of a game ([`analyse`]): Grundy values (or the generalized function
//! on cyclic graphs, or the Addition-Subtraction values), with the one-token remoteness for
//! token sliding (on acyclic graphs computed on first need: see the `remoteness_table` module);
//! what a vertex's value is.

use std::sync::Arc;

use super::convention::PlayConvention;
use super::game::Game;
use super::interrupt::{Cancelled, Interrupt};
use super::limits::{AnalysisError, Limits};
use super::remoteness_table::RemotenessTable;
use super::{loopy, order, remoteness, sliding, split};

/// The per-vertex values of a game, ready to evaluate positions. The game is shared
/// ([`Analysis::shared_game`]): whoever else keeps it (the service's graph store) holds the
/// same graph, not a copy.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub(super) game: Arc<Game>,
    pub(super) table: Table,
    /// The one-token remoteness of every vertex ([`remoteness::DRAW`] for draws), computed
    /// on first need on acyclic graphs; `None` for games with split counts.
    pub(super) remoteness: Option<RemotenessTable>,
    /// The one-token remoteness under misère play, computed on first need; `None` for games
    /// with split counts.
    pub(super) misere: Option<RemotenessTable>,
}

/// Per-vertex values, by the method that computed them.
#[derive(Debug, Clone)]
pub(super) enum Table {
    /// Acyclic graph: one finite value per vertex.
    Acyclic(Vec<u64>),
    /// Token sliding on a graph with a cycle: the generalized Sprague-Grundy function.
    Loopy(loopy::LoopyTable),
    /// Addition-Subtraction game (acyclic): values and the method used per vertex.
    Split(split::SplitTable),
}

/// Computes the value of every vertex. CPU-bound: O(V + E) for acyclic token sliding,
/// O((Δ+1)(V + E)) for cyclic graphs (Δ the largest finite value), bounded by `limits`.
///
/// The acyclic path runs first (it is several times cheaper); Kahn's algorithm also detects
/// a cycle, and only then does the generalized labelling run. Never returns
/// [`AnalysisError::Cancelled`]: see [`analyse_interruptible`].
pub fn analyse(game: impl Into<Arc<Game>>, limits: &Limits) -> Result<Analysis, AnalysisError> {
    analyse_interruptible(game, limits, &Interrupt::new())
}

/// [`analyse`], stopping with [`AnalysisError::Cancelled`] soon after `interrupt` is raised:
/// every long loop (the topological order, the mex pass, the stages of the cyclic labelling,
/// the split-count methods) reads the flag every [`super::interrupt::CHECK_INTERVAL`] units of work.
pub fn analyse_interruptible(
    game: impl Into<Arc<Game>>,
    limits: &Limits,
    interrupt: &Interrupt,
) -> Result<Analysis, AnalysisError> {
    let game = game.into();
    interrupt.check()?;
    let (table, remoteness) = match &game.split_counts {
        None => match order::acyclic_order_interruptible(&game.graph, interrupt)? {
            Some(order) => {
                let values = sliding::grundy_table_interruptible(&game.graph, &order, interrupt)?;
                (
                    Table::Acyclic(values),
                    Some(RemotenessTable::deferred(PlayConvention::Normal, false)),
                )
            }
            None => {
                let (table, predecessors) = loopy::generalized_grundy_and_predecessors(
                    &game.graph,
                    limits.cyclic_work_budget,
                    interrupt,
                )?;
                let remoteness = remoteness::cyclic_remoteness_interruptible(
                    &game.graph,
                    &predecessors,
                    PlayConvention::Normal,
                    interrupt,
                )?;
                (
                    Table::Loopy(table),
                    Some(RemotenessTable::ready(remoteness)),
                )
            }
        },
        Some(split_counts) => {
            let order = match order::acyclic_order_interruptible(&game.graph, interrupt)? {
                Some(order) => order,
                None => {
                    let cycle = order::find_cycle(&game.graph)
                        .expect("Kahn's algorithm stalls only on a cycle");
                    return Err(AnalysisError::Cycle { cycle });
                }
            };
            let table = split::split_grundy_table_interruptible(
                &game.graph,
                split_counts,
                &order,
                &limits.split,
                interrupt,
            )?;
            (Table::Split(table), None)
        }
    };
    let misere = remoteness.as_ref().map(|_| {
        RemotenessTable::deferred(PlayConvention::Misere, matches!(table, Table::Loopy(_)))
    });
    Ok(Analysis {
        game,
        table,
        remoteness,
        misere,
    })
}

/// The value of one vertex: a nimber, or `∞(K)` on a cyclic graph (K = the finite values
/// among its followers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VertexValue<'a> {
    /// A nimber.
    Finite(u64),
    /// `∞(K)`.
    Infinite {
        /// `K`, sorted and without repeats.
        finite_followers: &'a [u64],
    },
}

impl Analysis {
    /// The game that was analysed.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The game that was analysed, to keep beside the analysis without copying it.
    pub fn shared_game(&self) -> &Arc<Game> {
        &self.game
    }

    /// Value of every vertex; [`loopy::INFINITE`] marks an infinite vertex.
    pub fn values(&self) -> &[u64] {
        match &self.table {
            Table::Acyclic(values) | Table::Split(split::SplitTable { values, .. }) => values,
            Table::Loopy(table) => table.values(),
        }
    }

    /// The generalized Sprague-Grundy table, when the graph is cyclic.
    pub fn loopy_table(&self) -> Option<&loopy::LoopyTable> {
        match &self.table {
            Table::Acyclic(_) | Table::Split(_) => None,
            Table::Loopy(table) => Some(table),
        }
    }

    /// The value of `vertex`, or None when out of range.
    pub fn vertex_value(&self, vertex: u32) -> Option<VertexValue<'_>> {
        let value = *self.values().get(vertex as usize)?;
        Some(match self.loopy_table() {
            Some(table) if value == loopy::INFINITE => VertexValue::Infinite {
                finite_followers: table.infinite_followers(vertex),
            },
            _ => VertexValue::Finite(value),
        })
    }

    /// True when the graph has a directed cycle (values may be infinite).
    pub fn is_cyclic(&self) -> bool {
        matches!(self.table, Table::Loopy(_))
    }

    /// Bytes held by the graph and the tables (for cache accounting), the one-token
    /// remoteness tables (normal and misère) counted whether or not they are computed yet
    /// (see [`Analysis::prepare_remoteness`]).
    pub fn heap_bytes(&self) -> usize {
        self.game.heap_bytes()
            + match &self.table {
                Table::Acyclic(values) => values.capacity() * 8,
                Table::Split(table) => table.values.capacity() * 8 + table.methods.capacity(),
                Table::Loopy(table) => table.heap_bytes(),
            }
            + [&self.remoteness, &self.misere]
                .iter()
                .filter(|table| table.is_some())
                .map(|_| RemotenessTable::heap_bytes(self.game.graph.vertex_count()))
                .sum::<usize>()
    }

    /// Computes the one-token remoteness table now if it is not yet (stopping with
    /// [`Cancelled`] once `interrupt` is raised), so that the answers
    /// that read it ([`Analysis::remoteness`], [`Analysis::analyse_position`], the fastest
    /// [`Analysis::best_move`]) do not compute it on first use, on the caller's thread and
    /// uninterruptibly. At once when it is computed already or the game has none (split
    /// counts). Concurrent callers compute it once.
    pub fn prepare_remoteness(&self, interrupt: &Interrupt) -> Result<(), Cancelled> {
        match &self.remoteness {
            Some(table) => table
                .get_or_compute(&self.game.graph, interrupt)
                .map(|_| ()),
            None => Ok(()),
        }
    }

    /// Whether the remoteness table is ready to read (or the game has none): then
    /// [`Analysis::prepare_remoteness`] has nothing to do.
    pub fn remoteness_ready(&self) -> bool {
        self.remoteness
            .as_ref()
            .is_none_or(|table| table.get().is_some())
    }

    /// The one-token remoteness table under `convention`, computed first if it is not yet
    /// (stopping with [`Cancelled`] once `interrupt` is raised); `None` for a game with split
    /// counts. [`remoteness::DRAW`] marks draws; under misère play a LOSE vertex has an odd
    /// remoteness and a vertex without followers is a WIN of remoteness 0.
    pub fn remoteness_table_as(
        &self,
        convention: PlayConvention,
        interrupt: &Interrupt,
    ) -> Result<Option<&[u32]>, Cancelled> {
        let table = match convention {
            PlayConvention::Normal => &self.remoteness,
            PlayConvention::Misere => &self.misere,
        };
        match table {
            Some(table) => table.get_or_compute(&self.game.graph, interrupt).map(Some),
            None => Ok(None),
        }
    }

    /// Whether the table of `convention` is ready to read (or the game has none).
    pub fn remoteness_ready_as(&self, convention: PlayConvention) -> bool {
        let table = match convention {
            PlayConvention::Normal => &self.remoteness,
            PlayConvention::Misere => &self.misere,
        };
        table.as_ref().is_none_or(|table| table.get().is_some())
    }

    /// The remoteness table, computed here if it is not yet; `None` for a game with split
    /// counts.
    pub(super) fn remoteness_cells(&self) -> Option<&[u32]> {
        let table = self.remoteness.as_ref()?;
        Some(
            table
                .get_or_compute(&self.game.graph, &Interrupt::new())
                .expect("nothing else holds this interrupt"),
        )
    }

    /// Largest finite value.
    pub fn max_value(&self) -> u64 {
        self.values()
            .iter()
            .copied()
            .filter(|&v| v != loopy::INFINITE)
            .max()
            .unwrap_or(0)
    }
}
