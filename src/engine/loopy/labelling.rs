//! The staged labelling of a cyclic graph: the predecessor lists, the stages that give every
//! vertex its value or `∞`, and the `K` sets of the infinite vertices.

use super::{CyclicWorkExceeded, INFINITE, LoopyStop, NO_COUNTER};
use crate::engine::graph::Digraph;
use crate::engine::interrupt::{CHECK_INTERVAL, Cancelled, Poller};

/// The edges into each vertex, in CSR form: one source per edge, so multi-edges repeat.
pub(in crate::engine) struct Predecessors {
    offsets: Vec<u32>,
    sources: Vec<u32>,
}

impl Predecessors {
    /// Counting sort of the edges by target: O(V + E).
    pub(in crate::engine) fn of(
        graph: &Digraph,
        poller: &mut Poller<'_>,
    ) -> Result<Self, Cancelled> {
        let n = graph.vertex_count() as usize;
        let mut offsets = vec![0u32; n + 1];
        for chunk in graph.targets().chunks(CHECK_INTERVAL as usize) {
            for &target in chunk {
                offsets[target as usize + 1] += 1;
            }
            poller.tick(CHECK_INTERVAL)?;
        }
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        let mut cursor = offsets[..n].to_vec();
        let mut sources = vec![0u32; graph.targets().len()];
        for source in 0..graph.vertex_count() {
            let successors = graph.successors(source);
            for &target in successors {
                let slot = &mut cursor[target as usize];
                sources[*slot as usize] = source;
                *slot += 1;
            }
            poller.tick(successors.len() as u64 + 1)?;
        }
        Ok(Self { offsets, sources })
    }

