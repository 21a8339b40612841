//! Content-addressed graph ids: the SHA-256 of a canonical encoding of the game, so that the
//! same graph gets the same id on every replica and after every restart.

use sha2::{Digest, Sha256};

use crate::engine::Game;
use crate::wire::le_bytes;

mod sort;

use sort::{sort_list, sort_lists_into};

/// Domain separator and version of the canonical encoding: a new encoding gets a new tag.
const CANONICAL_TAG: &[u8] = b"grundy.v1.Graph/1\0";

/// The content-addressed id of a game: lowercase hex SHA-256 of its canonical encoding.
///
/// The encoding (all integers little-endian): the tag, `vertex_count` (u32), each vertex's
/// out-degree (u32), then each vertex's out-neighbours sorted increasingly (u32 each,
/// multi-edges repeated), then `0u8` for token sliding or `1u8` and each split count (u32).
/// Out-neighbour lists are sorted because their order changes no value or verdict, so the
/// same graph gets the same id however its lists were ordered. O(V + E log Δ), blocking the
/// thread: call it off the async runtime for big graphs. (An upload is hashed as it arrives
/// instead, chunk by chunk, with the same result.)
pub fn graph_id_sync(game: &Game) -> String {
    let graph = game.graph();
    let mut hasher = IdHasher::new(graph.vertex_count());
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
        hasher.degrees(&degrees);
    }
    hasher.targets(graph.targets());
    hasher
        .finish(game.split_counts())
        .expect("a game's lists are as long as its out-degrees say")
}

/// The id of a graph hashed as it arrives in pieces (the chunks of `PutGraph`, hashed while
/// the next ones are received): its out-degrees first, all of them, then its targets in
/// order, cut anywhere; the split counts, which end the encoding, at [`IdHasher::finish`].
/// Pieces in another order (a target before every degree is known, a degree after a
/// target) make it give up: `finish` then says `None`, and the id is computed from the whole
/// graph with [`graph_id_sync`]. It never validates: an id of pieces that make no valid
/// graph is not used, as the graph is refused.
pub(crate) struct IdHasher {
    writer: HashWriter,
    vertex_count: u32,
    /// How many out-degrees came.
    degree_count: usize,
    /// The out-degrees that are not zero, in vertex order: the lengths of the lists the
    /// targets come in. An empty list adds nothing to the encoding, and a walk over the
    /// vertices would make a chunk of a few targets cost time in proportion to the isolated
    /// vertices before them.
    lists: Vec<u32>,
    /// The index in `lists` of the list that comes next.
    next_list: usize,
    /// The targets of that list that came already, when a piece ended inside it.
    pending: Vec<u32>,
    /// Sorted lists on their way to the hash: a run of them, or one longer than a run.
    scratch: Vec<u32>,
    gave_up: bool,
}

impl IdHasher {
    /// A hasher of a graph of `vertex_count` vertices.
    pub(crate) fn new(vertex_count: u32) -> Self {
        let mut writer = HashWriter::default();
        writer.bytes(CANONICAL_TAG);
        writer.u32s(&[vertex_count]);
        Self {
            writer,
            vertex_count,
            degree_count: 0,
            lists: Vec::new(),
            next_list: 0,
            pending: Vec::new(),
            scratch: Vec::new(),
            gave_up: false,
        }
    }

    /// Targets held of a list not yet complete (sorted and hashed with the piece that ends
    /// it).
    pub(crate) fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// The next out-degrees, in vertex order. Targets are hashed only once every degree came
    /// (see [`IdHasher::targets`]), so a degree after them is one too many.
    pub(crate) fn degrees(&mut self, degrees: &[u32]) {
        if self.gave_up || degrees.is_empty() {
            return;
        }
        if self.degree_count + degrees.len() > self.vertex_count as usize {
            self.gave_up = true;
            return;
        }
        self.writer.u32s(degrees);
        self.degree_count += degrees.len();
        self.lists
            .extend(degrees.iter().copied().filter(|&degree| degree != 0));
    }

    /// The next targets, in order (after every out-degree): see [`IdHasher::whole_lists`] and
    /// [`IdHasher::collect`].
    pub(crate) fn targets(&mut self, mut targets: &[u32]) {
        if self.gave_up || targets.is_empty() {
            return;
        }
        if self.degree_count != self.vertex_count as usize {
            self.gave_up = true;
            return;
        }
        while !targets.is_empty() && !self.gave_up {
            targets = if self.pending.is_empty() {
                self.whole_lists(targets)
            } else {
                self.collect(targets)
            };
        }
    }

