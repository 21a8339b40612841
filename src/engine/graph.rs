//! The directed graph in compressed sparse row (CSR) form, built and validated from untrusted
//! input.

use std::fmt;

pub use super::graph_error::GraphError;
use super::targets::{CheckedTargets, first_out_of_range};

/// Largest edge count a [`Digraph`] holds: offsets are `u32` to keep the CSR arrays small.
pub const MAX_EDGES: u64 = u32::MAX as u64;

/// A directed graph on vertices `0..vertex_count`, out-edges stored contiguously.
///
/// Invariants (checked by the constructors): `offsets.len() == vertex_count + 1`,
/// `offsets` is non-decreasing from 0 to `targets.len()`, every target `< vertex_count`.
#[derive(Clone, PartialEq, Eq)]
pub struct Digraph {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl fmt::Debug for Digraph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Digraph")
            .field("vertex_count", &self.vertex_count())
            .field("edge_count", &self.edge_count())
            .finish()
    }
}

impl Digraph {
    /// Builds a graph from out-degrees and the concatenated out-neighbour lists (the wire
    /// form of `grundy.v1.Graph`).
    pub fn from_out_degrees(
        vertex_count: u32,
        out_degrees: &[u32],
        targets: Vec<u32>,
    ) -> Result<Self, GraphError> {
        check_counts(vertex_count, out_degrees, targets.len())?;
        if let Some(index) = first_out_of_range(vertex_count, &targets) {
            return Err(GraphError::TargetOutOfRange {
                index,
                target: targets[index],
                vertex_count,
            });
        }
        Ok(Self::with_offsets(out_degrees, targets))
    }

    /// [`Digraph::from_out_degrees`] of targets checked as they came: only the counts are
    /// checked here, the targets are not read again.
    pub fn from_checked_targets(
        out_degrees: &[u32],
        targets: CheckedTargets,
    ) -> Result<Self, GraphError> {
        check_counts(targets.vertex_count(), out_degrees, targets.len())?;
        Ok(Self::with_offsets(out_degrees, targets.into_vec()))
    }

    /// The graph of `targets` (whose counts and range are checked) cut by `out_degrees`.
    fn with_offsets(out_degrees: &[u32], targets: Vec<u32>) -> Self {
        let mut offsets = super::huge_pages::with_capacity(out_degrees.len() + 1);
        let mut running = 0u32;
        offsets.push(0);
        for &degree in out_degrees {
            running += degree; // cannot overflow: their total was checked against MAX_EDGES
            offsets.push(running);
        }
        Self { offsets, targets }
    }

    /// Builds a graph from an edge list `(from, to)`; edges keep their input order within
    /// each vertex. `edges[i]` is reported as `edges[i]` in errors.
    pub fn from_edges(vertex_count: u32, edges: &[(u32, u32)]) -> Result<Self, GraphError> {
        if vertex_count == 0 {
            return Err(GraphError::NoVertices);
        }
        if edges.len() as u64 > MAX_EDGES {
            return Err(GraphError::TooManyEdges {
                edges: edges.len() as u64,
                limit: MAX_EDGES,
            });
        }
        let n = vertex_count as usize;
        let mut offsets = vec![0u32; n + 1];
        for (index, &(from, to)) in edges.iter().enumerate() {
            for endpoint in [from, to] {
                if endpoint >= vertex_count {
                    return Err(GraphError::TargetOutOfRange {
                        index,
                        target: endpoint,
                        vertex_count,
                    });
                }
            }
            offsets[from as usize + 1] += 1;
        }
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        let mut cursor: Vec<u32> = offsets[..n].to_vec();
        let mut targets = vec![0u32; edges.len()];
        for &(from, to) in edges {
            let slot = &mut cursor[from as usize];
            targets[*slot as usize] = to;
            *slot += 1;
        }
        Ok(Self { offsets, targets })
    }

    /// Number of vertices.
    #[inline]
    pub fn vertex_count(&self) -> u32 {
        (self.offsets.len() - 1) as u32
    }

    /// Number of edges, multi-edges counted with multiplicity.
    #[inline]
    pub fn edge_count(&self) -> u64 {
        self.targets.len() as u64
    }

