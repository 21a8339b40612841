//! The cost of one position analysis at the default budgets, on the graphs where a search is
//! the most expensive: sums of a few tokens on large random graphs (every position a cache
//! miss), wide positions, and high out-degrees.
//!
//! `cargo run --release --example analysis_cost -- [WORK_BUDGET]`: for each case, the CPU
//! time of the analysis, the positions explored, whether it went over the budget, and the
//! peak RSS of the process so far. The work budget's default is sized so that the slowest of
//! them takes about a second; this is the measurement `docs/operating.md` quotes.

use std::time::Instant;

use grundy::engine::{AnalysisOptions, Game, Limits, Remoteness, analyse};
use grundy::generate::{Shape, graph};

fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |kib| kib >> 10)
}

fn main() {
    let work_budget = std::env::args()
        .nth(1)
        .map_or(grundy::engine::DEFAULT_WORK_BUDGET, |a| {
            a.parse().expect("WORK_BUDGET")
        });
    let options = AnalysisOptions {
        work_budget,
        ..AnalysisOptions::default()
    };
    let cases = [
        (
            "DAG 10^5 vertices, 10^6 edges",
            Shape::Dag,
            100_000,
            1_000_000,
        ),
        (
            "cyclic 10^5 vertices, 10^6 edges",
            Shape::Cyclic,
            100_000,
            1_000_000,
        ),
        ("DAG 10^3 vertices, 10^4 edges", Shape::Dag, 1_000, 10_000),
        ("fan 10^4 vertices, 10^5 edges", Shape::Fan, 10_000, 100_000),
    ];
    for (name, shape, vertices, edges) in cases {
        let analysis = analyse(
            Game::token_sliding(graph(shape, vertices, edges, 5)),
            &Limits::default(),
        )
        .expect("analysed");
        analysis.remoteness_table();
        for tokens in [2u32, 3, 9, 1000] {
            let mut worst = (0.0f64, 0u64, false);
            for seed in 0..3u32 {
                let position: Vec<u32> = (0..tokens)
                    .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed * 7919)) % vertices)
                    .collect();
                let start = Instant::now();
                let found = analysis.analyse_position(&position, &options).unwrap();
                let seconds = start.elapsed().as_secs_f64();
                let (explored, over) = match found.remoteness {
                    Remoteness::OverBudget {
                        positions_explored, ..
                    } => (positions_explored, true),
                    _ => (0, false),
                };
                if seconds > worst.0 {
                    worst = (seconds, explored, over);
                }
            }
            println!(
                "{name}, {tokens} tokens: slowest {:.3} s, over budget {} ({} positions), peak RSS {} MiB",
                worst.0,
                worst.2,
                worst.1,
                peak_rss_mib()
            );
        }
    }
}
