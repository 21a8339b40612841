//! The server under attack, seen from outside: CPU time and memory from `/proc`, gauges
//! from its metrics endpoint.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};

use crate::{PATIENCE, Target};

/// The server's CPU time so far (user and system) in ms: `/proc/PID/stat` counts it in ticks
/// of 10 ms (USER_HZ, 100 on Linux); utime and stime are the 12th and 13th fields after the
/// command name (which may hold spaces).
pub(crate) fn cpu_ms(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields = stat.rsplit_once(')').map_or("", |(_, fields)| fields);
    let ticks = fields.split_whitespace().skip(11).take(2);
    ticks.filter_map(|f| f.parse::<u64>().ok()).sum::<u64>() * 10
}

/// A figure of the server's `/proc/PID/status` in KiB: `VmRSS` now, `VmHWM` its peak.
pub(crate) fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|line| line.starts_with(field));
    line.and_then(|line| line.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// Starts the server's peak (`VmHWM`) again from its resident memory now; returns that.
pub(crate) fn reset_peak(pid: u32) -> Result<u64> {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").context("resetting VmHWM")?;
    Ok(memory_kib(pid, "VmRSS"))
}

/// How long after `since` the server's resident memory was back within `slack` KiB of `base`
/// (-1: not within [`PATIENCE`]).
pub(crate) async fn back_to(pid: u32, base: u64, slack: u64, since: Instant) -> i128 {
    while since.elapsed() < PATIENCE {
        if memory_kib(pid, "VmRSS") <= base + slack {
            return since.elapsed().as_millis() as i128;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    -1
}

/// The value of one series (its name and labels) on the server's metrics page.
pub(crate) fn gauge(t: &Target, series: &str) -> Result<f64> {
    let address = t
        .metrics
        .as_deref()
        .context("this attack needs METRICS_ADDRESS")?;
    let mut stream = std::net::TcpStream::connect(address)?;
    stream.set_read_timeout(Some(PATIENCE))?;
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )?;
    let mut page = String::new();
    stream.read_to_string(&mut page)?;
    let line = page
        .lines()
        .find(|line| line.starts_with(&format!("{series} ")));
    let value = line.and_then(|line| line.rsplit(' ').next()?.parse().ok());
    value.with_context(|| format!("no {series} on the metrics page"))
}

/// Waits (at most [`PATIENCE`]) until the gauge `series` is at least `least`.
pub(crate) async fn wait_for_gauge(t: &Target, series: &str, least: f64) -> Result<()> {
    let since = Instant::now();
    while gauge(t, series)? < least {
        anyhow::ensure!(since.elapsed() < PATIENCE, "{series} never reached {least}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(())
}

pub(crate) async fn within<F: std::future::Future>(future: F) -> Result<F::Output> {
    let waited = tokio::time::timeout(PATIENCE, future).await;
    waited.map_err(|_| anyhow!("no answer within {PATIENCE:?}"))
}
