//! Coordinates: the x of every point once the rows are ordered, each point pulled towards
//! the weighted mean of its neighbours with the minimum separation kept.

/// Passes of the coordinate refinement.
const REFINEMENTS: usize = 8;
/// Horizontal gap between neighbouring points.
const GAP: f64 = 18.0;

/// Centre x of every point, and the drawing's width.
pub(super) fn coordinates(
    vertices: usize,
    order: &[Vec<u32>],
    up: &[Vec<u32>],
    down: &[Vec<u32>],
    width: &[f64],
) -> (Vec<f64>, f64) {
    let mut x = vec![0.0f64; width.len()];
    for row in order {
        let mut left = 0.0;
        for &p in row {
            x[p as usize] = left + width[p as usize] / 2.0;
            left += width[p as usize] + GAP;
        }
    }
    for pass in 0..REFINEMENTS {
        let rows: Vec<usize> = if pass % 2 == 0 {
            (0..order.len()).collect()
        } else {
            (0..order.len()).rev().collect()
        };
        for r in rows {
            let desired: Vec<f64> = order[r]
                .iter()
                .map(|&p| {
                    // dot's weights: long edges (dummy to dummy) pull hardest, so they
                    // run straight instead of weaving between the rows.
                    let weight = |q: u32| match (p as usize >= vertices, q as usize >= vertices) {
                        (true, true) => 8.0,
                        (false, false) => 1.0,
                        _ => 2.0,
                    };
                    let adjacent = up[p as usize].iter().chain(&down[p as usize]);
                    let (sum, total) = adjacent.fold((0.0, 0.0), |(s, t), &q| {
                        (s + weight(q) * x[q as usize], t + weight(q))
                    });
                    if total == 0.0 {
                        x[p as usize]
                    } else {
                        sum / total
                    }
                })
                .collect();
            place_row(&order[r], &desired, width, &mut x);
        }
    }
    let mut min = f64::INFINITY;
    let mut max = f64::NEG_INFINITY;
    for (p, &centre) in x.iter().enumerate() {
        min = min.min(centre - width[p] / 2.0);
        max = max.max(centre + width[p] / 2.0);
    }
    if !min.is_finite() {
        return (x, 0.0);
    }
    for centre in &mut x {
        *centre -= min;
    }
    (x, max - min)
}

/// Places one row as close to `desired` as the separation allows: the mean of a placement
/// pushed rightwards and one pushed leftwards, both of which keep every gap (so the mean does).
fn place_row(row: &[u32], desired: &[f64], width: &[f64], x: &mut [f64]) {
    let separation = |a: u32, b: u32| (width[a as usize] + width[b as usize]) / 2.0 + GAP;
    let mut rightwards = desired.to_vec();
    for i in 1..row.len() {
        let least = rightwards[i - 1] + separation(row[i - 1], row[i]);
        rightwards[i] = rightwards[i].max(least);
    }
    let mut leftwards = desired.to_vec();
    for i in (0..row.len().saturating_sub(1)).rev() {
        let most = leftwards[i + 1] - separation(row[i], row[i + 1]);
        leftwards[i] = leftwards[i].min(most);
    }
    for (i, &p) in row.iter().enumerate() {
        x[p as usize] = (rightwards[i] + leftwards[i]) / 2.0;
    }
}
