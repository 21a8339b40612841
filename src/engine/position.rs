//! The remoteness of a sum of tokens, searched exactly over the positions of the sum, and the
//! move list of [`super::Analysis::analyse_position`].
//!
//! A position is the sorted multiset of its token vertices; a move keeps the number of tokens,
//! so the search works on positions of one width. Two reductions are exact: a token on a
//! vertex without followers never moves and changes no one's options, so it is dropped from
//! the query and written [`SINK`] once a move puts it there (all sinks are alike); and a
//! position with at most one movable token is answered from the one-token table.
//!
//! The outcome of every position is known from the table (nim-sum, or the generalized
//! function on cyclic graphs), which prunes the search: the remoteness of a WIN position only
//! depends on its moves to LOSE positions, that of a LOSE position on all its moves (all to
//! WIN positions), and DRAW positions never matter. So the search has two phases:
//!
//! 1. Closure: from each seed (the position, then its moves' positions), every position
//!    reachable by these relevant moves is enumerated and indexed; a LOSE position records
//!    how many distinct positions its moves lead to. The budget bounds the positions indexed
//!    that the table does not answer.
//! 2. Retrograde: positions are settled in non-decreasing remoteness, merging two sorted
//!    streams: the table-answered positions sorted by remoteness, and a FIFO queue of the
//!    positions settled here, each at `1 + ` the one that settled it. A settled LOSE position
//!    settles its WIN parents not yet settled (the first is their least LOSE move); a settled
//!    WIN position counts down its LOSE parents, the last one settling them (their largest
//!    move). Parents are found by reversing moves: replace one token vertex `w` by a
//!    predecessor `u` of it, using the edges out of the vertices of the positions expanded.
//!
//! One algorithm serves acyclic and cyclic graphs alike: on a DAG the same positions would be
//! visited by a memoised depth-first search. Seeds are closed one after another; when the
//! budget runs out, the seeds already closed keep their exact remoteness and the others are
//! [`Remoteness::OverBudget`] (a position outside a complete closure may be settled wrongly,
//! so it is never reported).

use super::graph::Digraph;
use super::interrupt::Interrupt;
use super::outcome::Outcome;
use super::position_set::{PositionSet, replace_sorted};
use super::remoteness::{AnalysisOptions, DRAW, MoveAnalysis, PositionAnalysis, Remoteness};

/// What the search needs to know of the game: its graph, and the outcome of any position of
/// the sum (given as its token vertices, [`SINK`] for tokens that can no longer move), which
/// the analysis already knows from its table.
pub(super) struct SumRules<'a> {
    pub(super) graph: &'a Digraph,
    pub(super) outcome: &'a dyn Fn(&[u32]) -> Outcome,
}

/// A token moved to a vertex without followers. Largest `u32`, so it sorts last.
pub(super) const SINK: u32 = u32::MAX;

/// Positions searched between two reads of the interrupt (microseconds of work).
const INTERRUPT_CHECK: u64 = 1 << 12;

/// Remoteness of a position not settled (yet).
const UNSETTLED: u64 = u64::MAX;

