//! What the criterion benches share: the interleaved timings behind the ratio lines each
//! prints after its group.

use std::time::Instant;

/// The median of `rounds` timings of each of `works`, taken in turns (one run of each per
/// round, so that the machine's drift falls on all of them alike), in seconds.
pub fn interleaved_medians<const N: usize>(
    rounds: usize,
    mut works: [&mut dyn FnMut(); N],
) -> [f64; N] {
    let mut samples = [const { Vec::new() }; N];
    for _ in 0..rounds {
        for (work, times) in works.iter_mut().zip(&mut samples) {
            let start = Instant::now();
            work();
            times.push(start.elapsed().as_secs_f64());
        }
    }
    samples.map(|mut times| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    })
}
