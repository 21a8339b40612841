//! The brute-force oracle of the Addition-Subtraction game (`SplitOracle`): memoized game-tree
//! search over value vectors on an acyclic graph, where every game ends, so every position is
//! WIN or LOSE. Like `oracle.rs`, whose verdicts and illegal moves it shares, it knows only the
//! rules of `docs/games.md`, none of the engine's formulas. Only `std` is used.

use std::collections::HashMap;

use super::oracle::{IllegalMove, Verdict, assert_targets_in_range, multisets};

/// One Addition-Subtraction move: take a unit from `vertex`, add one unit to each entry of
/// `picks` (a non-decreasing multiset of out-neighbours of size `K_vertex`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SplitMove {
    pub vertex: u32,
    pub picks: Vec<u32>,
}

/// Refuses to explore more positions than this in one oracle: a test that asks for more has
/// outgrown "tiny", and should fail loudly instead of running for minutes.
const MAX_SPLIT_POSITIONS: usize = 2_000_000;

/// WIN/LOSE for Addition-Subtraction positions on one acyclic graph with split counts `K_v`.
///
/// A position is the full vector of vertex values. Positions are solved on demand by
/// depth-first game-tree search with an explicit stack (no recursion, so deep games cannot
/// overflow the thread stack), memoized across queries. The game always ends: in a topological
/// order of the vertices, each move lowers one value and raises only values of later vertices,
/// so the value vector decreases lexicographically (a well-founded order), and each position
/// has finitely many moves. Hence there are no draws.
///
/// One rule-level simplification keeps the state space small: the value of a vertex without
/// out-edges (a sink) never enables a move nor changes any move's effect elsewhere, so sinks
/// are set to 0 before positions are memoized. The memo therefore holds canonical positions.
#[derive(Debug, Clone)]
pub struct SplitOracle {
    /// Distinct out-neighbours of each vertex, increasing (repeated edges count once).
    successors: Vec<Vec<u32>>,
    split_counts: Vec<u32>,
    /// Verdicts (WIN or LOSE) of every canonical position solved so far.
    memo: HashMap<Vec<u32>, Verdict>,
}

impl SplitOracle {
    /// An oracle for the game on `adjacency` (vertex `v` has an edge to each entry of
    /// `adjacency[v]`) with `split_counts[v] = K_v`.
    ///
    /// # Panics
    /// If the graph has a cycle (the game might not end), an edge target is off the graph, or
    /// `split_counts` does not have one entry per vertex.
    pub fn new(adjacency: &[Vec<u32>], split_counts: &[u32]) -> Self {
        assert_targets_in_range(adjacency);
        assert_eq!(
            adjacency.len(),
            split_counts.len(),
            "one split count per vertex"
        );
        assert!(
            is_acyclic(adjacency),
            "Addition-Subtraction needs an acyclic graph: {adjacency:?}"
        );
        let successors = adjacency
            .iter()
            .map(|targets| {
                let mut distinct = targets.clone();
                distinct.sort_unstable();
                distinct.dedup();
                distinct
            })
            .collect();
        Self {
            successors,
            split_counts: split_counts.to_vec(),
            memo: HashMap::new(),
        }
    }

    /// Every move of the position `values`, ordered by vertex, then picks. A vertex `v` with a
    /// unit and at least one out-edge gives one move per multiset of `K_v` distinct
    /// out-neighbours (one move, with no picks, when `K_v = 0`).
    pub fn moves(&self, values: &[u32]) -> Vec<SplitMove> {
        self.assert_position(values);
        let mut moves = Vec::new();
        for (vertex, successors) in self.successors.iter().enumerate() {
            if values[vertex] == 0 || successors.is_empty() {
                continue;
            }
            let alphabet = u32::try_from(successors.len()).expect("out-degree fits in u32");
            let vertex = u32::try_from(vertex).expect("vertex index fits in u32");
            let size = self.split_counts[vertex as usize] as usize;
            for choice in multisets(alphabet, size) {
                let picks = choice.iter().map(|&i| successors[i as usize]).collect();
                moves.push(SplitMove { vertex, picks });
            }
        }
        moves
    }

    /// The position after taking a unit from `vertex` and adding one unit to each entry of
    /// `picks` (any order, repeats allowed), if that is a legal move from `values`.
    pub fn apply(
        &self,
        values: &[u32],
        vertex: u32,
        picks: &[u32],
    ) -> Result<Vec<u32>, IllegalMove> {
        self.assert_position(values);
        let Some(successors) = self.successors.get(vertex as usize) else {
            return Err(IllegalMove::VertexOutOfRange { vertex });
        };
        if values[vertex as usize] == 0 {
            return Err(IllegalMove::EmptyVertex { vertex });
        }
        if successors.is_empty() {
            return Err(IllegalMove::NoOutEdge { vertex });
        }
        let split_count = self.split_counts[vertex as usize];
        if picks.len() != split_count as usize {
            return Err(IllegalMove::WrongPickCount {
                vertex,
                picks: picks.len(),
                split_count,
            });
        }
        if let Some(&pick) = picks.iter().find(|pick| !successors.contains(pick)) {
            return Err(IllegalMove::NotASuccessor { vertex, pick });
        }
        let mut after = values.to_vec();
        after[vertex as usize] -= 1;
        for &pick in picks {
            after[pick as usize] = after[pick as usize]
                .checked_add(1)
                .expect("oracle values stay far below u32::MAX");
        }
        Ok(after)
    }

