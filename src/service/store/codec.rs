//! The stored form of a graph: a fixed header, then the CSR arrays, little-endian.
//!
//! ```text
//! magic "GRUNDYG\0" | format u32 = 1 | flags u32 (bit 0: split counts) | vertex_count u32
//! | reserved u32 = 0 | edge_count u64 | out_degrees u32 x V | targets u32 x E
//! | split_counts u32 x V (when flagged)
//! ```
//!
//! Reading checks the header, that the length is exactly what it announces, the graph's own
//! validation (degrees sum to the edge count, targets in range), and finally that the graph's
//! content id is the id it was stored under: a flipped bit anywhere is caught, and an entry
//! that fails is reported, never served.

use std::io::{self, Read, Write};
use std::ops::Range;
use std::sync::Arc;

use crate::engine::{Digraph, Game};
use crate::service::graph_id::graph_id_sync;

use super::backend::{GraphId, StoreError, StoredBytes};

const MAGIC: &[u8; 8] = b"GRUNDYG\0";
/// Bumped when the layout changes; readers refuse formats they do not know.
const FORMAT: u32 = 1;
const HEADER_BYTES: usize = 32;
const FLAG_SPLIT_COUNTS: u32 = 1;

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

/// Decodes and verifies an entry stored under `id` (see the module documentation), reading
/// it straight into the graph's arrays: a loaded graph never sits in memory twice. O(V + E
/// log D) for the id check; call it off the async runtime (it also does the entry's I/O).
pub fn decode_sync(id: &GraphId, stored: StoredBytes) -> Result<Game, StoreError> {
    let corrupt = |reason: String| StoreError::corrupt(id, reason);
    let (len, backend) = (stored.len(), stored.backend());
    let mut reader = Entry {
        reader: stored.into_reader().take(len),
        id,
        backend,
        piece: Vec::new(),
    };
    if len < HEADER_BYTES as u64 {
        return Err(corrupt(format!(
            "{len} bytes, shorter than the {HEADER_BYTES}-byte header"
        )));
    }
    let mut header = [0u8; HEADER_BYTES];
    reader.read_exact(&mut header)?;
    if &header[..8] != MAGIC {
        return Err(corrupt("not a stored grundy graph (bad magic)".into()));
    }
    let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
    let format = word(8);
    if format != FORMAT {
        return Err(corrupt(format!(
            "format {format}, this server reads format {FORMAT}"
        )));
    }
    let flags = word(12);
    if flags & !FLAG_SPLIT_COUNTS != 0 || word(20) != 0 {
        return Err(corrupt(format!("unknown header flags {flags:#x}")));
    }
    let vertex_count = word(16);
    let edge_count = u64::from_le_bytes(header[24..32].try_into().expect("8 bytes"));
    let has_split_counts = flags & FLAG_SPLIT_COUNTS != 0;
    let vertex_words = u64::from(vertex_count) * if has_split_counts { 2 } else { 1 };
    let expected = 4 * (u128::from(vertex_words) + u128::from(edge_count));
    let body = u128::from(len) - HEADER_BYTES as u128;
    // The backend bounded `len` (see `max_encoded_bytes`), so the arrays below are too.
    if body != expected {
        return Err(corrupt(format!(
            "body of {body} bytes, the header announces {expected} ({vertex_count} vertices, \
             {edge_count} edges)"
        )));
    }
    let degrees = reader.words(vertex_count as usize)?;
    let targets = reader.words(edge_count as usize)?;
    let graph = Digraph::from_out_degrees(vertex_count, &degrees, targets)
        .map_err(|e| corrupt(format!("invalid graph: {e}")))?;
    drop(degrees);
    let game = if has_split_counts {
        let split_counts = reader.words(vertex_count as usize)?;
        Game::with_split_counts(graph, split_counts)
            .map_err(|e| corrupt(format!("invalid graph: {e}")))?
    } else {
        Game::token_sliding(graph)
    };
    let actual = graph_id_sync(&game);
    if actual != id.as_str() {
        return Err(corrupt(format!("its content hashes to {actual}")));
    }
    Ok(game)
}

/// An entry being read: its words a piece at a time, with its errors told as the store's.
struct Entry<'a, R> {
    reader: R,
    id: &'a GraphId,
    backend: &'static str,
    piece: Vec<u8>,
}

impl<R: Read> Entry<'_, R> {
    fn read_exact(&mut self, out: &mut [u8]) -> Result<(), StoreError> {
        self.reader.read_exact(out).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                StoreError::corrupt(self.id, "it ends before the length it was stored with")
            } else {
                StoreError::unavailable(self.backend, format!("reading graph {}: {e}", self.id))
            }
        })
    }

    /// The next `count` little-endian words.
    fn words(&mut self, count: usize) -> Result<Vec<u32>, StoreError> {
        let mut words = Vec::with_capacity(count);
        let mut piece = std::mem::take(&mut self.piece);
        while words.len() < count {
            let take = (count - words.len()).min(READ_PIECE_BYTES / 4);
            piece.resize(4 * take, 0);
            self.read_exact(&mut piece)?;
            words.extend(
                piece
                    .chunks_exact(4)
                    .map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes"))),
            );
        }
        self.piece = piece;
        Ok(words)
    }
}

