//! A graph too large for one message, uploaded with `PutGraph` in chunks: first the
//! out-degrees, then the targets, then the split counts, each list cut into pieces that stay
//! under the message limit. The targets go as `fixed_targets` (four bytes each, written and
//! read as a copy: a large graph's vertex numbers take three or four bytes as varints anyway).
//! The chunks are built one at a time as the stream sends them, so the upload holds no second
//! copy of the graph.

use std::sync::Arc;

use tonic::Status;

use super::GrundyClient;
use crate::proto::{self, PutGraphRequest};
use crate::wire::size;

/// Uploads `graph` to `client` with `PutGraph`, in chunks of at most `chunk_bytes` encoded
/// each; returns its id.
pub async fn put_graph(
    client: &mut GrundyClient,
    graph: Arc<proto::Graph>,
    chunk_bytes: usize,
) -> Result<String, Status> {
    let chunks = Chunks::new(graph, chunk_bytes);
    let response = client.put_graph(tokio_stream::iter(chunks)).await?;
    Ok(response.into_inner().graph_id)
}

/// The lists a graph's chunks come from, in order.
const LISTS: usize = 4;

/// The chunks of a graph, in order.
struct Chunks {
    graph: Arc<proto::Graph>,
    /// Elements per chunk of a varint list.
    elements: usize,
    /// Targets per chunk.
    fixed_elements: usize,
    /// Which list the next chunk comes from (0: out-degrees, 1: targets, 2: fixed targets,
    /// 3: split counts).
    list: usize,
    /// Where in that list it starts.
    offset: usize,
    /// No chunk sent yet: the next one carries `vertex_count` even if every list is empty.
    first: bool,
}

impl Chunks {
    fn new(graph: Arc<proto::Graph>, chunk_bytes: usize) -> Self {
        let room = chunk_bytes.saturating_sub(size::PUT_GRAPH_CHUNK_FRAME);
        Self {
            graph,
            elements: (room / size::MAX_U32_VARINT).max(1),
            fixed_elements: (room / 4).max(1),
            list: 0,
            offset: 0,
            first: true,
        }
    }

    fn list(&self, list: usize) -> &[u32] {
        match list {
            0 => &self.graph.out_degrees,
            1 => &self.graph.targets,
            2 => &self.graph.fixed_targets,
            _ => &self.graph.split_counts,
        }
    }
}

impl Iterator for Chunks {
    type Item = PutGraphRequest;

    fn next(&mut self) -> Option<PutGraphRequest> {
        while self.list < LISTS && self.offset >= self.list(self.list).len() {
            self.list += 1;
            self.offset = 0;
        }
        if self.list == LISTS && !self.first {
            return None;
        }
        let mut chunk = proto::Graph {
            vertex_count: self.graph.vertex_count,
            ..proto::Graph::default()
        };
        self.first = false;
        if self.list < LISTS {
            let list = self.list(self.list);
            let elements = match self.list {
                1 | 2 => self.fixed_elements,
                _ => self.elements,
            };
            let end = (self.offset + elements).min(list.len());
            let piece = list[self.offset..end].to_vec();
            match self.list {
                0 => chunk.out_degrees = piece,
                1 | 2 => chunk.fixed_targets = piece,
                _ => chunk.split_counts = piece,
            }
            self.offset = end;
        }
        Some(PutGraphRequest { chunk: Some(chunk) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn chunks_concatenate_to_the_graph_and_stay_under_the_limit() {
        let graph = proto::Graph {
            vertex_count: 1000,
            out_degrees: (0..1000).map(|v| v % 7).collect(),
            targets: (0..2991).map(|e| (e * 37 + 5) % 1000).collect(),
            split_counts: vec![1; 1000],
            fixed_targets: Vec::new(),
        };
        let chunk_bytes = 256;
        let chunks: Vec<PutGraphRequest> =
            Chunks::new(Arc::new(graph.clone()), chunk_bytes).collect();
        assert!(chunks.len() > 3);
        let mut joined = proto::Graph::default();
        for request in &chunks {
            assert!(
                request.encoded_len() <= chunk_bytes,
                "{}",
                request.encoded_len()
            );
            let chunk = request.chunk.as_ref().unwrap();
            assert_eq!(chunk.vertex_count, 1000);
            joined.vertex_count = chunk.vertex_count;
            joined.out_degrees.extend_from_slice(&chunk.out_degrees);
            assert!(chunk.targets.is_empty(), "targets go as fixed_targets");
            joined.targets.extend_from_slice(&chunk.fixed_targets);
            joined.split_counts.extend_from_slice(&chunk.split_counts);
        }
        assert_eq!(joined, graph);
    }

    #[test]
    fn a_graph_without_edges_is_still_one_chunk() {
        let graph = proto::Graph {
            vertex_count: 3,
            out_degrees: vec![],
            ..proto::Graph::default()
        };
        let chunks: Vec<PutGraphRequest> = Chunks::new(Arc::new(graph), 100).collect();
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].chunk.as_ref().unwrap().vertex_count, 3);
    }
}
