//! Wire graphs in: [`game_from_proto`] validates a whole `grundy.v1.Graph`, and
//! [`GraphAssembler`] grows one from the chunks of `PutGraph`, checking each chunk as it comes.

use crate::engine::{Digraph, Game, GraphError, huge_pages};
use crate::proto;
use crate::service::error::ServiceError;

/// Builds the engine's game from a wire graph, validating every field.
pub fn game_from_proto(graph: proto::Graph) -> Result<Game, GraphError> {
    let proto::Graph {
        vertex_count,
        out_degrees,
        targets,
        split_counts,
    } = graph;
    let digraph = Digraph::from_out_degrees(vertex_count, &out_degrees, targets)?;
    if split_counts.is_empty() {
        Ok(Game::token_sliding(digraph))
    } else {
        Game::with_split_counts(digraph, split_counts)
    }
}

/// The chunks of one `PutGraph` stream, appended into one wire graph.
#[derive(Debug, Default)]
pub(crate) struct GraphAssembler {
    graph: proto::Graph,
    chunks: usize,
}

impl GraphAssembler {
    /// Vertex and edge counts including `chunk`, checked for consistency before it is
    /// appended (so that the caller can check its size limits first).
    pub(crate) fn counts_with(&self, chunk: &proto::Graph) -> Result<(u32, u64), ServiceError> {
        let vertex_count = if self.chunks == 0 {
            if chunk.vertex_count == 0 {
                return Err(ServiceError::protocol(
                    "chunk.vertex_count",
                    "chunk.vertex_count: the first chunk must set the vertex count",
                ));
            }
            chunk.vertex_count
        } else {
            if chunk.vertex_count != 0 && chunk.vertex_count != self.graph.vertex_count {
                return Err(ServiceError::protocol(
                    "chunk.vertex_count",
                    format!(
                        "chunk {}: vertex_count {} differs from the first chunk's {}",
                        self.chunks, chunk.vertex_count, self.graph.vertex_count
                    ),
                ));
            }
            self.graph.vertex_count
        };
        let edge_count = (self.graph.targets.len() + chunk.targets.len()) as u64;
        Ok((vertex_count, edge_count))
    }

    /// Appends `chunk` (after [`GraphAssembler::counts_with`] accepted it).
    ///
    /// When the first targets come after every out-degree (as the CLI sends a graph), the
    /// targets get room for their total at once, if it is at most `max_edges` and the
    /// allocator grants it, backed by huge pages for the analysis's random reads: the list is
    /// not grown and copied chunk by chunk. (A total the client's degrees only claim costs
    /// address space, not memory, until targets come.)
    pub(crate) fn append(
        &mut self,
        chunk: &proto::Graph,
        max_edges: u64,
    ) -> Result<(), ServiceError> {
        let (vertex_count, _) = self.counts_with(chunk)?;
        if self.graph.targets.capacity() == 0
            && !chunk.targets.is_empty()
            && self.graph.out_degrees.len() + chunk.out_degrees.len() == vertex_count as usize
        {
            let total: u64 = (self.graph.out_degrees.iter())
                .chain(&chunk.out_degrees)
                .map(|&degree| u64::from(degree))
                .sum();
            if total <= max_edges
                && let Some(targets) = huge_pages::try_with_capacity(total as usize)
            {
                self.graph.targets = targets;
            }
        }
        for (field, total) in [
            (
                "out_degrees",
                self.graph.out_degrees.len() + chunk.out_degrees.len(),
            ),
            (
                "split_counts",
                self.graph.split_counts.len() + chunk.split_counts.len(),
            ),
        ] {
            if total > vertex_count as usize {
                return Err(ServiceError::protocol(
                    format!("chunk.{field}"),
                    format!(
                        "chunk {}: {field} now has {total} entries, more than vertex_count {vertex_count}",
                        self.chunks
                    ),
                ));
            }
        }
        self.graph.vertex_count = vertex_count;
        self.graph.out_degrees.extend_from_slice(&chunk.out_degrees);
        self.graph.targets.extend_from_slice(&chunk.targets);
        self.graph
            .split_counts
            .extend_from_slice(&chunk.split_counts);
        self.chunks += 1;
        Ok(())
    }

    /// The whole graph; an error when no chunk came.
    pub(crate) fn finish(mut self) -> Result<proto::Graph, ServiceError> {
        if self.chunks == 0 {
            return Err(ServiceError::protocol(
                "chunk",
                "PutGraph needs at least one chunk",
            ));
        }
        // Growing by chunks left spare capacity; the cache accounts for capacity.
        self.graph.out_degrees.shrink_to_fit();
        self.graph.targets.shrink_to_fit();
        self.graph.split_counts.shrink_to_fit();
        Ok(self.graph)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(vertex_count: u32, out_degrees: &[u32], targets: &[u32]) -> proto::Graph {
        proto::Graph {
            vertex_count,
            out_degrees: out_degrees.to_vec(),
            targets: targets.to_vec(),
            split_counts: Vec::new(),
        }
    }

    #[test]
    fn targets_get_room_for_the_degrees_total_once_every_degree_is_in() {
        let mut assembler = GraphAssembler::default();
        assembler.append(&chunk(4, &[2, 0], &[]), 100).unwrap();
        assembler.append(&chunk(0, &[1, 3], &[]), 100).unwrap();
        assembler.append(&chunk(0, &[], &[1, 2]), 100).unwrap();
        assert_eq!(assembler.graph.targets.capacity(), 6);
        assembler
            .append(&chunk(0, &[], &[3, 0, 1, 2]), 100)
            .unwrap();
        let graph = assembler.finish().unwrap();
        assert_eq!(graph.targets, vec![1, 2, 3, 0, 1, 2]);
        assert_eq!(graph.out_degrees, vec![2, 0, 1, 3]);
        assert!(game_from_proto(graph).is_ok());
    }

    #[test]
    fn targets_get_no_room_over_the_edge_limit_nor_before_the_last_degree() {
        let mut assembler = GraphAssembler::default();
        assembler
            .append(&chunk(2, &[u32::MAX, 7], &[1]), 1000)
            .unwrap();
        assert!(assembler.graph.targets.capacity() < 1000);
        // Targets before the last degree: grown as they come.
        let mut assembler = GraphAssembler::default();
        assembler.append(&chunk(3, &[500], &[2]), 1000).unwrap();
        assert!(assembler.graph.targets.capacity() < 500);
    }
}
