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
    writer.u32(graph.vertex_count());
    for vertex in 0..graph.vertex_count() {
        writer.u32(graph.out_degree(vertex));
    }
    let mut neighbours: Vec<u32> = Vec::new();
    for vertex in 0..graph.vertex_count() {
        neighbours.clear();
        neighbours.extend_from_slice(graph.successors(vertex));
        neighbours.sort_unstable();
        for &target in &neighbours {
            writer.u32(target);
        }
    }
    match game.split_counts() {
        None => writer.bytes(&[0]),
        Some(split_counts) => {
            writer.bytes(&[1]);
            for &k in split_counts {
                writer.u32(k);
            }
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

    fn u32(&mut self, value: u32) {
        self.bytes(&value.to_le_bytes());
    }

    fn finish(mut self) -> impl std::fmt::LowerHex {
        self.hasher.update(&self.buffer);
        self.hasher.finalize()
    }
}
