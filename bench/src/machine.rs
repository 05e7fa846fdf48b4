//! What the figures depend on, for the report's header: the machine (cores, memory, CPU,
//! kernel, compiler, browser), how loaded it was, and the date.

use std::process::Command;

/// The date and time of the run, in UTC.
pub fn now_utc() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// The first three fields of `/proc/loadavg`.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Cores, memory, CPU model, kernel, browser: what the figures depend on.
pub fn machine() -> Vec<(String, String)> {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown".into());
    let meminfo = read("/proc/meminfo");
    let mem_kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let version = |program: &str| {
        Command::new(program)
            .arg("--version")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_else(|| "unknown".into())
    };
    vec![
        ("cores (available to the run)".into(), cores.to_string()),
        (
            "memory".into(),
            format!("{:.1} GiB", mem_kib as f64 / 1024.0 / 1024.0),
        ),
        ("CPU".into(), model),
        (
            "kernel".into(),
            read("/proc/sys/kernel/osrelease").trim().to_owned(),
        ),
        ("rustc".into(), version("rustc")),
        ("browser".into(), version(tunnel_testkit::browser::CHROMIUM)),
    ]
}
