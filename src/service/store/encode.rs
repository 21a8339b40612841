//! The stored form of a graph: a fixed header, then the CSR arrays, little-endian; and its
//! writer, which produces it a piece at a time. [`super::decode`] reads it back.
//!
//! ```text
//! magic "GRUNDYG\0" | format u32 = 1 | flags u32 (bit 0: split counts) | vertex_count u32
//! | reserved u32 = 0 | edge_count u64 | out_degrees u32 x V | targets u32 x E
//! | split_counts u32 x V (when flagged)
//! ```

use std::io::{self, Write};
use std::ops::Range;
use std::sync::Arc;

use crate::engine::Game;

pub(super) const MAGIC: &[u8; 8] = b"GRUNDYG\0";
/// Bumped when the layout changes; readers refuse formats they do not know.
pub(super) const FORMAT: u32 = 1;
pub(super) const HEADER_BYTES: usize = 32;
pub(super) const FLAG_SPLIT_COUNTS: u32 = 1;

/// The stored form of a game, produced a piece at a time: a backend writes a big graph in
/// pieces of its own size, and the server never holds a second copy of it (an encoded copy
/// beside the analysis doubled its memory). O(V + E) to write whole; cheap to clone.
#[derive(Debug, Clone)]
pub struct EncodedGraph {
    game: Arc<Game>,
    header: [u8; HEADER_BYTES],
}

impl EncodedGraph {
    /// The stored form of `game`.
    pub fn new(game: Arc<Game>) -> Self {
        let graph = game.graph();
        let flags = if game.split_counts().is_some() {
            FLAG_SPLIT_COUNTS
        } else {
            0
        };
        let mut header = [0u8; HEADER_BYTES];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&FORMAT.to_le_bytes());
        header[12..16].copy_from_slice(&flags.to_le_bytes());
        header[16..20].copy_from_slice(&graph.vertex_count().to_le_bytes());
        // 20..24: reserved, zero.
        header[24..32].copy_from_slice(&graph.edge_count().to_le_bytes());
        Self { game, header }
    }

    /// Bytes of the whole stored form.
    pub fn len(&self) -> usize {
        let graph = self.game.graph();
        let words = graph.vertex_count() as usize
            + graph.targets().len()
            + self.game.split_counts().map_or(0, <[u32]>::len);
        HEADER_BYTES + 4 * words
    }

    /// Whether the stored form is empty (never: it has a header).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Appends the bytes `range` of the stored form to `out` (`range` within `0..len()`).
    pub fn write_range(&self, range: Range<usize>, out: &mut Vec<u8>) {
        let graph = self.game.graph();
        let (offsets, targets) = (graph.offsets(), graph.targets());
        let split_counts = self.game.split_counts().unwrap_or(&[]);
        out.reserve(range.len());
        let mut start = 0;
        let mut section = |bytes: usize, write: &mut dyn FnMut(Range<usize>, &mut Vec<u8>)| {
            let end = start + bytes;
            let (from, to) = (range.start.max(start), range.end.min(end));
            if from < to {
                write(from - start..to - start, out);
            }
            start = end;
        };
        section(HEADER_BYTES, &mut |part, out| {
            out.extend_from_slice(&self.header[part]);
        });
        section(4 * (offsets.len() - 1), &mut |part, out| {
            extend_words(out, part, |v| offsets[v + 1] - offsets[v]);
        });
        section(4 * targets.len(), &mut |part, out| {
            extend_words(out, part, |e| targets[e]);
        });
        section(4 * split_counts.len(), &mut |part, out| {
            extend_words(out, part, |v| split_counts[v]);
        });
    }

    /// Writes the whole stored form to `out`, a piece at a time.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let len = self.len();
        let mut piece = Vec::with_capacity(WRITE_PIECE_BYTES.min(len));
        for start in (0..len).step_by(WRITE_PIECE_BYTES) {
            piece.clear();
            self.write_range(start..(start + WRITE_PIECE_BYTES).min(len), &mut piece);
            out.write_all(&piece)?;
        }
        Ok(())
    }

    /// The whole stored form in one buffer (small graphs, tests).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_range(0..self.len(), &mut out);
        out
    }
}

/// Bytes per piece of [`EncodedGraph::write_to`].
const WRITE_PIECE_BYTES: usize = 1 << 20;

/// Appends the bytes `bytes` of an array of little-endian words, word `i` being `word(i)`.
fn extend_words(out: &mut Vec<u8>, bytes: Range<usize>, word: impl Fn(usize) -> u32) {
    let part = |out: &mut Vec<u8>, w: usize, from: usize, to: usize| {
        out.extend_from_slice(&word(w).to_le_bytes()[from..to]);
    };
    let (first_whole, end_whole) = (bytes.start.div_ceil(4), bytes.end / 4);
    if first_whole > end_whole {
        // Inside one word.
        let w = bytes.start / 4;
        part(out, w, bytes.start - 4 * w, bytes.end - 4 * w);
        return;
    }
    if !bytes.start.is_multiple_of(4) {
        part(out, bytes.start / 4, bytes.start % 4, 4);
    }
    for w in first_whole..end_whole {
        out.extend_from_slice(&word(w).to_le_bytes());
    }
    if !bytes.end.is_multiple_of(4) {
        part(out, end_whole, 0, bytes.end % 4);
    }
}

/// The largest stored form of a graph within `max_vertices` and `max_edges` (split counts
/// included): what a backend may read for one entry. Anything longer announced by an entry
/// (a Redis manifest, a file's size) is corrupt, and is refused before it is allocated.
pub fn max_encoded_bytes(max_vertices: u32, max_edges: u64) -> usize {
    let words = 2 * u128::from(max_vertices) + u128::from(max_edges);
    usize::try_from(HEADER_BYTES as u128 + 4 * words).unwrap_or(usize::MAX)
}