    /// The source of every edge into `v` (repeated for multi-edges).
    pub(in crate::engine) fn of_vertex(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.sources[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }
}

/// The outcome of the staged labelling.
pub(super) struct Labelling {
    pub(super) values: Vec<u64>,
    pub(super) counters: Vec<u32>,
    /// Finite vertices in labelling order, hence in non-decreasing value.
    pub(super) order: Vec<u32>,
}

/// Runs the stages of [`super::generalized_grundy`].
///
/// Within stage `i` a vertex is *active* while it is not finite (unlabelled, or infinite from an
/// earlier stage) and *answered* once it has a follower labelled `i`. `unanswered[u]` counts the
/// out-edges of an unlabelled `u` to active vertices not yet answered; `u` is labelled `i` when
/// it reaches zero: then `u` is not answered itself, since the edge to a follower labelled `i`
/// stays counted (that follower was active, and a labelled vertex is never answered). Nor can it
/// become answered later: that follower would have to be active and unanswered, keeping the
/// count above zero. So the labelling order within a stage does not change the values.
pub(super) fn label_vertices(
    graph: &Digraph,
    predecessors: &Predecessors,
    work_budget: u64,
    poller: &mut Poller<'_>,
) -> Result<Labelling, LoopyStop> {
    let n = graph.vertex_count() as usize;
    let mut values = vec![INFINITE; n];
    let mut counters = vec![NO_COUNTER; n];
    let mut order = Vec::new();
    let mut unlabelled: Vec<u32> = (0..graph.vertex_count()).collect();
    let mut is_unlabelled = vec![true; n];
    let mut unanswered = vec![0u32; n];
    // `answered_in[v] == stage + 1` once v is answered in `stage`: stamps need no clearing.
    // The stage count stays far below u32::MAX: a value Δ needs followers valued 0..Δ-1, each of
    // which needs as many out-edges, so Δ(Δ + 1) / 2 <= E <= u32::MAX.
    let mut answered_in = vec![0u32; n];
    let mut ready = Vec::new();
    let mut stage = 0u32;
    let mut work = 0u64;
    let check_budget = |work: u64, stage: u32, labelled: usize| {
        if work <= work_budget {
            return Ok(());
        }
        Err(CyclicWorkExceeded {
            stage: u64::from(stage),
            labelled: labelled as u32,
            vertex_count: graph.vertex_count(),
            work,
            budget: work_budget,
        })
    };
    while !unlabelled.is_empty() {
        let stamp = stage + 1;
        for &u in &unlabelled {
            let successors = graph.successors(u);
            work += successors.len() as u64;
            // In stage 0 nothing is finite yet: every follower is active, and the count is
            // the out-degree, without reading the followers.
            let active = if stage == 0 {
                successors.len()
            } else {
                successors
                    .iter()
                    .filter(|&&w| values[w as usize] == INFINITE)
                    .count()
            };
            // At most the out-degree, which fits in u32 like every CSR offset.
            unanswered[u as usize] = active as u32;
            if active == 0 {
                ready.push(u);
            }
            poller.tick(successors.len() as u64 + 1)?;
        }
        check_budget(work, stage, order.len())?;
        while let Some(u) = ready.pop() {
            debug_assert_ne!(
                answered_in[u as usize], stamp,
                "a ready vertex got answered"
            );
            values[u as usize] = u64::from(stage);
            counters[u as usize] = order.len() as u32;
            order.push(u);
            is_unlabelled[u as usize] = false;
            let answering = predecessors.of_vertex(u);
            work += answering.len() as u64;
            poller.tick(answering.len() as u64 + 1)?;
            for &p in answering {
                if values[p as usize] != INFINITE || answered_in[p as usize] == stamp {
                    continue;
                }
                answered_in[p as usize] = stamp;
                let waiting = predecessors.of_vertex(p);
                work += waiting.len() as u64;
                poller.tick(waiting.len() as u64)?;
                for &q in waiting {
                    if !is_unlabelled[q as usize] {
                        continue;
                    }
                    let count = &mut unanswered[q as usize];
                    *count -= 1;
                    if *count == 0 {
                        ready.push(q);
                    }
                }
            }
        }
        // Labelled vertices leave; unanswered ones become infinite (their value stays INFINITE).
        unlabelled.retain(|&u| {
            let u = u as usize;
            if is_unlabelled[u] && answered_in[u] != stamp {
                is_unlabelled[u] = false;
            }
            is_unlabelled[u]
        });
        check_budget(work, stage, order.len())?;
        stage += 1;
    }
    Ok(Labelling {
        values,
        counters,
        order,
    })
}

/// The `K` sets of the infinite vertices as CSR `(offsets, values)`, sorted and without
/// repeats, in O(V + E): visiting the finite vertices in labelling order (non-decreasing value)
/// and appending each value to its infinite predecessors builds sorted lists, in which a repeat
/// can only be a copy of the last entry. One pass counts, the second fills.
pub(super) fn infinite_follower_sets(
    values: &[u64],
    order: &[u32],
    predecessors: &Predecessors,
    poller: &mut Poller<'_>,
) -> Result<(Vec<u32>, Vec<u64>), Cancelled> {
    let n = values.len();
    let mut offsets = vec![0u32; n + 1];
    let mut last_counted = vec![INFINITE; n];
    for &w in order {
        let value = values[w as usize];
        poller.tick(predecessors.of_vertex(w).len() as u64 + 1)?;
        for &p in predecessors.of_vertex(w) {
            let p = p as usize;
            if values[p] == INFINITE && last_counted[p] != value {
                last_counted[p] = value;
                offsets[p + 1] += 1;
            }
        }
    }
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    let mut cursor = offsets[..n].to_vec();
    let mut follower_values = vec![0u64; offsets[n] as usize];
    for &w in order {
        let value = values[w as usize];
        poller.tick(predecessors.of_vertex(w).len() as u64 + 1)?;
        for &p in predecessors.of_vertex(w) {
            let p = p as usize;
            if values[p] != INFINITE {
                continue;
            }
            let end = cursor[p] as usize;
            if end == offsets[p] as usize || follower_values[end - 1] != value {
                follower_values[end] = value;
                cursor[p] += 1;
            }
        }
    }
    Ok((offsets, follower_values))
}
