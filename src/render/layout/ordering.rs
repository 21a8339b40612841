//! Ordering: the left-to-right order of the points (vertices and dummies) of every row, as
//! in dot's `mincross`: from several starting orders (input order, depth-first, and
//! breadth-first from the top and from the bottom), sweeps that sort each row by the
//! weighted median of its neighbours in the row before, each followed by transposition of
//! neighbouring points; the order with the fewest crossings (counted with a Fenwick tree) is
//! kept, and the best start gets a longer run.

/// Sweeps given to each starting order, and to the best one afterwards.
const START_SWEEPS: usize = 16;
const FINAL_SWEEPS: usize = 32;
/// Starts given the longer run (the best ones after their short runs).
const FINALISTS: usize = 3;
/// A later finalist replaces an earlier one only below this fraction of its crossings: the
/// count is a proxy (two long edges may cross several times, and a reader sees one pair),
/// so small differences are noise and the best start's run is kept.
const CLEARLY_BETTER: f64 = 0.95;
/// A run stops after this many sweeps without a real improvement (dot's `MinQuit`).
const STALL: usize = 12;
/// An improvement is real below this fraction of the best count (dot's `Convergence`).
const CONVERGENCE: f64 = 0.995;
/// Work allowed in all (pairs of edges compared by transposition): an eighth for each
/// starting order, half for the final run. Small graphs never come near it; it bounds the
/// time of big ones.
const WORK: u64 = 40_000_000;

/// The points of every row, ordered for few crossings. `row[p]` is the row of point `p`;
/// `up[p]` and `down[p]` its neighbours in the rows just above and just below.
pub(super) fn order_rows(
    row: &[u32],
    rows: usize,
    up: &[Vec<u32>],
    down: &[Vec<u32>],
) -> Vec<Vec<u32>> {
    let mut input: Vec<Vec<u32>> = vec![Vec::new(); rows];
    for (point, &r) in row.iter().enumerate() {
        input[r as usize].push(point as u32);
    }
    let ranked = |rank: &[usize]| {
        let mut order = input.clone();
        for r in &mut order {
            r.sort_by_key(|&p| rank[p as usize]);
        }
        order
    };
    let starts = [
        ranked(&depth_first_rank(up, down)),
        ranked(&breadth_first_rank(up, down)),
        ranked(&breadth_first_rank(down, up)),
        input.clone(),
    ];
    let mut tried: Vec<(u64, bool, Vec<Vec<u32>>)> = Vec::new();
    for start in &starts {
        for ties in [true, false] {
            let mut order = start.clone();
            let mut sweeper = Sweeper::new(&order, up, down, WORK / 16);
            sweeper.ties = ties;
            let count = sweeper.run(&mut order, START_SWEEPS);
            tried.push((count, ties, order));
        }
    }
    tried.sort_by_key(|t| t.0);
    tried.truncate(FINALISTS);
    let mut best: Option<(u64, Vec<Vec<u32>>)> = None;
    for (count, ties, mut order) in tried {
        let count = if count > 0 {
            let mut sweeper = Sweeper::new(&order, up, down, WORK / 2 / FINALISTS as u64);
            sweeper.ties = ties;
            sweeper.run(&mut order, FINAL_SWEEPS)
        } else {
            0
        };
        if best
            .as_ref()
            .is_none_or(|(least, _)| (count as f64) < CLEARLY_BETTER * *least as f64)
        {
            best = Some((count, order));
        }
    }
    best.map(|(_, order)| order).unwrap_or_default()
}

/// A breadth-first numbering of the points from those without `parents` (dot's initial
/// order): each row fills in the order the search reaches it.
fn breadth_first_rank(parents: &[Vec<u32>], children: &[Vec<u32>]) -> Vec<usize> {
    let points = parents.len();
    let mut rank = vec![usize::MAX; points];
    let mut queue = std::collections::VecDeque::new();
    let mut next = 0usize;
    let roots = (0..points as u32).filter(|&p| parents[p as usize].is_empty());
    for root in roots.chain(0..points as u32) {
        if rank[root as usize] != usize::MAX {
            continue;
        }
        rank[root as usize] = next;
        next += 1;
        queue.push_back(root);
        while let Some(p) = queue.pop_front() {
            for &q in children[p as usize].iter().chain(&parents[p as usize]) {
                if rank[q as usize] == usize::MAX {
                    rank[q as usize] = next;
                    next += 1;
                    queue.push_back(q);
                }
            }
        }
    }
    rank
}

