//! Wire graphs in: [`game_from_proto`] validates a whole `grundy.v1.Graph`, and
//! [`GraphAssembler`] grows one from the chunks of `PutGraph`, checking each chunk as it comes;
//! [`WireGraph`] is either, on its way to the engine.

use crate::engine::{CheckedTargets, Digraph, Game, GraphError};
use crate::proto;
use crate::service::error::ServiceError;

/// Builds the engine's game from a wire graph, validating every field. Its targets are
/// `targets` followed by `fixed_targets` (a graph normally sets one of the two), numbered
/// together in errors.
pub fn game_from_proto(graph: proto::Graph) -> Result<Game, GraphError> {
    let proto::Graph {
        vertex_count,
        out_degrees,
        targets,
        split_counts,
        fixed_targets,
    } = graph;
    let targets = joined(targets, fixed_targets);
    let digraph = Digraph::from_out_degrees(vertex_count, &out_degrees, targets)?;
    if split_counts.is_empty() {
        Ok(Game::token_sliding(digraph))
    } else {
        Game::with_split_counts(digraph, split_counts)
    }
}

/// `first` then `second`, moved rather than copied when one is empty.
fn joined(mut first: Vec<u32>, second: Vec<u32>) -> Vec<u32> {
    if first.is_empty() {
        return second;
    }
    first.extend_from_slice(&second);
    first
}

/// The number of targets a wire graph (or chunk) carries, in either field.
pub(crate) fn target_count(graph: &proto::Graph) -> usize {
    graph.targets.len() + graph.fixed_targets.len()
}

/// A graph on its way to the engine: whole as a stream's start sent it, or assembled from the
/// chunks of `PutGraph`.
#[derive(Debug)]
pub(crate) enum WireGraph {
    /// A `grundy.v1.Graph`, checked whole by [`game_from_proto`].
    Whole(proto::Graph),
    /// Chunks put together, their targets checked as they came.
    Assembled(AssembledGraph),
}

impl WireGraph {
    /// The vertex count the graph declares.
    pub(crate) fn vertex_count(&self) -> u32 {
        match self {
            Self::Whole(graph) => graph.vertex_count,
            Self::Assembled(graph) => graph.targets.vertex_count(),
        }
    }

    /// The targets it carries.
    pub(crate) fn target_count(&self) -> usize {
        match self {
            Self::Whole(graph) => target_count(graph),
            Self::Assembled(graph) => graph.targets.len(),
        }
    }

    /// The words that making its game and its id still reads: its vertices (or out-degrees,
    /// if more) and its split counts, and its targets unless they were both checked and
    /// `hashed` already as they came (an assembled graph's always were checked).
    pub(crate) fn words(&self, hashed: bool) -> usize {
        let (out_degrees, split_counts, targets_read) = match self {
            Self::Whole(graph) => (graph.out_degrees.len(), graph.split_counts.len(), true),
            Self::Assembled(graph) => (graph.out_degrees.len(), graph.split_counts.len(), !hashed),
        };
        let targets = if targets_read { self.target_count() } else { 0 };
        (self.vertex_count() as usize).max(out_degrees) + targets + split_counts
    }

    /// The engine's game, every field checked (an assembled graph's targets already were).
    pub(crate) fn into_game(self) -> Result<Game, GraphError> {
        match self {
            Self::Whole(graph) => game_from_proto(graph),
            Self::Assembled(graph) => graph.into_game(),
        }
    }
}

/// The chunks of a `PutGraph` stream put together (see [`GraphAssembler`]).
#[derive(Debug)]
pub(crate) struct AssembledGraph {
    out_degrees: Vec<u32>,
    targets: CheckedTargets,
    split_counts: Vec<u32>,
}

impl AssembledGraph {
    fn into_game(self) -> Result<Game, GraphError> {
        let digraph = Digraph::from_checked_targets(&self.out_degrees, self.targets)?;
        if self.split_counts.is_empty() {
            Ok(Game::token_sliding(digraph))
        } else {
            Game::with_split_counts(digraph, self.split_counts)
        }
    }
}

/// Targets reserved at most per list entry a `PutGraph` stream has sent, when its out-degrees
/// claim more: a graph of average out-degree up to this gets its room at once, and larger
/// ones grow from there.
const RESERVE_PER_ENTRY: u64 = 16;

