//! Child processes for the benchmarks: the process-group guard and loopback addresses of
//! `tunnel-testkit` (shared with the end-to-end tests), how long a program may take to listen,
//! and resident memory from `/proc`.

use anyhow::{Context, Result};
use std::time::Duration;
pub use tunnel_testkit::process::{ProcessGuard, free_addr};

/// How long a started program may take to listen (release builds on a loaded machine).
pub const START: Duration = Duration::from_secs(60);

/// `VmRSS` of `/proc/<pid>/status`, in KiB.
pub fn rss_kib(pid: u32) -> Result<u64> {
    status_kib(pid, "VmRSS")
}

/// `RssAnon` of `/proc/<pid>/status`, in KiB: the part of the resident memory that is the
/// process's own (heap, stacks), without the pages of its binary and files, which are paged in
/// as code runs for the first time.
pub fn anon_kib(pid: u32) -> Result<u64> {
    status_kib(pid, "RssAnon")
}

fn status_kib(pid: u32, field: &str) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("no {field} line"))
}