/// Analyses a token-sliding position: see `Analysis::analyse_position`. `table` is the
/// one-token remoteness table, and `outcome` and `nim_sum` the verdict on `tokens`. Once
/// `interrupt` is raised the search stops as if its budget had run out (read every
/// [`INTERRUPT_CHECK`] positions searched): the caller then discards the answer.
pub(super) fn analyse_sliding(
    rules: &SumRules<'_>,
    table: &[u32],
    tokens: &[u32],
    (outcome, nim_sum): (Outcome, u64),
    options: &AnalysisOptions,
    interrupt: Option<&Interrupt>,
) -> PositionAnalysis {
    let graph = rules.graph;
    let mut root: Vec<u32> = tokens
        .iter()
        .copied()
        .filter(|&v| graph.out_degree(v) > 0)
        .collect();
    root.sort_unstable();
    let mut search = SumSearch::new(rules, table, root.len(), options.position_budget);
    search.interrupt = interrupt;

    // Every distinct move, with the position it leads to.
    let mut moves: Vec<(MoveAnalysis, Vec<u32>)> = Vec::new();
    let mut followers = Vec::new();
    for (index, &from) in root.iter().enumerate() {
        if index > 0 && root[index - 1] == from {
            continue;
        }
        followers.clear();
        followers.extend_from_slice(graph.successors(from));
        followers.sort_unstable();
        followers.dedup();
        for &to in &followers {
            let child = search.moved(&root, index, to);
            let outcome = match search.outcome(&child) {
                Outcome::Win => Outcome::Lose,
                Outcome::Lose => Outcome::Win,
                Outcome::Draw => Outcome::Draw,
            };
            // Filled in by the search below (or left out by `max_moves == 0`).
            let remoteness = Remoteness::Draw;
            let analysed = MoveAnalysis {
                from,
                to,
                outcome,
                remoteness,
            };
            moves.push((analysed, child));
        }
    }
    // Seeds in the order they are closed: the position, then its moves, best class first.
    moves.sort_by_key(|(analysed, _)| (class(analysed.outcome), analysed.from, analysed.to));
    let listed = if options.max_moves == 0 {
        0
    } else {
        moves.len()
    };
    let mut seeds = vec![root];
    seeds.extend(moves[..listed].iter().map(|(_, child)| child.clone()));
    let remotenesses = search.remoteness_of(&seeds);
    let remoteness = remotenesses[0];
    for ((analysed, _), &found) in moves.iter_mut().zip(&remotenesses[1..]) {
        analysed.remoteness = found;
    }

    let mut moves: Vec<MoveAnalysis> = moves.into_iter().map(|(analysed, _)| analysed).collect();
    moves.sort_by_key(|m| {
        let class = class(m.outcome);
        // Winning moves by increasing, losing moves by decreasing remoteness; unknown last.
        let rank = match (m.outcome, m.remoteness) {
            (Outcome::Win, Remoteness::Known(r)) => r,
            (Outcome::Lose, Remoteness::Known(r)) => u64::MAX - 1 - r,
            (Outcome::Draw, _) => 0,
            _ => u64::MAX,
        };
        (class, rank, m.from, m.to)
    });
    let kept = moves.len().min(options.max_moves as usize);
    let moves_omitted = (moves.len() - kept) as u64;
    moves.truncate(kept);
    PositionAnalysis {
        outcome,
        nim_sum,
        remoteness,
        moves,
        moves_omitted,
    }
}

/// Winning moves first, then drawing, then losing ones.
fn class(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Win => 0,
        Outcome::Draw => 1,
        Outcome::Lose => 2,
    }
}

/// The search of one query: positions indexed, and what is known of each.
struct SumSearch<'a> {
    rules: &'a SumRules<'a>,
    table: &'a [u32],
    budget: u64,
    /// Ends the search as the budget does, once raised.
    interrupt: Option<&'a Interrupt>,
    /// Positions indexed that the table does not answer: what the budget counts.
    searched: u64,
    positions: PositionSet,
    outcomes: Vec<Outcome>,
    remoteness: Vec<u64>,
    /// LOSE positions: distinct moves to positions not settled yet. Others: 0.
    unsettled_moves: Vec<u32>,
    /// Whether every relevant move of the position is indexed (always, unless the budget
    /// stopped the closure before reaching it).
    expanded: Vec<bool>,
    /// Positions answered from the one-token table.
    answered: Vec<u32>,
}

impl<'a> SumSearch<'a> {
    fn new(rules: &'a SumRules<'a>, table: &'a [u32], width: usize, budget: u64) -> Self {
        Self {
            rules,
            table,
            budget,
            interrupt: None,
            searched: 0,
            positions: PositionSet::new(width),
            outcomes: Vec::new(),
            remoteness: Vec::new(),
            unsettled_moves: Vec::new(),
            expanded: Vec::new(),
            answered: Vec::new(),
        }
    }

    /// `position` with its token `index` moved to `to`, sorted.
    fn moved(&self, position: &[u32], index: usize, to: u32) -> Vec<u32> {
        let mut child = position.to_vec();
        let to = if self.rules.graph.out_degree(to) == 0 {
            SINK
        } else {
            to
        };
        replace_sorted(&mut child, index, to);
        child
    }

    fn outcome(&self, position: &[u32]) -> Outcome {
        (self.rules.outcome)(position)
    }

