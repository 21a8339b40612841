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
//! - Addition-Subtraction (`SplitOracle`, in `split_oracle.rs`): memoized game-tree search over
//!   value vectors on an acyclic graph, where every game ends, so every position is WIN or LOSE.
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
pub(super) fn assert_targets_in_range(adjacency: &[Vec<u32>]) {
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