/// Bytes read at a time by [`decode_sync`].
const READ_PIECE_BYTES: usize = 1 << 20;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::service::store::{GraphStore, StoredGraph};

    /// A small cyclic token-sliding graph and a split-count one, with their ids.
    pub(crate) fn sample_games() -> Vec<(GraphId, Game)> {
        let sliding = Game::token_sliding(
            Digraph::from_out_degrees(4, &[2, 0, 1, 1], vec![1, 2, 3, 2]).expect("valid"),
        );
        let split = Game::with_split_counts(
            Digraph::from_edges(3, &[(0, 1), (1, 2), (0, 2)]).expect("valid"),
            vec![1, 2, 3],
        )
        .expect("valid");
        [sliding, split]
            .into_iter()
            .map(|game| {
                let id = GraphId::parse(&graph_id_sync(&game)).expect("a registry id");
                (id, game)
            })
            .collect()
    }

    /// The stored form of `game`, whole.
    pub(crate) fn encode(game: &Game) -> Vec<u8> {
        EncodedGraph::new(Arc::new(game.clone())).to_vec()
    }

    /// `bytes` decoded and verified as the entry of `id`.
    pub(crate) fn decode(id: &GraphId, bytes: &[u8]) -> Result<Game, StoreError> {
        decode_sync(id, StoredBytes::from_vec(bytes.to_vec(), "test"))
    }

    pub(crate) fn same_game(a: &Game, b: &Game) -> bool {
        a.graph() == b.graph() && a.split_counts() == b.split_counts()
    }

    /// Stores `game` through `store`, encoding it on the spot (small test graphs).
    pub(crate) async fn put_game(
        store: &GraphStore,
        id: &GraphId,
        game: &Game,
    ) -> Result<(), StoreError> {
        store.put(id, &Arc::new(game.clone())).await
    }

    /// The game `store` holds under `id`, decoded and verified when it comes as bytes.
    pub(crate) async fn get_game(
        store: &GraphStore,
        id: &GraphId,
    ) -> Result<Option<Game>, StoreError> {
        Ok(match store.get(id).await? {
            None => None,
            Some(StoredGraph::Game(game)) => Some(Game::clone(&game)),
            Some(StoredGraph::Encoded(bytes)) => Some(decode_sync(id, bytes)?),
        })
    }

    #[test]
    fn round_trips_and_checks_every_byte() {
        for (id, game) in sample_games() {
            let encoded = encode(&game);
            assert!(same_game(&decode(&id, &encoded).expect("decodes"), &game));
            // Any single flipped byte is caught by one of the checks.
            for at in 0..encoded.len() {
                let mut damaged = encoded.clone();
                damaged[at] ^= 0x40;
                let error = decode(&id, &damaged).expect_err("damage detected");
                assert!(matches!(error, StoreError::Corrupt { .. }), "byte {at}");
            }
            let truncated = decode(&id, &encoded[..encoded.len() - 1]).unwrap_err();
            assert!(
                truncated.to_string().contains("header announces"),
                "{truncated}"
            );
        }
    }

    #[test]
    fn the_stored_form_is_the_documented_layout() {
        let (_, game) = &sample_games()[0];
        let mut expected = b"GRUNDYG\0".to_vec();
        for word in [1u32, 0, 4, 0] {
            expected.extend_from_slice(&word.to_le_bytes());
        }
        expected.extend_from_slice(&4u64.to_le_bytes());
        for word in [2u32, 0, 1, 1, 1, 2, 3, 2] {
            expected.extend_from_slice(&word.to_le_bytes());
        }
        assert_eq!(encode(game), expected);
    }

    #[test]
    fn pieces_of_any_size_make_up_the_whole() {
        for (_, game) in sample_games() {
            let encoded = EncodedGraph::new(Arc::new(game));
            let whole = encoded.to_vec();
            assert_eq!(whole.len(), encoded.len());
            for piece in 1..=13 {
                let mut joined = Vec::new();
                for start in (0..whole.len()).step_by(piece) {
                    encoded.write_range(start..(start + piece).min(whole.len()), &mut joined);
                }
                assert_eq!(joined, whole, "pieces of {piece} bytes");
            }
            let mut written = Vec::new();
            encoded.write_to(&mut written).expect("writes to memory");
            assert_eq!(written, whole);
        }
    }

    #[test]
    fn an_entry_shorter_than_its_length_is_corrupt() {
        let (id, game) = sample_games().remove(0);
        let encoded = encode(&game);
        let short = encoded[..encoded.len() - 3].to_vec();
        let stored = StoredBytes::new(io::Cursor::new(short), encoded.len() as u64, "test");
        let error = decode_sync(&id, stored).expect_err("refused");
        assert!(matches!(error, StoreError::Corrupt { .. }), "{error}");
        assert!(error.to_string().contains("ends before"), "{error}");
    }

    #[test]
    fn the_largest_entry_fits_the_largest_graph() {
        for (_, game) in sample_games() {
            let graph = game.graph();
            let bound = max_encoded_bytes(graph.vertex_count(), graph.edge_count());
            assert!(encode(&game).len() <= bound);
        }
        assert_eq!(max_encoded_bytes(0, 0), HEADER_BYTES);
        assert_eq!(max_encoded_bytes(u32::MAX, u64::MAX), usize::MAX);
    }

    #[test]
    fn an_entry_under_the_wrong_id_is_refused() {
        let games = sample_games();
        let error = decode(&games[0].0, &encode(&games[1].1)).unwrap_err();
        assert!(error.to_string().contains("hashes to"), "{error}");
    }

    #[test]
    fn ids_must_be_lowercase_hex_sha256() {
        assert!(GraphId::parse(&"a".repeat(64)).is_some());
        assert!(GraphId::parse(&"A".repeat(64)).is_none());
        assert!(GraphId::parse(&"a".repeat(63)).is_none());
        assert!(GraphId::parse("../../etc/passwd").is_none());
    }
}