    /// Out-neighbours of `vertex`, in input order (duplicates kept).
    #[inline]
    pub fn successors(&self, vertex: u32) -> &[u32] {
        let v = vertex as usize;
        &self.targets[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// Out-degree of `vertex`, multi-edges counted with multiplicity.
    #[inline]
    pub fn out_degree(&self, vertex: u32) -> u32 {
        let v = vertex as usize;
        self.offsets[v + 1] - self.offsets[v]
    }

    /// Largest out-degree (0 for a graph without edges).
    pub fn max_out_degree(&self) -> u32 {
        self.offsets
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0)
    }

    /// The CSR offsets: `offsets[v]..offsets[v + 1]` indexes `targets()` for vertex v.
    #[inline]
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// All targets, vertex 0's out-neighbours first.
    #[inline]
    pub fn targets(&self) -> &[u32] {
        &self.targets
    }

    /// The CSR arrays `(offsets, targets)`, handed over without a copy.
    pub fn into_parts(self) -> (Vec<u32>, Vec<u32>) {
        (self.offsets, self.targets)
    }

    /// Bytes held by the CSR arrays.
    pub fn heap_bytes(&self) -> usize {
        (self.offsets.capacity() + self.targets.capacity()) * std::mem::size_of::<u32>()
    }
}

/// Checks the lengths of a wire graph's arrays: a vertex at least, an out-degree per vertex,
/// at most [`MAX_EDGES`] edges, and as many targets as the out-degrees add up to.
fn check_counts(vertex_count: u32, out_degrees: &[u32], targets: usize) -> Result<(), GraphError> {
    if vertex_count == 0 {
        return Err(GraphError::NoVertices);
    }
    if out_degrees.len() != vertex_count as usize {
        return Err(GraphError::DegreeCount {
            got: out_degrees.len(),
            expected: vertex_count as usize,
        });
    }
    let total: u64 = out_degrees.iter().map(|&d| u64::from(d)).sum();
    if total > MAX_EDGES {
        return Err(GraphError::TooManyEdges {
            edges: total,
            limit: MAX_EDGES,
        });
    }
    if targets as u64 != total {
        return Err(GraphError::TargetCount {
            got: targets,
            expected: total,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_csr_from_degrees() {
        let g = Digraph::from_out_degrees(4, &[2, 0, 1, 0], vec![1, 2, 3]).unwrap();
        assert_eq!(g.successors(0), &[1, 2]);
        assert_eq!(g.successors(1), &[] as &[u32]);
        assert_eq!(g.successors(2), &[3]);
        assert_eq!(g.edge_count(), 3);
        assert_eq!(g.max_out_degree(), 2);
    }

    #[test]
    fn rejects_inconsistent_input() {
        assert_eq!(
            Digraph::from_out_degrees(0, &[], vec![]),
            Err(GraphError::NoVertices)
        );
        assert_eq!(
            Digraph::from_out_degrees(2, &[1], vec![0]),
            Err(GraphError::DegreeCount {
                got: 1,
                expected: 2
            })
        );
        assert_eq!(
            Digraph::from_out_degrees(2, &[1, 1], vec![0]),
            Err(GraphError::TargetCount {
                got: 1,
                expected: 2
            })
        );
        assert_eq!(
            Digraph::from_out_degrees(2, &[1, 1], vec![0, 2]),
            Err(GraphError::TargetOutOfRange {
                index: 1,
                target: 2,
                vertex_count: 2
            })
        );
        assert!(matches!(
            Digraph::from_out_degrees(2, &[u32::MAX, 1], vec![]),
            Err(GraphError::TooManyEdges { .. })
        ));
    }

    #[test]
    fn builds_csr_from_edges_in_input_order() {
        let g = Digraph::from_edges(3, &[(2, 0), (0, 2), (0, 1), (2, 1)]).unwrap();
        assert_eq!(g.successors(0), &[2, 1]);
        assert_eq!(g.successors(2), &[0, 1]);
        assert_eq!(
            Digraph::from_edges(3, &[(0, 1), (1, 3)]),
            Err(GraphError::TargetOutOfRange {
                index: 1,
                target: 3,
                vertex_count: 3
            })
        );
    }
}