    /// Hashes the lists that lie whole at the start of `targets`: a run of them sorted into
    /// the scratch buffer and hashed from there, or one list longer than a run (see
    /// [`IdHasher::list`]). The start of a list the slice's end cuts is collected. Returns
    /// what is left of `targets`.
    fn whole_lists<'t>(&mut self, targets: &'t [u32]) -> &'t [u32] {
        let lengths = &self.lists[self.next_list..];
        let (lists, len) = run_of_lists(lengths, targets.len().min(SORT_RUN));
        if lists == lengths.len() && len < targets.len() {
            // More targets than the degrees add up to.
            self.gave_up = true;
            return &[];
        }
        if lists > 0 {
            let (run, rest) = targets.split_at(len);
            self.scratch.resize(len, 0);
            sort_lists_into(run, &lengths[..lists], &mut self.scratch);
            self.writer.u32s(&self.scratch);
            self.next_list += lists;
            return rest;
        }
        // The next list is longer than a run, or than what is left of the slice.
        let length = lengths[0] as usize;
        if length > targets.len() {
            return self.collect(targets);
        }
        let (list, rest) = targets.split_at(length);
        self.list(list);
        self.next_list += 1;
        rest
    }

    /// Collects the next list's targets from `targets`; once it is complete, sorts it where
    /// it was collected (no second copy of a long list) and hashes it. Returns what is left
    /// of `targets`.
    fn collect<'t>(&mut self, targets: &'t [u32]) -> &'t [u32] {
        let missing = self.lists[self.next_list] as usize - self.pending.len();
        if missing > targets.len() {
            self.pending.extend_from_slice(targets);
            return &[];
        }
        let (end_of_list, rest) = targets.split_at(missing);
        self.pending.extend_from_slice(end_of_list);
        sort_list(&mut self.pending);
        self.writer.u32s(&self.pending);
        self.pending = Vec::new();
        self.next_list += 1;
        rest
    }

    /// Hashes one whole out-neighbour list, sorted.
    fn list(&mut self, list: &[u32]) {
        // Lists already in order (as many generators and exporters write them) are hashed
        // in place; the others are copied and sorted.
        if list.is_sorted() {
            self.writer.u32s(list);
        } else {
            self.scratch.clear();
            self.scratch.extend_from_slice(list);
            sort_list(&mut self.scratch);
            self.writer.u32s(&self.scratch);
        }
    }

    /// Whether the pieces were a graph's degrees and then its targets, in order and complete:
    /// [`IdHasher::finish`] then reads nothing more of them.
    pub(crate) fn is_whole(&self) -> bool {
        !self.gave_up
            && self.degree_count == self.vertex_count as usize
            && self.pending.is_empty()
            && self.next_list == self.lists.len()
    }

    /// The id, given the split counts (`None` for token sliding); `None` if the pieces were
    /// not a graph's degrees and then its targets, in order and complete.
    pub(crate) fn finish(mut self, split_counts: Option<&[u32]>) -> Option<String> {
        if !self.is_whole() {
            return None;
        }
        match split_counts {
            None => self.writer.bytes(&[0]),
            Some(split_counts) => {
                self.writer.bytes(&[1]);
                self.writer.u32s(split_counts);
            }
        }
        Some(format!("{:x}", self.writer.finish()))
    }
}

/// How many of the lists whose lengths `lengths` gives fit whole in `room` targets (up to the
/// first that does not), and how many targets they take.
fn run_of_lists(lengths: &[u32], room: usize) -> (usize, usize) {
    let mut lists = 0;
    let mut len = 0;
    for &length in lengths {
        if len + length as usize > room {
            break;
        }
        len += length as usize;
        lists += 1;
    }
    (lists, len)
}

/// Whole lists are sorted and hashed in runs of up to this many targets (64 KiB, which stay
/// in the core's cache between the sort and the hash).
const SORT_RUN: usize = HashWriter::CHUNK / 4;

/// Feeds SHA-256: short pieces (the vertex count, a list collected in pieces) through a 64 KiB
/// buffer instead of an `update` each; long ones (a run of sorted lists) where they are.
#[derive(Default)]
struct HashWriter {
    hasher: Sha256,
    buffer: Vec<u8>,
}

impl HashWriter {
    const CHUNK: usize = 1 << 16;

    /// Buffers short pieces; a long piece (from a quarter of the buffer) or one that would
    /// fill the buffer goes to SHA-256 where it is, after what was buffered.
    fn bytes(&mut self, bytes: &[u8]) {
        if bytes.len() < Self::CHUNK / 4 && self.buffer.len() + bytes.len() < Self::CHUNK {
            self.buffer.extend_from_slice(bytes);
            return;
        }
        if !self.buffer.is_empty() {
            self.hasher.update(&self.buffer);
            self.buffer.clear();
        }
        self.hasher.update(bytes);
    }

