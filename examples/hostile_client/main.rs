//! Hostile clients of a real `grundy-server`, for `scripts/load-fault.sh`: each attack
//! provokes one class of defect the service once had (the regression tests in `tests/service/`
//! provoke the same in-process), measures the server from outside (CPU time and memory from
//! `/proc`, gauges from its metrics endpoint) and prints one line of `key=value` facts, which
//! the script judges. Loopback only.
//!
//! `hostile_client ATTACK SERVER_ADDRESS SERVER_PID [METRICS_ADDRESS]`, ATTACK one of the
//! names in `main`; an attack that cannot run prints `error=...` and exits 2.

mod analysis;
mod bodies;
mod observe;
mod requests;

use analysis::*;
use bodies::*;

use std::time::Duration;

use anyhow::anyhow;
use grundy::generate::Shape;

/// The server under attack.
pub(crate) struct Target {
    pub(crate) server: String,
    pub(crate) pid: u32,
    pub(crate) metrics: Option<String>,
}

/// The gauge of the search jobs running.
pub(crate) const SEARCHES: &str = r#"grundy_work_jobs_running{kind="search"}"#;

/// Bound on every wait of an attack.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(attack), Some(server), Some(pid)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("usage: hostile_client ATTACK SERVER_ADDRESS SERVER_PID [METRICS_ADDRESS]");
        std::process::exit(2);
    };
    let pid = pid.parse().expect("SERVER_PID");
    let t = Target {
        server: server.clone(),
        pid,
        metrics: args.get(3).cloned(),
    };
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let result = runtime.block_on(async {
        match attack.as_str() {
            "huge-values" => huge_values(&t).await,
            "wide-position" => wide_position(&t).await,
            // 26 s of search when only positions were counted.
            "budget-sum-dag" => budget_sum(&t, Shape::Dag, 1_000_000, 7).await,
            // Sparse: with 10^6 edges almost every position draws, which needs no search.
            "budget-sum-cyclic" => budget_sum(&t, Shape::Cyclic, 200_000, 5).await,
            "cancelled-search" => abandoned_search(&t, None).await,
            "deadline-search" => abandoned_search(&t, Some(Duration::from_secs(2))).await,
            "never-reads" => never_reads(&t).await,
            "stalled-unary" => stalled_unary(&t).await,
            "render-latency" => render_latency(&t).await,
            "stalled-render" => stalled_render(&t).await,
            "gzip-verdict" => gzip_verdict(&t).await,
            "starvation" => starvation(&t).await,
            _ => Err(anyhow!("unknown attack {attack}")),
        }
    });
    match result {
        Ok(line) => println!("{line}"),
        Err(e) => {
            println!(
                "error={}",
                format!("{e:#}").replace(char::is_whitespace, "_")
            );
            std::process::exit(2);
        }
    }
}