/// The state of one run of sweeps: where each point is in its row.
struct Sweeper<'a> {
    up: &'a [Vec<u32>],
    down: &'a [Vec<u32>],
    position: Vec<usize>,
    /// Work left (pairs of edges compared by transposition); at 0 the run stops.
    work: u64,
    /// Whether sweeps also make moves that keep the count (dot's schedule).
    ties: bool,
}

impl<'a> Sweeper<'a> {
    fn new(order: &[Vec<u32>], up: &'a [Vec<u32>], down: &'a [Vec<u32>], work: u64) -> Self {
        let mut position = vec![0usize; up.len()];
        for row in order {
            for (i, &p) in row.iter().enumerate() {
                position[p as usize] = i;
            }
        }
        Self {
            up,
            down,
            position,
            work,
            ties: true,
        }
    }

    /// Up to `sweeps` sweeps from `order`, leaving in it the best order seen (ties go to the
    /// later one, which lets a run cross plateaus); returns its crossings.
    fn run(&mut self, order: &mut [Vec<u32>], sweeps: usize) -> u64 {
        self.transpose(order, false);
        let mut best = order.to_vec();
        let mut best_crossings = crossings(order, self.down, &self.position);
        let mut stalled = 0;
        for sweep in 0..sweeps {
            if best_crossings == 0 || stalled >= STALL || self.work == 0 {
                break;
            }
            stalled += 1;
            self.sweep(order, sweep);
            let count = crossings(order, self.down, &self.position);
            if count <= best_crossings {
                if (count as f64) < CONVERGENCE * best_crossings as f64 {
                    stalled = 0;
                }
                best_crossings = count;
                best.clone_from_slice(order);
            }
        }
        order.clone_from_slice(&best);
        self.place(order);
        if best_crossings > 0 {
            self.transpose(order, false);
            best_crossings = crossings(order, self.down, &self.position);
        }
        best_crossings
    }

    fn place(&mut self, order: &[Vec<u32>]) {
        for row in order {
            for (i, &p) in row.iter().enumerate() {
                self.position[p as usize] = i;
            }
        }
    }

    /// One sweep (dot's `mincross_step`): even sweeps go down, odd ones up; in two sweeps out
    /// of four, points with equal medians swap, in the other two transposition takes swaps
    /// that keep the count.
    fn sweep(&mut self, order: &mut [Vec<u32>], sweep: usize) {
        let reverse = self.ties && sweep % 4 < 2;
        let downwards = sweep.is_multiple_of(2);
        let rows: Vec<usize> = if downwards {
            (1..order.len()).collect()
        } else {
            (0..order.len().saturating_sub(1)).rev().collect()
        };
        let neighbours = if downwards { self.up } else { self.down };
        for r in rows {
            // Points without neighbours on that side keep their place; the others are
            // sorted by median into the remaining places.
            let mut movable: Vec<(f64, usize, u32)> = Vec::with_capacity(order[r].len());
            let mut slots: Vec<usize> = Vec::with_capacity(order[r].len());
            for (i, &p) in order[r].iter().enumerate() {
                let mut at: Vec<usize> = neighbours[p as usize]
                    .iter()
                    .map(|&q| self.position[q as usize])
                    .collect();
                if let Some(key) = weighted_median(&mut at) {
                    let tie = if reverse { usize::MAX - i } else { i };
                    movable.push((key, tie, p));
                    slots.push(i);
                }
            }
            movable.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (&slot, &(_, _, p)) in slots.iter().zip(&movable) {
                order[r][slot] = p;
                self.position[p as usize] = slot;
            }
        }
        self.transpose(order, self.ties && !reverse);
    }

    /// Crossings between the edges of `u` and those of `v` to one side when `u` is left of
    /// `v`: pairs of neighbours (a of u, b of v) with a right of b.
    fn crossed(&self, u: u32, v: u32, side: &[Vec<u32>]) -> u64 {
        let mut count = 0;
        for &a in &side[u as usize] {
            for &b in &side[v as usize] {
                if self.position[a as usize] > self.position[b as usize] {
                    count += 1;
                }
            }
        }
        count
    }