    /// Each of `values` as four little-endian bytes.
    fn u32s(&mut self, values: &[u32]) {
        self.bytes(&le_bytes(values));
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
        let mut rng = crate::generate::Rng::new(seed);
        let mut next = move || rng.next_u64();
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
        let cases = [
            (1, 0, 1),
            (5, 12, 2),
            (3000, 40_000, 3),
            (70_000, 9, 4),
            // Lists longer than a sorting run, and one longer than two.
            (3, 50_000, 5),
            (1, 40_000, 6),
        ];
        for (vertices, edges, seed) in cases {
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

    /// The degrees and targets of `game` cut into pieces of the sizes `cuts` gives in turn.
    fn hashed_in_pieces(game: &Game, cuts: &[usize]) -> Option<String> {
        let graph = game.graph();
        let degrees: Vec<u32> = (0..graph.vertex_count())
            .map(|v| graph.out_degree(v))
            .collect();
        let mut hasher = IdHasher::new(graph.vertex_count());
        let mut sizes = cuts.iter().cycle().map(|&cut| cut.max(1));
        for list in [&degrees[..], graph.targets()] {
            let mut rest = list;
            while !rest.is_empty() {
                let (piece, after) = rest.split_at(sizes.next().unwrap().min(rest.len()));
                if std::ptr::eq(list, &degrees[..]) {
                    hasher.degrees(piece);
                } else {
                    hasher.targets(piece);
                }
                rest = after;
            }
        }
        hasher.finish(game.split_counts())
    }

    proptest::proptest! {
        #[test]
        fn an_id_hashed_in_pieces_is_the_id_of_the_whole(
            vertices in 1u32..60,
            edges in 0usize..400,
            seed in 1u64..u64::MAX,
            cuts in proptest::collection::vec(1usize..50, 1..8),
            split in proptest::bool::ANY,
        ) {
            let graph = Digraph::from_edges(vertices, &random_edges(vertices, edges, seed)).unwrap();
            let game = if split {
                Game::with_split_counts(graph, (0..vertices).map(|v| v % 5).collect()).unwrap()
            } else {
                Game::token_sliding(graph)
            };
            proptest::prop_assert_eq!(hashed_in_pieces(&game, &cuts), Some(spelled_out(&game)));
        }
    }

    /// A graph of 40 vertices whose lists are one short of a sorting run, a run, one over
    /// it, three runs (in order, then the same out of order), and random short lists.
    fn long_lists() -> Game {
        let mut rng = crate::generate::Rng::new(8);
        let mut next = move || (rng.next_u64() % 40) as u32;
        let long = [
            SORT_RUN - 1,
            SORT_RUN,
            SORT_RUN + 1,
            3 * SORT_RUN,
            3 * SORT_RUN,
        ];
        let mut degrees = Vec::new();
        let mut targets = Vec::new();
        for vertex in 0..40 {
            let degree = long.get(vertex / 7).filter(|_| vertex % 7 == 3).copied();
            let mut list: Vec<u32> = (0..degree.unwrap_or(vertex % 13)).map(|_| next()).collect();
            if vertex == 24 {
                list.sort_unstable();
            }
            degrees.push(list.len() as u32);
            targets.extend(list);
        }
        Game::token_sliding(Digraph::from_out_degrees(40, &degrees, targets).unwrap())
    }

    #[test]
    fn long_lists_hashed_whole_or_in_pieces_give_the_documented_id() {
        let game = long_lists();
        assert_eq!(graph_id_sync(&game), spelled_out(&game));
        // Cut inside runs and lists, across them, and in pieces of one run.
        for cuts in [
            &[5_000][..],
            &[SORT_RUN - 1, SORT_RUN + 1],
            &[3, 40_000],
            &[SORT_RUN],
        ] {
            assert_eq!(
                hashed_in_pieces(&game, cuts),
                Some(spelled_out(&game)),
                "{cuts:?}"
            );
        }
    }

    #[test]
    fn pieces_out_of_order_give_no_id() {
        let graph = Digraph::from_edges(3, &[(0, 1), (1, 2), (0, 2)]).unwrap();
        // Targets before every degree is known.
        let mut hasher = IdHasher::new(3);
        hasher.degrees(&[2, 1]);
        hasher.targets(&[1, 2]);
        hasher.degrees(&[0]);
        hasher.targets(&[2]);
        assert_eq!(hasher.finish(None), None);
        // A degree after the targets.
        let mut hasher = IdHasher::new(3);
        hasher.degrees(&[2, 1, 0]);
        hasher.targets(&[2, 1, 2]);
        hasher.degrees(&[0]);
        assert_eq!(hasher.finish(None), None);
        // Too few targets, or too many.
        for targets in [&[1, 2][..], &[1, 2, 2, 0]] {
            let mut hasher = IdHasher::new(3);
            hasher.degrees(&[2, 1, 0]);
            hasher.targets(targets);
            assert_eq!(hasher.finish(None), None, "{targets:?}");
        }
        let mut hasher = IdHasher::new(3);
        hasher.degrees(&[2, 1, 0]);
        hasher.targets(&[2, 1, 2]);
        assert_eq!(
            hasher.finish(None),
            Some(graph_id_sync(&Game::token_sliding(graph)))
        );
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