/// The chunks of one `PutGraph` stream, appended into one graph. Each chunk's targets are
/// checked against the vertex count as they are appended, while the chunk is in cache, so
/// that the whole graph needs no pass over its targets once the last chunk is in.
#[derive(Debug, Default)]
pub(crate) struct GraphAssembler {
    out_degrees: Vec<u32>,
    /// The targets so far, with the first chunk's vertex count (0 before it).
    targets: CheckedTargets,
    split_counts: Vec<u32>,
    chunks: usize,
    /// The sum of the out-degrees appended so far (added up chunk by chunk, so that no chunk
    /// costs a pass over the whole graph's degrees).
    degree_total: u64,
}

impl GraphAssembler {
    /// Vertex and edge counts including `chunk`, checked for consistency before it is
    /// appended (so that the caller can check its size limits first). The edge count is the
    /// larger of the targets received and the edges the out-degrees declare: a graph that
    /// declares more edges than a limit is refused at its degrees, before its targets come.
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
            let first = self.targets.vertex_count();
            if chunk.vertex_count != 0 && chunk.vertex_count != first {
                return Err(ServiceError::protocol(
                    "chunk.vertex_count",
                    format!(
                        "chunk {}: vertex_count {} differs from the first chunk's {}",
                        self.chunks, chunk.vertex_count, first
                    ),
                ));
            }
            first
        };
        let received = (self.targets.len() + target_count(chunk)) as u64;
        let declared = chunk.out_degrees.iter().map(|&d| u64::from(d)).sum::<u64>();
        Ok((vertex_count, received.max(self.degree_total + declared)))
    }

    /// Appends `chunk` (after [`GraphAssembler::counts_with`] accepted it); a target that
    /// names no vertex is refused here, numbered among all the targets so far. The targets'
    /// room is advised for huge pages before it is filled (see
    /// [`GraphAssembler::reserve_targets`]).
    pub(crate) fn append(&mut self, chunk: &proto::Graph) -> Result<(), ServiceError> {
        let (vertex_count, _) = self.counts_with(chunk)?;
        for (field, total) in [
            (
                "out_degrees",
                self.out_degrees.len() + chunk.out_degrees.len(),
            ),
            (
                "split_counts",
                self.split_counts.len() + chunk.split_counts.len(),
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
        if self.chunks == 0 {
            // The vertex count, kept by the targets it checks from now on.
            self.targets = CheckedTargets::with_capacity(vertex_count, 0);
        }
        self.out_degrees.extend_from_slice(&chunk.out_degrees);
        self.degree_total += chunk
            .out_degrees
            .iter()
            .map(|&degree| u64::from(degree))
            .sum::<u64>();
        self.reserve_targets(chunk);
        self.targets.append(&chunk.targets)?;
        self.targets.append(&chunk.fixed_targets)?;
        self.split_counts.extend_from_slice(&chunk.split_counts);
        self.chunks += 1;
        Ok(())
    }

    /// When `chunk` brings the first targets after every out-degree is in (as the CLI sends a
    /// graph), reserves room for the degrees' total at once, so that the list is not moved as
    /// it grows (a move splits the huge pages already filled). What the degrees claim is
    /// believed up to [`RESERVE_PER_ENTRY`] targets per list entry received: a client cannot
    /// reserve much more than it sent. Called after `chunk`'s out-degrees are appended.
    fn reserve_targets(&mut self, chunk: &proto::Graph) {
        let degrees = self.out_degrees.len();
        if self.targets.capacity() != 0
            || target_count(chunk) == 0
            || degrees != self.targets.vertex_count() as usize
        {
            return;
        }
        let received = (degrees + target_count(chunk)) as u64;
        let room = self
            .degree_total
            .min(received.saturating_mul(RESERVE_PER_ENTRY));
        self.targets = CheckedTargets::with_capacity(self.targets.vertex_count(), room as usize);
    }

    /// The whole graph; an error when no chunk came.
    pub(crate) fn finish(mut self) -> Result<WireGraph, ServiceError> {
        if self.chunks == 0 {
            return Err(ServiceError::protocol(
                "chunk",
                "PutGraph needs at least one chunk",
            ));
        }
        // Growing by chunks left spare capacity; the cache accounts for capacity.
        self.out_degrees.shrink_to_fit();
        self.targets.shrink_to_fit();
        self.split_counts.shrink_to_fit();
        Ok(WireGraph::Assembled(AssembledGraph {
            out_degrees: self.out_degrees,
            targets: self.targets,
            split_counts: self.split_counts,
        }))
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
            fixed_targets: Vec::new(),
        }
    }

    /// `chunk` with its targets sent as `fixed_targets`.
    fn fixed_chunk(vertex_count: u32, out_degrees: &[u32], targets: &[u32]) -> proto::Graph {
        proto::Graph {
            fixed_targets: targets.to_vec(),
            ..chunk(vertex_count, out_degrees, &[])
        }
    }

    #[test]
    fn fixed_width_targets_are_targets() {
        let varint = game_from_proto(chunk(3, &[2, 0, 1], &[1, 2, 0])).unwrap();
        let fixed = game_from_proto(fixed_chunk(3, &[2, 0, 1], &[1, 2, 0])).unwrap();
        assert_eq!(fixed.graph(), varint.graph());
        // Both fields: `targets` first, then `fixed_targets`, numbered together in errors.
        let both = proto::Graph {
            targets: vec![1],
            ..fixed_chunk(3, &[2, 0, 1], &[2, 0])
        };
        assert_eq!(game_from_proto(both).unwrap().graph(), varint.graph());
        let out_of_range = proto::Graph {
            targets: vec![1],
            ..fixed_chunk(3, &[2, 0, 1], &[2, 3])
        };
        assert_eq!(
            game_from_proto(out_of_range).unwrap_err(),
            GraphError::TargetOutOfRange {
                index: 2,
                target: 3,
                vertex_count: 3
            }
        );
        // Chunks of an upload may each use either field.
        let mut assembler = GraphAssembler::default();
        assembler.append(&chunk(3, &[2, 0, 1], &[])).unwrap();
        assembler.append(&fixed_chunk(0, &[], &[1])).unwrap();
        assert_eq!(
            assembler
                .counts_with(&fixed_chunk(0, &[], &[2, 0]))
                .unwrap(),
            (3, 3)
        );
        assembler.append(&fixed_chunk(0, &[], &[2, 0])).unwrap();
        let graph = assembler.finish().unwrap();
        assert_eq!(graph.into_game().unwrap().graph(), varint.graph());
    }

    #[test]
    fn a_chunk_with_a_target_out_of_range_is_refused_with_its_index_among_all_targets() {
        let mut assembler = GraphAssembler::default();
        assembler.append(&chunk(3, &[2, 0, 1], &[1])).unwrap();
        let error = assembler.append(&fixed_chunk(0, &[], &[2, 3])).unwrap_err();
        assert!(
            matches!(
                error,
                ServiceError::Graph(GraphError::TargetOutOfRange {
                    index: 2,
                    target: 3,
                    vertex_count: 3
                })
            ),
            "{error:?}"
        );
    }

    #[test]
    fn chunks_make_up_the_graph_and_room_is_bounded_by_what_was_sent() {
        let mut assembler = GraphAssembler::default();
        assembler.append(&chunk(4, &[2, 0], &[])).unwrap();
        assembler.append(&chunk(0, &[1, 3], &[1, 2])).unwrap();
        assembler.append(&chunk(0, &[], &[3, 0, 1, 2])).unwrap();
        let game = assembler.finish().unwrap().into_game().unwrap();
        assert_eq!(game.graph().targets(), [1, 2, 3, 0, 1, 2]);
        assert_eq!(game.graph().offsets(), [0, 2, 2, 3, 6]);
        // Room for the degrees' total once they are all in...
        let mut assembler = GraphAssembler::default();
        assembler.append(&chunk(3, &[5, 0], &[])).unwrap();
        assembler.append(&chunk(0, &[2], &[0])).unwrap();
        assert_eq!(assembler.targets.capacity(), 7);
        // ... but degrees claiming 5 * 10^8 targets, with one target sent, reserve 32.
        let mut assembler = GraphAssembler::default();
        assembler.append(&chunk(1, &[500_000_000], &[0])).unwrap();
        assert_eq!(assembler.targets.capacity() as u64, 2 * RESERVE_PER_ENTRY);
    }
}
