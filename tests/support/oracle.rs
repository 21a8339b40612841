//! A brute-force oracle for the games of `docs/games.md`, independent of the engine's theory.
//!
//! The engine evaluates positions with Sprague-Grundy values, the generalized SG function `γ`
//! on cyclic graphs, and split-count formulas. A mistake in one of those formulas would be
//! invisible to tests derived from the same formulas, so this module uses none of them: it only
//! knows the rules (which moves exist) and the definition of normal play (the player who cannot
//! move loses), and solves explicit positions by search.
//!
//! - Token sliding ([`SlidingOracle`]): retrograde analysis over the state graph of token
//!   multisets of each size. Every position is WIN, LOSE or DRAW, cycles included.
//! - Addition-Subtraction ([`SplitOracle`]): memoized game-tree search over value vectors on an
//!   acyclic graph, where every game ends, so every position is WIN or LOSE.
//!
//! Both are exponential in the size of the game and meant for graphs of a handful of vertices.
//! Only `std` is used.

use std::collections::{HashMap, HashSet};

/// The outcome of a position for the player to move, under normal play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The player to move can force a win in finitely many moves.
    Win,
    /// The opponent can force a win in finitely many moves, whatever the player to move does.
    Lose,
    /// Neither player can force a win: optimal play goes on forever.
    Draw,
}

/// Why a move handed to the oracle (typically one proposed by the engine) is not legal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IllegalMove {
    /// A vertex index is not below the vertex count.
    VertexOutOfRange { vertex: u32 },
    /// Token sliding: no token sits on the vertex the move starts from.
    NoTokenOn { vertex: u32 },
    /// Token sliding: the graph has no edge `from -> to`.
    NoEdge { from: u32, to: u32 },
    /// Addition-Subtraction: the chosen vertex holds no unit.
    EmptyVertex { vertex: u32 },
    /// Addition-Subtraction: the chosen vertex has no out-edge, so it cannot be chosen.
    NoOutEdge { vertex: u32 },
    /// Addition-Subtraction: the number of picks differs from the split count `K_vertex`.
    WrongPickCount {
        vertex: u32,
        picks: usize,
        split_count: u32,
    },
    /// Addition-Subtraction: a pick is not an out-neighbour of the chosen vertex.
    NotASuccessor { vertex: u32, pick: u32 },
}

/// Every multiset of `size` elements of `0..alphabet`, each as a non-decreasing vector, in
/// lexicographic order. There are `C(alphabet + size - 1, size)` of them.
pub fn multisets(alphabet: u32, size: usize) -> Vec<Vec<u32>> {
    let mut all = Vec::new();
    if size == 0 {
        all.push(Vec::new());
        return all;
    }
    if alphabet == 0 {
        return all;
    }
    let mut current = vec![0u32; size];
    loop {
        all.push(current.clone());
        // Odometer step that keeps the vector non-decreasing: bump the last digit that can
        // still grow, and reset every digit after it to the bumped value.
        let Some(position) = current.iter().rposition(|&digit| digit + 1 < alphabet) else {
            return all;
        };
        let bumped = current[position] + 1;
        current[position..].fill(bumped);
    }
}