    /// Swaps neighbouring points of a row while swaps remove crossings with the rows above
    /// and below (dot's `transpose`); with `reverse`, swaps that keep the count are made
    /// too. A row is looked at again only when it or a neighbouring row changed.
    fn transpose(&mut self, order: &mut [Vec<u32>], reverse: bool) {
        let rows = order.len();
        let mut candidate = vec![true; rows];
        loop {
            let mut gained = 0u64;
            for r in 0..rows {
                if !candidate[r] {
                    continue;
                }
                candidate[r] = false;
                for i in 0..order[r].len().saturating_sub(1) {
                    let (u, v) = (order[r][i], order[r][i + 1]);
                    let pairs = |side: &[Vec<u32>]| {
                        (side[u as usize].len() * side[v as usize].len()) as u64
                    };
                    let cost = 1 + 2 * (pairs(self.up) + pairs(self.down));
                    if self.work < cost {
                        self.work = 0;
                        return;
                    }
                    self.work -= cost;
                    let now = self.crossed(u, v, self.up) + self.crossed(u, v, self.down);
                    if now == 0 {
                        continue;
                    }
                    let swapped = self.crossed(v, u, self.up) + self.crossed(v, u, self.down);
                    if swapped < now || (reverse && swapped == now) {
                        order[r].swap(i, i + 1);
                        self.position[u as usize] = i + 1;
                        self.position[v as usize] = i;
                        gained += now - swapped;
                        candidate[r] = true;
                        candidate[r.saturating_sub(1)] = true;
                        if r + 1 < rows {
                            candidate[r + 1] = true;
                        }
                    }
                }
            }
            if gained == 0 {
                break;
            }
        }
    }
}

/// A depth-first numbering of the points (vertices and dummies), from the top rows down:
/// children of one parent get neighbouring numbers, a good starting order for the sweeps.
fn depth_first_rank(up: &[Vec<u32>], down: &[Vec<u32>]) -> Vec<usize> {
    let points = up.len();
    let mut rank = vec![usize::MAX; points];
    let mut roots: Vec<u32> = (0..points as u32)
        .filter(|&p| up[p as usize].is_empty())
        .collect();
    roots.extend(0..points as u32);
    let mut next = 0usize;
    let mut stack: Vec<u32> = Vec::new();
    for root in roots {
        if rank[root as usize] != usize::MAX {
            continue;
        }
        stack.push(root);
        while let Some(p) = stack.pop() {
            if rank[p as usize] != usize::MAX {
                continue;
            }
            rank[p as usize] = next;
            next += 1;
            // Reversed, so that the first child is visited first.
            for &q in down[p as usize].iter().rev() {
                if rank[q as usize] == usize::MAX {
                    stack.push(q);
                }
            }
        }
    }
    rank
}

/// The median of the neighbours' positions, weighted towards the denser side when there is
/// an even number of them (as in dot); `None` without neighbours.
fn weighted_median(at: &mut [usize]) -> Option<f64> {
    at.sort_unstable();
    let m = at.len() / 2;
    match at.len() {
        0 => None,
        len if len % 2 == 1 => Some(at[m] as f64),
        2 => Some((at[0] + at[1]) as f64 / 2.0),
        len => {
            let left = (at[m - 1] - at[0]) as f64;
            let right = (at[len - 1] - at[m]) as f64;
            if left + right == 0.0 {
                Some((at[m - 1] + at[m]) as f64 / 2.0)
            } else {
                Some((at[m - 1] as f64 * right + at[m] as f64 * left) / (left + right))
            }
        }
    }
}

/// Edge crossings between consecutive rows: inversions among the segments sorted by their
/// upper end, counted with a Fenwick tree over the lower ends.
fn crossings(order: &[Vec<u32>], down: &[Vec<u32>], position: &[usize]) -> u64 {
    let mut total = 0u64;
    for pair in order.windows(2) {
        let mut segments: Vec<(usize, usize)> = Vec::new();
        for &p in &pair[0] {
            for &q in &down[p as usize] {
                segments.push((position[p as usize], position[q as usize]));
            }
        }
        segments.sort_unstable();
        let mut tree = vec![0u64; pair[1].len() + 1];
        for (seen, &(_, lower)) in segments.iter().enumerate() {
            // Segments seen so far ending strictly right of `lower` cross this one.
            let mut at_or_left = 0u64;
            let mut i = lower + 1;
            while i > 0 {
                at_or_left += tree[i];
                i &= i - 1;
            }
            total += seen as u64 - at_or_left;
            let mut i = lower + 1;
            while i < tree.len() {
                tree[i] += 1;
                i += i & i.wrapping_neg();
            }
        }
    }
    total
}
