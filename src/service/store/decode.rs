//! Reading the stored form of a graph back (see [`super::encode`] for the layout). Reading checks the header, that the length is exactly what it announces, the graph's own
//! validation (degrees sum to the edge count, targets in range), and finally that the graph's
//! content id is the id it was stored under: a flipped bit anywhere is caught, and an entry
//! that fails is reported, never served.

use std::io::{self, Read};

use crate::engine::{Digraph, Game, huge_pages};
use crate::service::graph_id::graph_id_sync;

use super::backend::{GraphId, StoreError, StoredBytes};
use super::encode::{FLAG_SPLIT_COUNTS, FORMAT, HEADER_BYTES, MAGIC};

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
        let mut words = huge_pages::with_capacity(count);
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
    use std::sync::Arc;

    use super::*;
    use crate::service::store::encode::{EncodedGraph, max_encoded_bytes};
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