/// Panics unless every adjacency target is a vertex of the graph: the oracle is test code, and
/// a malformed graph there is a bug in the test, not a case to handle.
fn assert_targets_in_range(adjacency: &[Vec<u32>]) {
    let vertex_count = adjacency.len();
    for (vertex, targets) in adjacency.iter().enumerate() {
        for &target in targets {
            assert!(
                (target as usize) < vertex_count,
                "edge {vertex} -> {target} leaves the graph of {vertex_count} vertices"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Token sliding
// ---------------------------------------------------------------------------------------------

/// One token-sliding move: a token on `from` slides along an edge to `to`.
///
/// Tokens on the same vertex are interchangeable, so a move names vertices, not tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SlideMove {
    pub from: u32,
    pub to: u32,
}

/// WIN/LOSE/DRAW for every token-sliding position of up to `max_tokens` tokens on one graph.
///
/// A position is a multiset of token vertices, stored as a sorted vector. A move keeps the
/// number of tokens, so the positions of each size form a closed state graph, solved on its own
/// by retrograde analysis:
///
/// 1. a position without moves is LOSE;
/// 2. a position with a move to a LOSE position is WIN;
/// 3. a position whose moves all lead to WIN positions is LOSE;
/// 4. repeat 2-3 until nothing changes (a queue of newly labelled positions, and per position
///    a counter of successors not yet known to be WIN);
/// 5. every position still unlabelled is DRAW.
///
/// Why this is right: labels are only assigned when forced, from the game ends backwards, so a
/// WIN/LOSE label always comes with a strategy that ends the game in finitely many moves; an
/// unlabelled position has no move to a LOSE position and at least one move to an unlabelled
/// one, so either player can avoid losing forever by staying among the unlabelled positions.
#[derive(Debug, Clone)]
pub struct SlidingOracle {
    adjacency: Vec<Vec<u32>>,
    max_tokens: usize,
    /// Every solved position, ordered by token count, then lexicographically.
    positions: Vec<Vec<u32>>,
    verdicts: Vec<Verdict>,
    /// For WIN/LOSE positions, the order in which retrograde analysis labelled them within their
    /// layer (see [`SlidingOracle::winning_move`]); `None` for DRAW.
    label_ranks: Vec<Option<usize>>,
    index: HashMap<Vec<u32>, usize>,
}

impl SlidingOracle {
    /// Solves every position of `0..=max_tokens` tokens on the digraph `adjacency` (vertex `v`
    /// has one out-edge to each entry of `adjacency[v]`; cycles, self-loops and repeated edges
    /// are all allowed).
    ///
    /// # Panics
    /// If an edge target is not a vertex of the graph.
    pub fn solve(adjacency: &[Vec<u32>], max_tokens: usize) -> Self {
        assert_targets_in_range(adjacency);
        let mut oracle = Self {
            adjacency: adjacency.to_vec(),
            max_tokens,
            positions: Vec::new(),
            verdicts: Vec::new(),
            label_ranks: Vec::new(),
            index: HashMap::new(),
        };
        let vertex_count = u32::try_from(adjacency.len()).expect("vertex count fits in u32");
        for token_count in 0..=max_tokens {
            let first = oracle.positions.len();
            let layer = multisets(vertex_count, token_count);
            for (offset, position) in layer.iter().enumerate() {
                oracle.index.insert(position.clone(), first + offset);
            }
            for (verdict, rank) in oracle.retrograde(&layer, first) {
                oracle.verdicts.push(verdict);
                oracle.label_ranks.push(rank);
            }
            oracle.positions.extend(layer);
        }
        oracle
    }

    /// Retrograde analysis of one closed layer of positions (all of one token count), whose
    /// global indices start at `first` (already registered in `self.index`). Returns each
    /// position's verdict and, for WIN/LOSE, the rank at which it was labelled in this layer.
    fn retrograde(&self, layer: &[Vec<u32>], first: usize) -> Vec<(Verdict, Option<usize>)> {
        let local = |position: &Vec<u32>| self.index[position] - first;
        // Distinct successors per position, and the reverse edges to walk backwards.
        let successors: Vec<Vec<usize>> = layer
            .iter()
            .map(|position| self.successors(position).iter().map(local).collect())
            .collect();
        let mut predecessors = vec![Vec::new(); layer.len()];
        for (position, targets) in successors.iter().enumerate() {
            for &target in targets {
                predecessors[target].push(position);
            }
        }
        // `unresolved[p]`: successors of `p` not yet known to be WIN. At zero, `p` is LOSE.
        let mut unresolved: Vec<usize> = successors.iter().map(Vec::len).collect();
        // The queue holds every labelled position in labelling order, so a position's index
        // in it is its labelling rank; `head` is the next one whose predecessors to update.
        let mut labels: Vec<Option<(Verdict, usize)>> = vec![None; layer.len()];
        let mut queue: Vec<usize> = Vec::new();
        for (position, &count) in unresolved.iter().enumerate() {
            if count == 0 {
                labels[position] = Some((Verdict::Lose, queue.len()));
                queue.push(position);
            }
        }
        let mut head = 0;
        while let Some(&position) = queue.get(head) {
            head += 1;
            let resolved_lose = matches!(labels[position], Some((Verdict::Lose, _)));
            for &predecessor in &predecessors[position] {
                if labels[predecessor].is_some() {
                    continue;
                }
                if resolved_lose {
                    labels[predecessor] = Some((Verdict::Win, queue.len()));
                    queue.push(predecessor);
                } else {
                    unresolved[predecessor] -= 1;
                    if unresolved[predecessor] == 0 {
                        labels[predecessor] = Some((Verdict::Lose, queue.len()));
                        queue.push(predecessor);
                    }
                }
            }
        }
        labels
            .into_iter()
            .map(|label| match label {
                Some((verdict, rank)) => (verdict, Some(rank)),
                None => (Verdict::Draw, None),
            })
            .collect()
    }

    /// The graph the oracle was solved for.
    pub fn adjacency(&self) -> &[Vec<u32>] {
        &self.adjacency
    }

    /// How many positions were solved (all sizes `0..=max_tokens`).
    pub fn position_count(&self) -> usize {
        self.positions.len()
    }

    /// Every solved position with its verdict, by token count, then lexicographically.
    pub fn positions(&self) -> impl Iterator<Item = (&[u32], Verdict)> {
        self.positions
            .iter()
            .map(Vec::as_slice)
            .zip(self.verdicts.iter().copied())
    }

    /// The verdict of the position with tokens on `tokens` (any order, repeats allowed).
    ///
    /// # Panics
    /// If there are more than `max_tokens` tokens or a token is off the graph.
    pub fn verdict(&self, tokens: &[u32]) -> Verdict {
        self.verdicts[self.index_of(tokens)]
    }

    /// Every distinct move of the position `tokens`: one per occupied vertex and distinct
    /// out-neighbour, ordered by `(from, to)`. Repeated edges give one move, since tokens are
    /// interchangeable and the resulting positions are equal.
    pub fn moves(&self, tokens: &[u32]) -> Vec<SlideMove> {
        let mut moves: Vec<SlideMove> = tokens
            .iter()
            .flat_map(|&from| {
                self.adjacency[from as usize]
                    .iter()
                    .map(move |&to| SlideMove { from, to })
            })
            .collect();
        moves.sort_unstable();
        moves.dedup();
        moves
    }

    /// The distinct positions reachable in one move from `tokens`, sorted.
    pub fn successors(&self, tokens: &[u32]) -> Vec<Vec<u32>> {
        let mut positions: Vec<Vec<u32>> = self
            .moves(tokens)
            .into_iter()
            .map(|SlideMove { from, to }| replace_one(tokens, from, to))
            .collect();
        positions.sort_unstable();
        positions.dedup();
        positions
    }

    /// The position after sliding one token of `tokens` from `from` to `to`, if legal.
    pub fn apply(&self, tokens: &[u32], from: u32, to: u32) -> Result<Vec<u32>, IllegalMove> {
        let vertex_count = self.adjacency.len();
        for vertex in [from, to] {
            if vertex as usize >= vertex_count {
                return Err(IllegalMove::VertexOutOfRange { vertex });
            }
        }
        if !tokens.contains(&from) {
            return Err(IllegalMove::NoTokenOn { vertex: from });
        }
        if !self.adjacency[from as usize].contains(&to) {
            return Err(IllegalMove::NoEdge { from, to });
        }
        Ok(replace_one(tokens, from, to))
    }

    /// A move from the WIN position `tokens` that wins in finitely many moves when repeated at
    /// every turn (`None` unless `tokens` is WIN): to the LOSE successor labelled first.
    ///
    /// Why it terminates: a WIN position was labelled after one of its LOSE successors, and a
    /// LOSE position after all of its (WIN) successors, so along any game where the winner plays
    /// this move, the labelling rank of the winner's positions strictly decreases. (Merely
    /// moving to some LOSE position is not enough on cyclic graphs: the loser may be able to
    /// return to the same WIN position forever.)
    pub fn winning_move(&self, tokens: &[u32]) -> Option<SlideMove> {
        if self.verdict(tokens) != Verdict::Win {
            return None;
        }
        self.moves(tokens)
            .into_iter()
            .filter_map(|step| {
                let index = self.index_of(&replace_one(tokens, step.from, step.to));
                (self.verdicts[index] == Verdict::Lose).then_some((self.label_ranks[index], step))
            })
            .min_by_key(|&(rank, _)| rank)
            .map(|(_, step)| step)
    }

    /// Checks that a positional `strategy` for the player to move from `start` wins against
    /// every defence: it must end every line of play with the opponent unable to move.
    ///
    /// `strategy` maps a position (its player to move) to the position after its move. Lines
    /// are explored depth-first over every distinct opponent reply, with an explicit stack. As
    /// the strategy depends only on the position, meeting a position again on the current line
    /// means the opponent can force that loop forever, which is a failure even if every move
    /// looks right locally; lines are also capped at 4 × the number of positions (unreachable
    /// given the loop check; a guard). `won` caches positions from which `strategy` is known to
    /// win, so it must only be shared between calls with the same strategy.
    ///
    /// The check is exhaustive and needs no verdicts: it fails exactly when the opponent has a
    /// line that makes the strategy get stuck, make an illegal move, or loop.
    pub fn check_strategy_wins<S>(
        &self,
        start: &[u32],
        mut strategy: S,
        won: &mut HashSet<Vec<u32>>,
    ) -> Result<(), String>
    where
        S: FnMut(&[u32]) -> Result<Vec<u32>, String>,
    {
        let start = sorted(start);
        if won.contains(&start) {
            return Ok(());
        }
        let depth_bound = 4 * self.position_count();
        let mut replies_after_strategy = |position: &[u32]| -> Result<Vec<Vec<u32>>, String> {
            if self.moves(position).is_empty() {
                return Err(format!("the strategy's side is stuck at {position:?}"));
            }
            let after = sorted(&strategy(position)?);
            if !self.successors(position).contains(&after) {
                return Err(format!(
                    "the strategy moved from {position:?} to {after:?}, not a move"
                ));
            }
            Ok(self.successors(&after))
        };
        let mut on_line = HashSet::from([start.clone()]);
        let mut stack = vec![StrategyStep {
            replies: replies_after_strategy(&start)?,
            position: start.clone(),
            next: 0,
        }];
        let line = |stack: &[StrategyStep]| -> Vec<Vec<u32>> {
            stack.iter().map(|step| step.position.clone()).collect()
        };
        while let Some(step) = stack.last_mut() {
            let Some(reply) = step.replies.get(step.next).cloned() else {
                let finished = stack.pop().expect("the loop runs on a non-empty stack");
                on_line.remove(&finished.position);
                won.insert(finished.position);
                continue;
            };
            step.next += 1;
            if won.contains(&reply) {
                continue;
            }
            if on_line.contains(&reply) {
                return Err(format!(
                    "from {start:?} the opponent can force a loop: line {:?} returns to {reply:?}",
                    line(&stack)
                ));
            }
            if stack.len() >= depth_bound {
                return Err(format!(
                    "from {start:?} no win after {depth_bound} strategy moves"
                ));
            }
            let replies = replies_after_strategy(&reply)
                .map_err(|failure| format!("{failure} (line {:?})", line(&stack)))?;
            on_line.insert(reply.clone());
            stack.push(StrategyStep {
                position: reply,
                replies,
                next: 0,
            });
        }
        Ok(())
    }

    /// Index of the position `tokens` (any order) in the solved tables.
    ///
    /// # Panics
    /// If there are more than `max_tokens` tokens or a token is off the graph.
    fn index_of(&self, tokens: &[u32]) -> usize {
        let position = sorted(tokens);
        match self.index.get(&position) {
            Some(&index) => index,
            None => panic!(
                "position {position:?} was not solved (max_tokens {}, {} vertices)",
                self.max_tokens,
                self.adjacency.len()
            ),
        }
    }
}

/// A position of the player whose strategy [`SlidingOracle::check_strategy_wins`] checks, on
/// the current line of play, and the opponent replies still to explore from it.
#[derive(Debug)]
struct StrategyStep {
    position: Vec<u32>,
    replies: Vec<Vec<u32>>,
    next: usize,
}

/// A sorted copy of `tokens`: the canonical form of a multiset.
fn sorted(tokens: &[u32]) -> Vec<u32> {
    let mut position = tokens.to_vec();
    position.sort_unstable();
    position
}

/// `tokens` with one occurrence of `from` replaced by `to`, sorted. `from` must occur.
fn replace_one(tokens: &[u32], from: u32, to: u32) -> Vec<u32> {
    let mut position = tokens.to_vec();
    let slot = position
        .iter()
        .position(|&token| token == from)
        .expect("the moved token is in the position");
    position[slot] = to;
    position.sort_unstable();
    position
}

// ---------------------------------------------------------------------------------------------
// Addition-Subtraction
// ---------------------------------------------------------------------------------------------

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
