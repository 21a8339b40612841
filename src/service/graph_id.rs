//! Content-addressed graph ids: the SHA-256 of a canonical encoding of the game, so that the
//! same graph gets the same id on every replica and after every restart.

use sha2::{Digest, Sha256};

use crate::engine::Game;

/// Domain separator and version of the canonical encoding: a new encoding gets a new tag.
const CANONICAL_TAG: &[u8] = b"grundy.v1.Graph/1\0";

/// The content-addressed id of a game: lowercase hex SHA-256 of its canonical encoding.
///
/// The encoding (all integers little-endian): the tag, `vertex_count` (u32), each vertex's
/// out-degree (u32), then each vertex's out-neighbours sorted increasingly (u32 each,
/// multi-edges repeated), then `0u8` for token sliding or `1u8` and each split count (u32).
/// Out-neighbour lists are sorted because their order changes no value or verdict, so the
/// same graph gets the same id however its lists were ordered. O(V + E log Δ), blocking the
/// thread: call it off the async runtime for big graphs.
pub fn graph_id_sync(game: &Game) -> String {
    let graph = game.graph();
    let mut writer = HashWriter::default();
    writer.bytes(CANONICAL_TAG);
    writer.u32s(&[graph.vertex_count()]);
    let offsets = graph.offsets();
    let mut degrees = Vec::with_capacity(HashWriter::CHUNK / 4);
    let vertices = graph.vertex_count() as usize;
    for start in (0..vertices).step_by(HashWriter::CHUNK / 4) {
        let end = (start + HashWriter::CHUNK / 4).min(vertices);
        degrees.clear();
        degrees.extend(
            offsets[start..=end]
                .windows(2)
                .map(|pair| pair[1] - pair[0]),
        );
        writer.u32s(&degrees);
    }
    // Lists already in order (as many generators and exporters write them) are hashed in
    // place; only the others are copied and sorted.
    let mut neighbours: Vec<u32> = Vec::new();
    for vertex in 0..graph.vertex_count() {
        let successors = graph.successors(vertex);
        if successors.is_sorted() {
            writer.u32s(successors);
        } else {
            neighbours.clear();
            neighbours.extend_from_slice(successors);
            neighbours.sort_unstable();
            writer.u32s(&neighbours);
        }
    }
    match game.split_counts() {
        None => writer.bytes(&[0]),
        Some(split_counts) => {
            writer.bytes(&[1]);
            writer.u32s(split_counts);
        }
    }
    format!("{:x}", writer.finish())
}

/// Feeds SHA-256 through a buffer: one `update` per 64 KiB instead of one per integer.
#[derive(Default)]
struct HashWriter {
    hasher: Sha256,
    buffer: Vec<u8>,
}

impl HashWriter {
    const CHUNK: usize = 1 << 16;

    fn bytes(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= Self::CHUNK {
            self.hasher.update(&self.buffer);
            self.buffer.clear();
        }
    }

    /// Each of `values` as four little-endian bytes, converted a buffer at a time (a loop
    /// the compiler turns into a copy on little-endian machines).
    fn u32s(&mut self, values: &[u32]) {
        for chunk in values.chunks(Self::CHUNK / 4) {
            let start = self.buffer.len();
            self.buffer.resize(start + 4 * chunk.len(), 0);
            for (bytes, value) in self.buffer[start..].chunks_exact_mut(4).zip(chunk) {
                bytes.copy_from_slice(&value.to_le_bytes());
            }
            if self.buffer.len() >= Self::CHUNK {
                self.hasher.update(&self.buffer);
                self.buffer.clear();
            }
        }
    }

    fn finish(mut self) -> impl std::fmt::LowerHex {
        self.hasher.update(&self.buffer);
        self.hasher.finalize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Digraph;

    /// The canonical encoding as its documentation states it, one integer at a time.
    fn spelled_out(game: &Game) -> String {
        let graph = game.graph();
        let mut bytes = CANONICAL_TAG.to_vec();
        bytes.extend(graph.vertex_count().to_le_bytes());
        for vertex in 0..graph.vertex_count() {
            bytes.extend(graph.out_degree(vertex).to_le_bytes());
        }
        for vertex in 0..graph.vertex_count() {
            let mut successors = graph.successors(vertex).to_vec();
            successors.sort();
            for target in successors {
                bytes.extend(target.to_le_bytes());
            }
        }
        match game.split_counts() {
            None => bytes.push(0),
            Some(counts) => {
                bytes.push(1);
                for &k in counts {
                    bytes.extend(k.to_le_bytes());
                }
            }
        }
        format!("{:x}", Sha256::digest(&bytes))
    }

    fn random_edges(vertices: u32, edges: usize, seed: u64) -> Vec<(u32, u32)> {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..edges)
            .map(|_| {
                let from = (next() % u64::from(vertices)) as u32;
                (from, (next() % u64::from(vertices)) as u32)
            })
            .collect()
    }

    #[test]
    fn ids_are_the_sha256_of_the_documented_encoding() {
        // Sizes crossing the writer's 64 KiB buffer, lists in and out of order, multi-edges,
        // self-loops, split counts.
        for (vertices, edges, seed) in [(1, 0, 1), (5, 12, 2), (3000, 40_000, 3), (70_000, 9, 4)] {
            let graph =
                Digraph::from_edges(vertices, &random_edges(vertices, edges, seed)).unwrap();
            let split = (0..vertices).map(|v| v % 7).collect();
            for game in [
                Game::token_sliding(graph.clone()),
                Game::with_split_counts(graph, split).unwrap(),
            ] {
                assert_eq!(
                    graph_id_sync(&game),
                    spelled_out(&game),
                    "{vertices} {edges}"
                );
            }
        }
    }

    #[test]
    fn the_id_of_a_graph_does_not_change_between_releases() {
        // Ids are kept by stores and by clients: this one was computed when the encoding was
        // defined, and must stay.
        let graph = Digraph::from_edges(4, &[(0, 2), (0, 1), (2, 3)]).unwrap();
        assert_eq!(
            graph_id_sync(&Game::token_sliding(graph)),
            "d5893d553c1ae88d2e3598878aa49b0e7ec37c30c191531575647ee1872dbe7a"
        );
    }
}