    /// The remoteness of each seed (all of the same width), sharing one budget.
    fn remoteness_of(&mut self, seeds: &[Vec<u32>]) -> Vec<Remoteness> {
        // Positions below `trusted` were indexed by closures that completed.
        let mut trusted = 0;
        let mut exhausted = false;
        let mut frontier: Vec<u32> = Vec::new();
        for seed in seeds {
            if exhausted || self.outcome(seed) == Outcome::Draw {
                continue;
            }
            match self.index(seed) {
                Some((index, true)) => frontier.push(index),
                Some((_, false)) => {}
                None => exhausted = true,
            }
            while let Some(position) = frontier.pop() {
                if !self.expand(position, &mut frontier) {
                    exhausted = true;
                    break;
                }
            }
            if !exhausted {
                trusted = self.positions.len();
            }
        }
        self.settle();
        let over_budget = Remoteness::OverBudget {
            budget: self.budget,
            positions_explored: self.searched,
        };
        seeds
            .iter()
            .map(|seed| {
                if self.outcome(seed) == Outcome::Draw {
                    return Remoteness::Draw;
                }
                if let Some(remoteness) = self.table_answer(seed) {
                    return Remoteness::Known(u64::from(remoteness));
                }
                match self.positions.find(seed) {
                    Some(index) if (index as usize) < trusted => {
                        Remoteness::Known(self.remoteness[index as usize])
                    }
                    _ => over_budget,
                }
            })
            .collect()
    }

    /// The remoteness of a position with at most one movable token, from the table.
    fn table_answer(&self, position: &[u32]) -> Option<u32> {
        // Sorted, so the movable token (if any) comes first.
        match position {
            [] => Some(0),
            [vertex, rest @ ..] if rest.iter().all(|&v| v == SINK) => Some(match *vertex {
                SINK => 0,
                vertex => self.table[vertex as usize],
            }),
            _ => None,
        }
    }

    /// Whether the interrupt was raised, read once every [`INTERRUPT_CHECK`] positions
    /// searched (`searched` stays put once it was: every later call reads it again).
    fn interrupted(&self) -> bool {
        self.searched.is_multiple_of(INTERRUPT_CHECK)
            && self.interrupt.is_some_and(Interrupt::is_interrupted)
    }

    /// Indexes `position` (WIN or LOSE); `(index, new)`, or `None` over the budget. A position
    /// with at most one movable token is settled at once from the table (`new` is false: it
    /// needs no expansion), and is not counted in the budget.
    fn index(&mut self, position: &[u32]) -> Option<(u32, bool)> {
        if let Some(index) = self.positions.find(position) {
            return Some((index, false));
        }
        let answered = self.table_answer(position);
        if answered.is_none() {
            if self.searched >= self.budget || self.interrupted() {
                return None;
            }
            self.searched += 1;
        }
        let index = self.positions.insert(position);
        let outcome = self.outcome(position);
        debug_assert_ne!(outcome, Outcome::Draw, "draws are never indexed");
        self.outcomes.push(outcome);
        self.unsettled_moves.push(0);
        if let Some(remoteness) = answered {
            debug_assert_ne!(remoteness, DRAW);
            self.remoteness.push(u64::from(remoteness));
            self.expanded.push(true);
            self.answered.push(index);
            Some((index, false))
        } else {
            self.remoteness.push(UNSETTLED);
            self.expanded.push(false);
            Some((index, true))
        }
    }

    /// Indexes the relevant moves of `position`, pushing new positions on `frontier`; false
    /// when the budget ran out.
    fn expand(&mut self, position: u32, frontier: &mut Vec<u32>) -> bool {
        let graph = self.rules.graph;
        let tokens = self.positions.get(position).to_vec();
        let loses = self.outcomes[position as usize] == Outcome::Lose;
        let mut children = Vec::new();
        for (index, &from) in tokens.iter().enumerate() {
            if from == SINK || (index > 0 && tokens[index - 1] == from) {
                continue;
            }
            for &to in graph.successors(from) {
                if to == from {
                    continue; // a self-loop leads back here: never a LOSE move, and not counted
                }
                let child = self.moved(&tokens, index, to);
                let child_outcome = self.outcome(&child);
                debug_assert!(!loses || child_outcome == Outcome::Win);
                if !loses && child_outcome != Outcome::Lose {
                    continue;
                }
                match self.index(&child) {
                    Some((child, new)) => {
                        if new {
                            frontier.push(child);
                        }
                        children.push(child);
                    }
                    None => return false,
                }
            }
        }
        if loses {
            children.sort_unstable();
            children.dedup();
            self.unsettled_moves[position as usize] = children.len() as u32;
        }
        self.expanded[position as usize] = true;
        true
    }

