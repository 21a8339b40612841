//! The exact search of a sum's remoteness that [`super::position`] runs: positions indexed
//! by closure from their seeds, then settled by retrograde analysis.
//!
//! The outcome of every position is known from the table (nim-sum, or the generalized
//! function on cyclic graphs), which prunes the search: the remoteness of a WIN position only
//! depends on its moves to LOSE positions, that of a LOSE position on all its moves (all to
//! WIN positions), and DRAW positions never matter. So the search has two phases:
//!
//! 1. Closure: from each seed (the position, then its moves' positions), every position
//!    reachable by these relevant moves is enumerated and indexed; a LOSE position records
//!    how many distinct positions its moves lead to. Two budgets bound it: the positions
//!    indexed that the table does not answer (`position_budget`), and the work done
//!    (`work_budget`: every position generated costs its width plus a constant, so a wide
//!    position or a high out-degree costs what it really does).
//! 2. Retrograde: positions are settled in non-decreasing remoteness, merging two sorted
//!    streams: the table-answered positions sorted by remoteness, and a FIFO queue of the
//!    positions settled here, each at `1 + ` the one that settled it. A settled LOSE position
//!    settles its WIN parents not yet settled (the first is their least LOSE move); a settled
//!    WIN position counts down its LOSE parents, the last one settling them (their largest
//!    move). Parents are found by reversing moves: replace one token vertex `w` by a
//!    predecessor `u` of it, using the edges out of the vertices of the positions expanded.
//!    The settling has a work budget of its own, as large; if it runs out, no remoteness
//!    found by the search is reported.
//!
//! One algorithm serves acyclic and cyclic graphs alike: on a DAG the same positions would be
//! visited by a memoised depth-first search. Seeds are closed one after another; when the
//! budget runs out, the seeds already closed keep their exact remoteness and the others are
//! [`Remoteness::OverBudget`] (a position outside a complete closure may be settled wrongly,
//! so it is never reported).

use super::convention::PlayConvention;
use super::graph::Digraph;
use super::interrupt::Interrupt;
use super::outcome::Outcome;
use super::position_set::{PositionSet, replace_sorted};
use super::remoteness::{AnalysisOptions, DRAW, Remoteness};

/// What the search needs to know of the game: its graph, its play convention (how to read
/// the one-token table), and under normal play the outcome of any position of the sum (given
/// as its token vertices, [`SINK`] for tokens that can no longer move) and the outcome after
/// one slide `from -> to` of the position analysed, in O(1) (the analysis keeps the
/// position's nim-sum or the summary of its infinite tokens). Under misère play no theory
/// gives the outcome of a sum: `outcome` is `None`, every move is followed, and the settling
/// finds the outcomes with the remotenesses (`misere.rs`).
pub(super) struct SumRules<'a> {
    pub(super) graph: &'a Digraph,
    pub(super) convention: PlayConvention,
    pub(super) outcome: Option<&'a PositionOutcome<'a>>,
    pub(super) outcome_after_slide: Option<&'a SlideOutcome<'a>>,
}

/// The outcome of a position of the sum, given as its token vertices.
pub(super) type PositionOutcome<'a> = dyn Fn(&[u32]) -> Outcome + 'a;

/// The outcome after one slide `from -> to` of the position analysed.
pub(super) type SlideOutcome<'a> = dyn Fn(u32, u32) -> Outcome + 'a;

/// A token moved to a vertex without followers. Largest `u32`, so it sorts last.
pub(super) const SINK: u32 = u32::MAX;

/// Work units between two reads of the interrupt: some tens of microseconds of work.
const INTERRUPT_CHECK: u64 = 1 << 14;

/// Work units a generated position costs beyond its width (its hash, its slot, its outcome's
/// bookkeeping): a position of `k` tokens costs `k + STEP_COST`.
const STEP_COST: u64 = 8;

/// Remoteness of a position not settled (yet).
const UNSETTLED: u64 = u64::MAX;

/// What closing a seed (the position, or a move's position) found, read once the search is
/// settled ([`SumSearch::remoteness`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seed {
    /// A DRAW: no remoteness.
    Draw,
    /// At most one movable token: the one-token table's remoteness.
    Table(u32),
    /// Indexed by a closure that completed: its remoteness once settled.
    Searched(u32),
    /// Its closure ran out of budget, or it was never closed.
    OverBudget,
}

