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

use crate::engine::{Digraph, Game};
use crate::service::graph_id::graph_id_sync;

use super::backend::{GraphId, StoreError};

const MAGIC: &[u8; 8] = b"GRUNDYG\0";
/// Bumped when the layout changes; readers refuse formats they do not know.
const FORMAT: u32 = 1;
const HEADER_BYTES: usize = 32;
const FLAG_SPLIT_COUNTS: u32 = 1;

/// Encodes `game` in the stored form. O(V + E); call it off the async runtime for big graphs.
pub fn encode_sync(game: &Game) -> Vec<u8> {
    let graph = game.graph();
    let vertices = graph.vertex_count() as usize;
    let split_counts = game.split_counts();
    let words = vertices + graph.targets().len() + split_counts.map_or(0, <[u32]>::len);
    let mut out = Vec::with_capacity(HEADER_BYTES + 4 * words);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    let flags = if split_counts.is_some() {
        FLAG_SPLIT_COUNTS
    } else {
        0
    };
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&graph.vertex_count().to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&graph.edge_count().to_le_bytes());
    for pair in graph.offsets().windows(2) {
        out.extend_from_slice(&(pair[1] - pair[0]).to_le_bytes());
    }
    extend_words(&mut out, graph.targets());
    if let Some(split_counts) = split_counts {
        extend_words(&mut out, split_counts);
    }
    out
}

/// The largest stored form of a graph within `max_vertices` and `max_edges` (split counts
/// included): what a backend may read for one entry. Anything longer announced by an entry
/// (a Redis manifest, a file's size) is corrupt, and is refused before it is allocated.
pub fn max_encoded_bytes(max_vertices: u32, max_edges: u64) -> usize {
    let words = 2 * u128::from(max_vertices) + u128::from(max_edges);
    usize::try_from(HEADER_BYTES as u128 + 4 * words).unwrap_or(usize::MAX)
}

fn extend_words(out: &mut Vec<u8>, words: &[u32]) {
    for word in words {
        out.extend_from_slice(&word.to_le_bytes());
    }
}

/// Decodes and verifies an entry stored under `id` (see the module documentation). O(V + E
/// log D) for the id check; call it off the async runtime.
pub fn decode_sync(id: &GraphId, bytes: &[u8]) -> Result<Game, StoreError> {
    let corrupt = |reason: String| StoreError::corrupt(id, reason);
    if bytes.len() < HEADER_BYTES {
        return Err(corrupt(format!(
            "{} bytes, shorter than the {HEADER_BYTES}-byte header",
            bytes.len()
        )));
    }
    let (header, body) = bytes.split_at(HEADER_BYTES);
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
    if body.len() as u128 != expected {
        return Err(corrupt(format!(
            "body of {} bytes, the header announces {expected} ({vertex_count} vertices, \
             {edge_count} edges)",
            body.len()
        )));
    }
    let (degree_bytes, rest) = body.split_at(4 * vertex_count as usize);
    let (target_bytes, split_bytes) = rest.split_at(4 * edge_count as usize);
    let graph = Digraph::from_out_degrees(vertex_count, &words(degree_bytes), words(target_bytes))
        .map_err(|e| corrupt(format!("invalid graph: {e}")))?;
    let game = if has_split_counts {
        Game::with_split_counts(graph, words(split_bytes))
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

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes")))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

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

    pub(crate) fn same_game(a: &Game, b: &Game) -> bool {
        a.graph() == b.graph() && a.split_counts() == b.split_counts()
    }

    /// Stores `game` through `store`, encoding it on the spot (small test graphs).
    pub(crate) async fn put_game(
        store: &GraphStore,
        id: &GraphId,
        game: &Game,
    ) -> Result<(), StoreError> {
        let encode = |game: Arc<Game>| async move { Ok(encode_sync(&game)) };
        store.put(id, &Arc::new(game.clone()), encode).await
    }

    /// The game `store` holds under `id`, decoded and verified when it comes as bytes.
    pub(crate) async fn get_game(
        store: &GraphStore,
        id: &GraphId,
    ) -> Result<Option<Game>, StoreError> {
        Ok(match store.get(id).await? {
            None => None,
            Some(StoredGraph::Game(game)) => Some(Game::clone(&game)),
            Some(StoredGraph::Encoded(bytes)) => Some(decode_sync(id, &bytes)?),
        })
    }

    #[test]
    fn round_trips_and_checks_every_byte() {
        for (id, game) in sample_games() {
            let encoded = encode_sync(&game);
            assert!(same_game(
                &decode_sync(&id, &encoded).expect("decodes"),
                &game
            ));
            // Any single flipped byte is caught by one of the checks.
            for at in 0..encoded.len() {
                let mut damaged = encoded.clone();
                damaged[at] ^= 0x40;
                let error = decode_sync(&id, &damaged).expect_err("damage detected");
                assert!(matches!(error, StoreError::Corrupt { .. }), "byte {at}");
            }
            let truncated = decode_sync(&id, &encoded[..encoded.len() - 1]).unwrap_err();
            assert!(
                truncated.to_string().contains("header announces"),
                "{truncated}"
            );
        }
    }

    #[test]
    fn the_largest_entry_fits_the_largest_graph() {
        for (_, game) in sample_games() {
            let graph = game.graph();
            let bound = max_encoded_bytes(graph.vertex_count(), graph.edge_count());
            assert!(encode_sync(&game).len() <= bound);
        }
        assert_eq!(max_encoded_bytes(0, 0), HEADER_BYTES);
        assert_eq!(max_encoded_bytes(u32::MAX, u64::MAX), usize::MAX);
    }

    #[test]
    fn an_entry_under_the_wrong_id_is_refused() {
        let games = sample_games();
        let error = decode_sync(&games[0].0, &encode_sync(&games[1].1)).unwrap_err();
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