    /// The verdict (WIN or LOSE) of the position `values`, searching as needed.
    ///
    /// # Panics
    /// If `values` does not have one entry per vertex, or the search outgrows
    /// `MAX_SPLIT_POSITIONS` positions.
    pub fn verdict(&mut self, values: &[u32]) -> Verdict {
        self.assert_position(values);
        let root = self.canonical(values.to_vec());
        if let Some(&verdict) = self.memo.get(&root) {
            return verdict;
        }

        let mut stack = vec![self.search_frame(root.clone())];
        while let Some(top) = stack.last_mut() {
            // Scan the successors: one known to be LOSE decides WIN; an unknown one is searched
            // first; if all are known WIN (or there are none), the position is LOSE.
            let mut unknown = None;
            let mut verdict = Verdict::Lose;
            while let Some(successor) = top.successors.get(top.next) {
                match self.memo.get(successor) {
                    Some(Verdict::Lose) => {
                        verdict = Verdict::Win;
                        break;
                    }
                    Some(_) => top.next += 1,
                    None => {
                        unknown = Some(successor.clone());
                        break;
                    }
                }
            }
            if let Some(successor) = unknown {
                let child = self.search_frame(successor);
                stack.push(child);
                continue;
            }
            let done = stack.pop().expect("the loop runs on a non-empty stack");
            self.memo.insert(done.position, verdict);
            assert!(
                self.memo.len() <= MAX_SPLIT_POSITIONS,
                "the Addition-Subtraction game is too large for the brute-force oracle"
            );
        }
        self.memo[&root]
    }

    /// Every position solved so far (canonical form: sinks at 0) with its verdict, sorted.
    pub fn solved_positions(&self) -> Vec<(Vec<u32>, Verdict)> {
        let mut solved: Vec<(Vec<u32>, Verdict)> = self
            .memo
            .iter()
            .map(|(position, &verdict)| (position.clone(), verdict))
            .collect();
        solved.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        solved
    }

    fn search_frame(&self, position: Vec<u32>) -> SearchFrame {
        SearchFrame {
            successors: self.canonical_successors(&position),
            position,
            next: 0,
        }
    }

    /// Distinct canonical positions one move away from the canonical position `values`.
    fn canonical_successors(&self, values: &[u32]) -> Vec<Vec<u32>> {
        let mut successors: Vec<Vec<u32>> = self
            .moves(values)
            .into_iter()
            .map(|SplitMove { vertex, picks }| {
                let after = self
                    .apply(values, vertex, &picks)
                    .expect("moves() lists legal moves");
                self.canonical(after)
            })
            .collect();
        successors.sort_unstable();
        successors.dedup();
        successors
    }

    /// `values` with every sink set to 0 (see the type's documentation for why that is sound).
    fn canonical(&self, mut values: Vec<u32>) -> Vec<u32> {
        for (value, successors) in values.iter_mut().zip(&self.successors) {
            if successors.is_empty() {
                *value = 0;
            }
        }
        values
    }

    fn assert_position(&self, values: &[u32]) {
        assert_eq!(
            values.len(),
            self.successors.len(),
            "a position has one value per vertex"
        );
    }
}

/// A position on the search stack of [`SplitOracle::verdict`]: its distinct canonical
/// successors, and the index of the next one whose verdict is needed.
#[derive(Debug)]
struct SearchFrame {
    position: Vec<u32>,
    successors: Vec<Vec<u32>>,
    next: usize,
}

/// Whether the digraph has no directed cycle (self-loops included), by repeatedly removing
/// vertices without incoming edges (Kahn).
fn is_acyclic(adjacency: &[Vec<u32>]) -> bool {
    let mut in_degree = vec![0usize; adjacency.len()];
    for &target in adjacency.iter().flatten() {
        in_degree[target as usize] += 1;
    }
    let mut ready: Vec<usize> = (0..adjacency.len())
        .filter(|&vertex| in_degree[vertex] == 0)
        .collect();
    let mut removed = 0;
    while let Some(vertex) = ready.pop() {
        removed += 1;
        for &target in &adjacency[vertex] {
            in_degree[target as usize] -= 1;
            if in_degree[target as usize] == 0 {
                ready.push(target as usize);
            }
        }
    }
    removed == adjacency.len()
}