/// The search of one query: positions indexed, and what is known of each.
pub(super) struct SumSearch<'a, 'p> {
    rules: &'a SumRules<'a>,
    table: &'a [u32],
    /// Tokens per position.
    width: usize,
    budget: u64,
    /// Ends the search as the budget does, once raised.
    interrupt: Option<&'a Interrupt>,
    /// Called at every read of the interrupt.
    progress: &'p mut dyn FnMut(),
    /// Positions indexed that the table does not answer: what the position budget counts.
    searched: u64,
    /// Work units spent by the closures (and, afresh, by the settling), against
    /// `work_budget`.
    work: u64,
    work_budget: u64,
    /// The work count at which the interrupt is read next.
    next_check: u64,
    /// Moves listed so far, and the count at which the listing reads the interrupt next.
    listed: u64,
    next_listing_check: u64,
    /// A closure ran out of budget (or the interrupt was raised): no more seeds are closed.
    exhausted: bool,
    /// The settling ran out of its budget: no searched remoteness is known.
    unsettled: bool,
    positions: PositionSet,
    /// Known from the rules (normal play), or found by the settling (misère play: `None`
    /// until then, and still `None` for a DRAW).
    outcomes: Vec<Option<Outcome>>,
    remoteness: Vec<u64>,
    /// LOSE positions: distinct moves to positions not settled yet. Others: 0.
    unsettled_moves: Vec<u32>,
    /// Whether every relevant move of the position is indexed (always, unless the budget
    /// stopped the closure before reaching it).
    expanded: Vec<bool>,
    /// Positions answered from the one-token table.
    answered: Vec<u32>,
    /// A buffer for positions being built.
    scratch: Vec<u32>,
}

