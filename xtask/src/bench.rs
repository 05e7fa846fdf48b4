//! `cargo xtask bench`: builds the server, the agent, the benchmark runner and the console in
//! release, then runs `tunnel-bench run`, which measures and writes `BENCHMARKS.md` (and the raw
//! numbers in `target/bench/results.json`). Benchmarks never fail on a time; only a broken
//! build or a benchmark that cannot run fails the command.
//!
//! The console is built into `target/bench/dist` rather than `dist/`, so a benchmark run never
//! replaces the console that `cargo xtask run` or the end-to-end tests are serving.
//!
//! Some sections measure on PostgreSQL too (a durable cluster the bench starts from Debian's
//! `postgresql` programs): Debian's package is installed first, unless `--no-postgres` is passed.
//! So is Debian's nginx, which the cluster section (PostgreSQL only) puts in front of the nodes.

use crate::shell::{cmd, done, exec, root, step, target_dir};
use crate::tools::{ensure_browser, ensure_build_tools, ensure_nginx, ensure_postgres};
use anyhow::Result;
use std::path::Path;

/// What both commands build first.
const RELEASE_BUILD: [&str; 9] = [
    "cargo",
    "build",
    "--release",
    "-p",
    "tunnel-server",
    "-p",
    "tunnel-agent",
    "-p",
    "tunnel-bench",
];

fn release_build() -> Result<()> {
    let timer = step("release build: tunnel-server, tunnel-agent, tunnel-bench");
    exec(cmd(RELEASE_BUILD[0], &RELEASE_BUILD[1..]))?;
    done(timer);
    Ok(())
}

pub fn run(extra: &[String]) -> Result<()> {
    ensure_build_tools()?;
    ensure_browser()?;
    if !extra.iter().any(|a| a == "--no-postgres") {
        ensure_postgres()?;
        ensure_nginx()?;
    }
    let out = root().join("target/bench");
    let dist = out.join("dist");
    let dist_arg = dist.to_string_lossy().into_owned();

    release_build()?;

    let trunk = ["trunk", "build", "--release", "--dist", &dist_arg];
    let timer = step("console release build (trunk, then compressed)");
    crate::run::build_console_into(Path::new(&dist_arg))?;
    done(timer);

    let release = target_dir("release");
    let bench = release.join("tunnel-bench");
    let mut args: Vec<String> = vec![
        "run".into(),
        "--server-bin".into(),
        release.join("tunnel-server").to_string_lossy().into_owned(),
        "--agent-bin".into(),
        release.join("tunnel-agent").to_string_lossy().into_owned(),
        "--dist".into(),
        dist_arg.clone(),
        "--out-dir".into(),
        out.to_string_lossy().into_owned(),
        "--report".into(),
        root().join("BENCHMARKS.md").to_string_lossy().into_owned(),
    ];
    args.extend(extra.iter().cloned());
    // The report lists the commands, relative to the workspace root so they can be re-run.
    let relative = |s: &str| {
        s.strip_prefix(&format!("{}/", root().display()))
            .unwrap_or(s)
            .to_owned()
    };
    let mut shown_run = vec![relative(&bench.to_string_lossy())];
    shown_run.extend(args.iter().map(|a| relative(a)));
    let commands = [
        format!("cargo xtask bench {}", extra.join(" "))
            .trim_end()
            .to_owned(),
        "# which runs:".to_owned(),
        RELEASE_BUILD.join(" "),
        trunk.join(" ").replace(&dist_arg, "target/bench/dist"),
        shown_run.join(" "),
    ];
    for c in &commands {
        args.extend(["--commands".to_owned(), c.clone()]);
    }

    let timer = step("benchmarks (tunnel-bench run)");
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    exec(cmd(&bench.to_string_lossy(), &arg_refs))?;
    done(timer);
    Ok(())
}

/// `cargo xtask soak --minutes N`: builds the server, the agent and the runner in release, then
/// runs `tunnel-bench soak`, which writes its table into `BENCHMARKS.md` (between its markers).
pub fn soak(minutes: f64, agents: usize) -> Result<()> {
    ensure_build_tools()?;
    release_build()?;
    let release = target_dir("release");
    let shown = format!("cargo xtask soak --minutes {minutes} --agents {agents}");
    let args = [
        "soak".to_owned(),
        "--server-bin".into(),
        release.join("tunnel-server").to_string_lossy().into_owned(),
        "--agent-bin".into(),
        release.join("tunnel-agent").to_string_lossy().into_owned(),
        "--out-dir".into(),
        root().join("target/bench").to_string_lossy().into_owned(),
        "--report".into(),
        root().join("BENCHMARKS.md").to_string_lossy().into_owned(),
        "--minutes".into(),
        minutes.to_string(),
        "--agents".into(),
        agents.to_string(),
        "--commands".into(),
        shown,
    ];
    let timer = step("soak (tunnel-bench soak)");
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    exec(cmd(
        &release.join("tunnel-bench").to_string_lossy(),
        &arg_refs,
    ))?;
    done(timer);
    Ok(())
}
