//! A brute-force solver of token sliding under misère play (the player who cannot move wins),
//! written from the rules alone: it shares nothing with the engine but the game's definition.
//!
//! Every multiset of `k` tokens on the graph (a sorted vertex list) is a node of the product
//! space; its children are the distinct positions one slide away. Outcomes and remotenesses
//! come from a fixpoint by rounds, straight from the definition: round 0 solves the positions
//! without moves (WIN: the player to move cannot move, and wins); round `r` solves, from the
//! answers of the rounds before it only, a position with a LOSE child of remoteness `r - 1`
//! as WIN `r`, and a position whose children are all WIN as LOSE `r`. A round that solves
//! nothing ends the fixpoint; what is never solved is a DRAW.

use std::collections::HashMap;

/// An outcome, for the player to move (or, for a move, for its mover).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Win,
    Lose,
    Draw,
}

/// One distinct move `from -> to`: its outcome for the mover and the remoteness of where it
/// leads (`None` for a DRAW).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OracleMove {
    pub from: u32,
    pub to: u32,
    pub outcome: Verdict,
    pub remoteness: Option<u32>,
}

/// Every position of `k` tokens on one graph, solved under misère play.
pub struct MisereOracle {
    successors: Vec<Vec<u32>>,
    positions: Vec<Vec<u32>>,
    index: HashMap<Vec<u32>, usize>,
    solved: Vec<Option<(Verdict, u32)>>,
}

impl MisereOracle {
    /// Solves every position of `tokens` tokens on the graph of `vertices` vertices and
    /// `edges` (repeats and self-loops allowed).
    pub fn solve(vertices: u32, edges: &[(u32, u32)], tokens: usize) -> Self {
        let mut successors = vec![Vec::new(); vertices as usize];
        for &(from, to) in edges {
            successors[from as usize].push(to);
        }
        let mut positions = vec![Vec::new()];
        for _ in 0..tokens {
            let mut longer = Vec::new();
            for position in &positions {
                let start = position.last().copied().unwrap_or(0);
                for v in start..vertices {
                    let mut next: Vec<u32> = position.clone();
                    next.push(v);
                    longer.push(next);
                }
            }
            positions = longer;
        }
        let index: HashMap<Vec<u32>, usize> = positions
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i))
            .collect();
        let mut oracle = Self {
            successors,
            solved: vec![None; positions.len()],
            positions,
            index,
        };
        let children: Vec<Vec<usize>> = oracle
            .positions
            .iter()
            .map(|p| {
                let mut children: Vec<usize> = oracle
                    .slides(p)
                    .into_iter()
                    .map(|(_, _, child)| oracle.index[&child])
                    .collect();
                children.sort_unstable();
                children.dedup();
                children
            })
            .collect();
        for (i, c) in children.iter().enumerate() {
            if c.is_empty() {
                oracle.solved[i] = Some((Verdict::Win, 0));
            }
        }
        let mut round = 0;
        loop {
            round += 1;
            let before = oracle.solved.clone();
            let mut changed = false;
            for (i, c) in children.iter().enumerate() {
                if before[i].is_some() {
                    continue;
                }
                let wins = c
                    .iter()
                    .any(|&j| before[j] == Some((Verdict::Lose, round - 1)));
                let loses = c
                    .iter()
                    .all(|&j| matches!(before[j], Some((Verdict::Win, _))));
                if wins {
                    oracle.solved[i] = Some((Verdict::Win, round));
                    changed = true;
                } else if loses {
                    oracle.solved[i] = Some((Verdict::Lose, round));
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        oracle
    }

    /// Every slide of `position` (sorted): `(from, to, the position it leads to, sorted)`.
    fn slides(&self, position: &[u32]) -> Vec<(u32, u32, Vec<u32>)> {
        let mut slides = Vec::new();
        for (i, &from) in position.iter().enumerate() {
            for &to in &self.successors[from as usize] {
                let mut child = position.to_vec();
                child[i] = to;
                child.sort_unstable();
                slides.push((from, to, child));
            }
        }
        slides
    }

    fn solved(&self, sorted: &[u32]) -> (Verdict, Option<u32>) {
        match self.solved[self.index[sorted]] {
            Some((verdict, remoteness)) => (verdict, Some(remoteness)),
            None => (Verdict::Draw, None),
        }
    }

    /// The outcome and remoteness (`None` for a DRAW) of the position `tokens` (any order).
    pub fn verdict(&self, tokens: &[u32]) -> (Verdict, Option<u32>) {
        let mut sorted = tokens.to_vec();
        sorted.sort_unstable();
        self.solved(&sorted)
    }

    /// The distinct moves of `tokens`, best first: winning moves by increasing remoteness,
    /// drawing moves, losing moves by decreasing remoteness, ties by `(from, to)`.
    pub fn moves(&self, tokens: &[u32]) -> Vec<OracleMove> {
        let mut sorted = tokens.to_vec();
        sorted.sort_unstable();
        let mut moves: Vec<OracleMove> = self
            .slides(&sorted)
            .into_iter()
            .map(|(from, to, child)| {
                let (after, remoteness) = self.solved(&child);
                let outcome = match after {
                    Verdict::Win => Verdict::Lose,
                    Verdict::Lose => Verdict::Win,
                    Verdict::Draw => Verdict::Draw,
                };
                OracleMove {
                    from,
                    to,
                    outcome,
                    remoteness,
                }
            })
            .collect();
        moves.sort_by_key(|m| {
            let rank = match (m.outcome, m.remoteness) {
                (Verdict::Win, Some(r)) => (0, i64::from(r)),
                (Verdict::Draw, _) => (1, 0),
                (Verdict::Lose, Some(r)) => (2, -i64::from(r)),
                _ => unreachable!("only DRAWs have no remoteness"),
            };
            (rank, m.from, m.to)
        });
        moves.dedup_by_key(|m| (m.from, m.to));
        moves
    }

    /// Every position of `tokens` tokens, sorted.
    pub fn positions(&self) -> &[Vec<u32>] {
        &self.positions
    }
}