    /// Phase 2: the retrograde settling of every expanded position whose closure is complete.
    fn settle(&mut self) {
        let reverse = ReverseMoves::of(self);
        let mut answered = std::mem::take(&mut self.answered);
        answered.sort_unstable_by_key(|&p| self.remoteness[p as usize]);
        let mut answered = answered.into_iter().peekable();
        let mut queue: Vec<u32> = Vec::new();
        let mut head = 0;
        let mut parents = Vec::new();
        let mut parent = Vec::new();
        loop {
            let from_queue = queue.get(head).copied();
            let settled = match (answered.peek(), from_queue) {
                (Some(&a), Some(q))
                    if self.remoteness[a as usize] > self.remoteness[q as usize] =>
                {
                    head += 1;
                    q
                }
                (Some(_), _) => answered.next().expect("peeked"),
                (None, Some(q)) => {
                    head += 1;
                    q
                }
                (None, None) => break,
            };
            let next = self.remoteness[settled as usize] + 1;
            let settled_loses = self.outcomes[settled as usize] == Outcome::Lose;
            let tokens = self.positions.get(settled).to_vec();
            parents.clear();
            for (index, &w) in tokens.iter().enumerate() {
                if index > 0 && tokens[index - 1] == w {
                    continue;
                }
                for u in reverse.sources_into(w) {
                    if u == w {
                        continue;
                    }
                    parent.clone_from(&tokens);
                    replace_sorted(&mut parent, index, u);
                    if let Some(p) = self.positions.find(&parent) {
                        parents.push(p);
                    }
                }
            }
            parents.sort_unstable();
            parents.dedup();
            for &p in &parents {
                let p = p as usize;
                if !self.expanded[p] || self.remoteness[p] != UNSETTLED {
                    continue;
                }
                match (self.outcomes[p], settled_loses) {
                    (Outcome::Win, true) => {
                        self.remoteness[p] = next;
                        queue.push(p as u32);
                    }
                    (Outcome::Lose, false) => {
                        self.unsettled_moves[p] -= 1;
                        if self.unsettled_moves[p] == 0 {
                            self.remoteness[p] = next;
                            queue.push(p as u32);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

/// The edges `u -> w` out of the vertices of expanded positions, by `w`, with every edge into
/// a vertex without followers filed under [`SINK`].
struct ReverseMoves {
    /// `(w, u)`, sorted, without repeats.
    edges: Vec<(u32, u32)>,
}

impl ReverseMoves {
    fn of(search: &SumSearch<'_>) -> Self {
        let graph = search.rules.graph;
        let mut sources: Vec<u32> = Vec::new();
        for p in 0..search.positions.len() as u32 {
            // Parents are positions expanded here; those answered from the table are settled.
            if search.remoteness[p as usize] == UNSETTLED && search.expanded[p as usize] {
                sources.extend(search.positions.get(p).iter().filter(|&&v| v != SINK));
            }
        }
        sources.sort_unstable();
        sources.dedup();
        let mut edges = Vec::new();
        for &u in &sources {
            for &w in graph.successors(u) {
                let w = if graph.out_degree(w) == 0 { SINK } else { w };
                edges.push((w, u));
            }
        }
        edges.sort_unstable();
        edges.dedup();
        Self { edges }
    }

    /// The sources `u` of the edges into `w`, in increasing order.
    fn sources_into(&self, w: u32) -> impl Iterator<Item = u32> + '_ {
        let start = self.edges.partition_point(|&(to, _)| to < w);
        self.edges[start..]
            .iter()
            .take_while(move |&&(to, _)| to == w)
            .map(|&(_, u)| u)
    }
}
