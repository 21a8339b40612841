//! Ordering: the left-to-right order of the points (vertices and dummies) of every row, by
//! median sweeps and transposition from two starting orders, with the crossings counted by a
//! Fenwick tree.

/// Down-and-up sweeps of the median ordering, per starting order.
const SWEEPS: usize = 24;

/// A depth-first numbering of the points (vertices and dummies), from the top rows down:
/// children of one parent get neighbouring numbers, a good starting order for the sweeps.
pub(super) fn depth_first_rank(up: &[Vec<u32>], down: &[Vec<u32>]) -> Vec<usize> {
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

/// Median sweeps over the rows, each followed by transposition, keeping the order with the
/// fewest crossings; returns that number of crossings.
pub(super) fn reduce_crossings(order: &mut [Vec<u32>], up: &[Vec<u32>], down: &[Vec<u32>]) -> u64 {
    let mut position = vec![0usize; up.len()];
    for row in order.iter() {
        for (i, &p) in row.iter().enumerate() {
            position[p as usize] = i;
        }
    }
    transpose(order, up, down, &mut position);
    let mut best = order.to_vec();
    let mut best_crossings = crossings(order, down, &position);
    for sweep in 0..SWEEPS {
        if best_crossings == 0 {
            break;
        }
        let downwards = sweep % 2 == 0;
        let rows: Vec<usize> = if downwards {
            (1..order.len()).collect()
        } else {
            (0..order.len().saturating_sub(1)).rev().collect()
        };
        for r in rows {
            let neighbours = if downwards { up } else { down };
            let mut keyed: Vec<(f64, usize, u32)> = order[r]
                .iter()
                .map(|&p| {
                    let mut at: Vec<usize> = neighbours[p as usize]
                        .iter()
                        .map(|&q| position[q as usize])
                        .collect();
                    let key = weighted_median(&mut at).unwrap_or(position[p as usize] as f64);
                    (key, position[p as usize], p)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (i, &(_, _, p)) in keyed.iter().enumerate() {
                order[r][i] = p;
                position[p as usize] = i;
            }
        }
        transpose(order, up, down, &mut position);
        let count = crossings(order, down, &position);
        if count < best_crossings {
            best_crossings = count;
            best = order.to_vec();
        }
    }
    order.clone_from_slice(&best);
    best_crossings
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

/// Swaps neighbouring points of a row while a swap removes crossings with the rows above
/// and below (a bounded number of passes per row).
fn transpose(order: &mut [Vec<u32>], up: &[Vec<u32>], down: &[Vec<u32>], position: &mut [usize]) {
    // Pairs (a of u, b of v) with a right of b: the crossings of u's and v's edges to one side.
    let crossed = |u: u32, v: u32, side: &[Vec<u32>], position: &[usize]| -> u64 {
        let mut count = 0;
        for &a in &side[u as usize] {
            for &b in &side[v as usize] {
                if position[a as usize] > position[b as usize] {
                    count += 1;
                }
            }
        }
        count
    };
    for _ in 0..8 {
        let mut improved = false;
        for row in order.iter_mut() {
            for i in 0..row.len().saturating_sub(1) {
                let (u, v) = (row[i], row[i + 1]);
                let now = crossed(u, v, up, position) + crossed(u, v, down, position);
                let swapped = crossed(v, u, up, position) + crossed(v, u, down, position);
                if swapped < now {
                    row.swap(i, i + 1);
                    position[u as usize] = i + 1;
                    position[v as usize] = i;
                    improved = true;
                }
            }
        }
        if !improved {
            break;
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