impl<'a, 'p> SumSearch<'a, 'p> {
    pub(super) fn new(
        rules: &'a SumRules<'a>,
        table: &'a [u32],
        width: usize,
        options: &AnalysisOptions,
        interrupt: Option<&'a Interrupt>,
        progress: &'p mut dyn FnMut(),
    ) -> Self {
        Self {
            rules,
            table,
            width,
            budget: options.position_budget,
            interrupt,
            progress,
            searched: 0,
            work: 0,
            work_budget: options.work_budget,
            next_check: INTERRUPT_CHECK,
            listed: 0,
            next_listing_check: INTERRUPT_CHECK,
            exhausted: false,
            unsettled: false,
            positions: PositionSet::new(width),
            outcomes: Vec::new(),
            remoteness: Vec::new(),
            unsettled_moves: Vec::new(),
            expanded: Vec::new(),
            answered: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Spends `units` of work; false once the budget is spent or the interrupt was raised
    /// (read every [`INTERRUPT_CHECK`] units).
    fn spend(&mut self, units: u64) -> bool {
        self.work = self.work.saturating_add(units);
        if self.work >= self.next_check {
            self.next_check = self.work.saturating_add(INTERRUPT_CHECK);
            if !self.checkpoint() {
                return false;
            }
        }
        self.work <= self.work_budget
    }

    /// Counts the listing of the moves out of one vertex, reading the interrupt as
    /// [`Self::spend`] does (the listing is not paid from the budget: every move is listed
    /// or counted, O(1) each); false once the interrupt was raised.
    pub(super) fn listing(&mut self, moves: u32) -> bool {
        self.listed = self.listed.saturating_add(u64::from(moves) + 1);
        if self.listed >= self.next_listing_check {
            self.next_listing_check = self.listed.saturating_add(INTERRUPT_CHECK);
            return self.checkpoint();
        }
        true
    }

    /// Calls `progress`, then reads the interrupt: once it is raised, nothing more is
    /// searched (the budget is spent) and false is returned.
    fn checkpoint(&mut self) -> bool {
        (self.progress)();
        if self.interrupt.is_some_and(Interrupt::is_interrupted) {
            self.exhausted = true;
            self.work_budget = 0;
            return false;
        }
        true
    }

    /// The seed of `position` (sorted, of the search's width), closing it if it needs a
    /// search and the budget allows.
    pub(super) fn close(&mut self, position: &[u32]) -> Seed {
        if self.outcome(position) == Some(Outcome::Draw) {
            return Seed::Draw;
        }
        if let Some(remoteness) = self.table_answer(position) {
            // A one-token DRAW (misère play: normal play found it above).
            if remoteness == DRAW {
                return Seed::Draw;
            }
            return Seed::Table(remoteness);
        }
        if self.exhausted {
            return Seed::OverBudget;
        }
        let mut frontier: Vec<u32> = Vec::new();
        let seed = match self.index(position) {
            Some((index, true)) => {
                frontier.push(index);
                index
            }
            Some((index, false)) => index,
            None => {
                self.exhausted = true;
                return Seed::OverBudget;
            }
        };
        while let Some(next) = frontier.pop() {
            if !self.expand(next, &mut frontier) {
                self.exhausted = true;
                return Seed::OverBudget;
            }
        }
        Seed::Searched(seed)
    }

    /// [`Self::close`] of `position` with its token `index` moved to `to`. Over the budget,
    /// a position of at most two tokens is still built (it may have one movable token left,
    /// answered from the table); a wider one is not.
    pub(super) fn close_child(&mut self, position: &[u32], index: usize, to: u32) -> Seed {
        if !self.exhausted && !self.spend(self.width as u64 + STEP_COST) {
            self.exhausted = true;
        }
        if self.exhausted && self.width > 2 {
            return Seed::OverBudget;
        }
        let mut child = std::mem::take(&mut self.scratch);
        self.moved_into(position, index, to, &mut child);
        let seed = self.close(&child);
        self.scratch = child;
        seed
    }

    /// The remoteness of a seed, once [`Self::settle`] ran.
    pub(super) fn remoteness(&self, seed: Seed) -> Remoteness {
        match seed {
            Seed::Draw => Remoteness::Draw,
            Seed::Table(remoteness) => Remoteness::Known(u64::from(remoteness)),
            // Never settled in a complete closure: a DRAW (misère play only).
            Seed::Searched(index)
                if !self.unsettled && self.remoteness[index as usize] == UNSETTLED =>
            {
                Remoteness::Draw
            }
            Seed::Searched(index) if !self.unsettled => {
                Remoteness::Known(self.remoteness[index as usize])
            }
            Seed::Searched(_) | Seed::OverBudget => Remoteness::OverBudget {
                budget: self.budget,
                positions_explored: self.searched,
            },
        }
    }

    /// The outcome of a seed once [`Self::settle`] ran; `None` when its closure or the
    /// settling ran out of budget.
    pub(super) fn outcome_of(&self, seed: Seed) -> Option<Outcome> {
        match seed {
            Seed::Draw => Some(Outcome::Draw),
            Seed::Table(remoteness) => {
                Some(self.rules.convention.outcome_of_remoteness(remoteness))
            }
            Seed::Searched(index) if !self.unsettled => {
                Some(self.outcomes[index as usize].unwrap_or(Outcome::Draw))
            }
            Seed::Searched(_) | Seed::OverBudget => None,
        }
    }

    /// Positions indexed that the table does not answer.
    pub(super) fn positions_searched(&self) -> u64 {
        self.searched
    }

    /// `position` with its token `index` moved to `to`, sorted, into `child`.
    fn moved_into(&self, position: &[u32], index: usize, to: u32, child: &mut Vec<u32>) {
        child.clear();
        child.extend_from_slice(position);
        let to = if self.rules.graph.out_degree(to) == 0 {
            SINK
        } else {
            to
        };
        replace_sorted(child, index, to);
    }

    /// The outcome the rules give `position`: `None` under misère play.
    fn outcome(&self, position: &[u32]) -> Option<Outcome> {
        self.rules.outcome.map(|outcome| outcome(position))
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

    /// Indexes `position` (WIN or LOSE); `(index, new)`, or `None` over the budget. A position
    /// with at most one movable token is settled at once from the table (`new` is false: it
    /// needs no expansion), and is not counted in the position budget.
    fn index(&mut self, position: &[u32]) -> Option<(u32, bool)> {
        if let Some(index) = self.positions.find(position) {
            return Some((index, false));
        }
        let answered = self.table_answer(position);
        if answered.is_none() {
            if self.searched >= self.budget {
                return None;
            }
            self.searched += 1;
        }
        let index = self.positions.insert(position);
        let outcome = match answered {
            Some(remoteness) => Some(self.rules.convention.outcome_of_remoteness(remoteness)),
            None => self.outcome(position),
        };
        self.outcomes.push(outcome);
        self.unsettled_moves.push(0);
        if answered == Some(DRAW) {
            // A one-token DRAW a misère search reached: never settled, never expanded.
            debug_assert_eq!(self.rules.convention, PlayConvention::Misere);
            self.remoteness.push(UNSETTLED);
            self.expanded.push(false);
            Some((index, false))
        } else if let Some(remoteness) = answered {
            debug_assert_ne!(outcome, Some(Outcome::Draw), "draws are never indexed");
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
    /// when the budget ran out (or the interrupt was raised).
    fn expand(&mut self, position: u32, frontier: &mut Vec<u32>) -> bool {
        let graph = self.rules.graph;
        let step = self.width as u64 + STEP_COST;
        let tokens = self.positions.get(position).to_vec();
        let outcome = self.outcomes[position as usize];
        let loses = outcome == Some(Outcome::Lose);
        let mut children = Vec::new();
        let mut child = std::mem::take(&mut self.scratch);
        for (index, &from) in tokens.iter().enumerate() {
            if from == SINK || (index > 0 && tokens[index - 1] == from) {
                continue;
            }
            for &to in graph.successors(from) {
                if to == from {
                    // A self-loop leads back here: never a LOSE move, and not counted when
                    // the outcome is known. Searched (misère play), it is a move to a
                    // position never settled first, so this one can never become LOSE.
                    if outcome.is_none() {
                        children.push(position);
                    }
                    continue;
                }
                if !self.spend(step) {
                    self.scratch = child;
                    return false;
                }
                self.moved_into(&tokens, index, to, &mut child);
                if let Some(known) = outcome {
                    let child_outcome = self.outcome(&child);
                    debug_assert!(known != Outcome::Lose || child_outcome == Some(Outcome::Win));
                    if known == Outcome::Win && child_outcome != Some(Outcome::Lose) {
                        continue;
                    }
                }
                match self.index(&child) {
                    Some((child, new)) => {
                        if new {
                            frontier.push(child);
                        }
                        children.push(child);
                    }
                    None => {
                        self.scratch = child;
                        return false;
                    }
                }
            }
        }
        self.scratch = child;
        if loses || outcome.is_none() {
            children.sort_unstable();
            children.dedup();
            self.unsettled_moves[position as usize] = children.len() as u32;
        }
        self.expanded[position as usize] = true;
        true
    }

    /// Phase 2: the retrograde settling of every expanded position whose closure is complete,
    /// on a work budget of its own (as large as the closures'); when that runs out, or the
    /// interrupt is raised, no searched remoteness is known.
    pub(super) fn settle(&mut self) {
        self.work = 0;
        self.next_check = INTERRUPT_CHECK;
        if !self.settle_within_budget() {
            self.unsettled = true;
        }
    }

    fn settle_within_budget(&mut self) -> bool {
        let Some(reverse) = ReverseMoves::of(self) else {
            return false;
        };
        let step = self.width as u64 + STEP_COST;
        let mut answered = std::mem::take(&mut self.answered);
        answered.sort_unstable_by_key(|&p| self.remoteness[p as usize]);
        let mut answered = answered.into_iter().peekable();
        let mut queue: Vec<u32> = Vec::new();
        let mut head = 0;
        let mut parents = Vec::new();
        let mut parent = Vec::new();
        let mut tokens = Vec::new();
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
            let settled_loses = self.outcomes[settled as usize] == Some(Outcome::Lose);
            tokens.clear();
            tokens.extend_from_slice(self.positions.get(settled));
            parents.clear();
            for (index, &w) in tokens.iter().enumerate() {
                if index > 0 && tokens[index - 1] == w {
                    continue;
                }
                for u in reverse.sources_into(w) {
                    if u == w {
                        continue;
                    }
                    if !self.spend(step) {
                        return false;
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
                // A position of unknown outcome (misère play) is settled as either.
                match (self.outcomes[p], settled_loses) {
                    (Some(Outcome::Win) | None, true) => {
                        self.remoteness[p] = next;
                        self.outcomes[p] = Some(Outcome::Win);
                        queue.push(p as u32);
                    }
                    (Some(Outcome::Lose) | None, false) => {
                        self.unsettled_moves[p] -= 1;
                        if self.unsettled_moves[p] == 0 {
                            self.remoteness[p] = next;
                            self.outcomes[p] = Some(Outcome::Lose);
                            queue.push(p as u32);
                        }
                    }
                    _ => {}
                }
            }
        }
        true
    }
}

/// The edges `u -> w` out of the vertices of expanded positions, by `w`, with every edge into
/// a vertex without followers filed under [`SINK`].
struct ReverseMoves {
    /// `(w, u)`, sorted, without repeats.
    edges: Vec<(u32, u32)>,
}

impl ReverseMoves {
    /// The reverse edges the settling of `search` needs, paid for from its budget; `None`
    /// when that runs out.
    fn of(search: &mut SumSearch<'_, '_>) -> Option<Self> {
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
            if !search.spend(u64::from(graph.out_degree(u)) + 1) {
                return None;
            }
            for &w in graph.successors(u) {
                let w = if graph.out_degree(w) == 0 { SINK } else { w };
                edges.push((w, u));
            }
        }
        edges.sort_unstable();
        edges.dedup();
        Some(Self { edges })
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
