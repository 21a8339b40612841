//! Peak memory of the acyclic table against the bytes of its inputs and outputs.
//!
//! `cargo run --release --example table_memory -- [VERTICES] [EDGES]` (default 10^6, 10^7):
//! builds a random DAG, resets the kernel's peak-RSS counter (Linux `clear_refs`), computes
//! the table, and prints the CSR bytes, table bytes, and the peak RSS reached while computing,
//! so that `peak / (CSR + table)` is the memory ratio the README reports.

use std::time::Instant;

use grundy::engine::{Game, Limits, analyse};
use grundy::generate::{Shape, graph};

fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let vertices: u32 = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("VERTICES"));
    let edges: u64 = args
        .next()
        .map_or(10_000_000, |a| a.parse().expect("EDGES"));
    let shape = match args.next().as_deref() {
        Some("chain") => Shape::Chain,
        Some("cyclic") => Shape::Cyclic,
        _ => Shape::Dag,
    };
    let digraph = graph(shape, vertices, edges, 7);
    let csr_bytes = digraph.heap_bytes();
    // The generator's adjacency lists are freed by now; hand their heap back, so that the RSS
    // before the analysis is the graph's, not what the allocator kept.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of the allocator's heap to the system.
    unsafe {
        libc::malloc_trim(0);
    }
    // Forget the generator's peak: measure only what analysis adds on top of the graph.
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let rss_before = status_kib("VmRSS:").unwrap_or(0);
    let started = Instant::now();
    let analysis = analyse(Game::token_sliding(digraph), &Limits::default()).expect("analysable");
    let elapsed = started.elapsed();
    let peak = status_kib("VmHWM:").unwrap_or(0);
    let total_bytes = analysis.heap_bytes();
    println!("shape               {shape:?}");
    println!("vertices            {vertices}");
    println!(
        "edges               {}",
        analysis.game().graph().edge_count()
    );
    println!("cyclic              {}", analysis.is_cyclic());
    println!("analysis time       {:.3} s", elapsed.as_secs_f64());
    println!(
        "CSR bytes           {:.1} MiB",
        csr_bytes as f64 / 1048576.0
    );
    println!(
        "CSR + table bytes   {:.1} MiB",
        total_bytes as f64 / 1048576.0
    );
    println!("RSS before          {:.1} MiB", rss_before as f64 / 1024.0);
    if reset {
        println!("peak RSS during     {:.1} MiB", peak as f64 / 1024.0);
        println!(
            "peak / (CSR+table) {:.2}",
            (peak as f64 * 1024.0) / total_bytes as f64
        );
    } else {
        println!("peak RSS            unavailable (no /proc/self/clear_refs)");
    }
}
