//! The sections of the report, one module each. [`ALL`] lists them in report order; the report
//! numbers them from 1 in that order, and `--only` picks them by name (or by that number).
//!
//! They do not run in report order: the scaling section's databases (with the memory section's
//! 100 k server) come last, once the small servers are gone. [`run_all`] holds that schedule and
//! what the sections share (the baseline server, the small database's server, the console copy
//! with the static page, and the run's databases); each module measures its figure and its
//! baseline.
//!
//! The throughput, scaling and SSH CA sections measure on SQLite and, unless `--no-postgres`,
//! on PostgreSQL too: one durable cluster is started for the run when any of them is wanted
//! (after the console sections), a second small server runs on a PostgreSQL database of
//! [`SMALL`] credentials next to the SQLite one until the SSH CA section is done, and the scaling
//! section's databases are made on both, SQLite's first. The cluster section, last, runs on
//! PostgreSQL only (its nodes share one database): without PostgreSQL it is not measured. Every
//! other section runs on SQLite only.

pub(crate) mod agent_restarts;
mod cluster;
mod console_size;
mod console_start;
mod memory;
mod scaling;
mod ssh_cas;
mod throughput;
mod webhooks;

use crate::RunArgs;
use crate::console::{copy_dir, write_static_page};
use crate::machine::{load_average, machine, now_utc};
use crate::procs::{ProcessGuard, START, free_addr, rss_kib};
use crate::report::{self, Header, Section};
use crate::server::{Databases, Kind, Server};
use anyhow::{Result, bail};
use std::process::Command;
use std::time::{Duration, Instant};

/// Every section, in report order.
pub const ALL: [&str; 9] = [
    console_size::NAME,
    console_start::NAME,
    throughput::NAME,
    scaling::NAME,
    ssh_cas::NAME,
    agent_restarts::NAME,
    memory::NAME,
    webhooks::NAME,
    cluster::NAME,
];

/// Credentials in the small database (every section but memory, and the small end of scaling).
const SMALL: u64 = 1_000;
/// Credentials of the memory section.
const MEMORY: u64 = 100_000;

/// A section's number in the report: its place in [`ALL`], from 1.
fn number(name: &str) -> u8 {
    ALL.iter()
        .position(|n| *n == name)
        .and_then(|i| u8::try_from(i + 1).ok())
        .expect("a section of ALL")
}

/// Whether `--only` (names or report numbers) selects the section; every one when empty.
fn wants(args: &RunArgs, name: &str) -> bool {
    let number = number(name).to_string();
    args.only.is_empty() || args.only.iter().any(|o| o == name || *o == number)
}

pub fn run_all(args: RunArgs) -> Result<()> {
    for only in &args.only {
        if !ALL
            .iter()
            .any(|name| name == only || number(name).to_string() == *only)
        {
            bail!(
                "--only {only}: no such section (the sections: {})",
                ALL.join(", ")
            );
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(args))
}

async fn run(args: RunArgs) -> Result<()> {
    let started = Instant::now();
    let load_at_start = load_average();
    std::fs::create_dir_all(&args.out_dir)?;
    let out_dir = std::fs::canonicalize(&args.out_dir)?;
    let mut sections = Vec::new();

    // The baseline server, up for the whole run.
    let baseline_addr = free_addr()?;
    let mut baseline = ProcessGuard::spawn("baseline server", {
        let mut c = Command::new(std::env::current_exe()?);
        c.args(["baseline-server", "--listen", &baseline_addr.to_string()]);
        c
    })?;
    baseline.wait_for_port(baseline_addr, START)?;

    // The console is served from a copy of the build, with the static baseline page added.
    let console = out_dir.join("console");
    copy_dir(&args.dist, &console)?;

    let mut dbs = Databases::sqlite(&out_dir);
    println!("bench: preparing the small database ({SMALL} credentials)");
    let db = dbs.prepare(&args.server_bin, Kind::Sqlite, "db-small", SMALL)?;
    let small = Server::start(&args.server_bin, db, Some(&console))?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let small_idle_rss = rss_kib(small.process.pid())?;
    let baseline_idle_rss = rss_kib(baseline.pid())?;
    let static_page = write_static_page(&small, &console).await?;

    if wants(&args, console_size::NAME) {
        announce(console_size::NAME, "");
        sections.push(timed(console_size::measure(&args.dist, &static_page)).await?);
    }
    if wants(&args, console_start::NAME) {
        announce(console_start::NAME, "");
        sections.push(timed(console_start::measure(&args, &small)).await?);
    }
    // PostgreSQL, once for the run, when a section measures on it: started after the console
    // sections (SQLite only), so that they run as they always did.
    let on_postgres = [throughput::NAME, scaling::NAME, ssh_cas::NAME];
    let small_on_postgres = on_postgres.iter().any(|name| wants(&args, name));
    if !args.no_postgres && (small_on_postgres || wants(&args, cluster::NAME)) {
        println!("bench: starting PostgreSQL (durable settings)");
        let t = Instant::now();
        dbs.start_postgres()?;
        println!("    started in {:.1} s", t.elapsed().as_secs_f64());
    }
    let small_pg = if !args.no_postgres && small_on_postgres {
        println!("bench: preparing the small PostgreSQL database ({SMALL} credentials)");
        let db = dbs.prepare(&args.server_bin, Kind::Postgres, "db-small", SMALL)?;
        Some(Server::start(&args.server_bin, db, Some(&console))?)
    } else {
        None
    };
    let postgres = dbs.postgres_description();
    // The servers of the sections measured on both: SQLite's first.
    let smalls: Vec<&Server> = std::iter::once(&small).chain(small_pg.as_ref()).collect();
    let mut baseline_loaded_rss = None;
    if wants(&args, throughput::NAME) {
        announce(throughput::NAME, "");
        let section = timed(throughput::measure(
            &args,
            &smalls,
            postgres.as_deref(),
            baseline_addr,
        ))
        .await?;
        baseline_loaded_rss = Some(rss_kib(baseline.pid())?);
        sections.push(section);
    }
    if wants(&args, ssh_cas::NAME) {
        announce(ssh_cas::NAME, "");
        sections.push(timed(ssh_cas::measure(&smalls, postgres.as_deref())).await?);
    }
    drop(smalls);
    drop(small_pg);
    if wants(&args, agent_restarts::NAME) {
        announce(agent_restarts::NAME, "");
        sections.push(timed(agent_restarts::measure(&args, &small)).await?);
    }
    if wants(&args, webhooks::NAME) {
        announce(webhooks::NAME, "");
        sections.push(timed(webhooks::measure(&small)).await?);
    }
    drop(small);

    let mut memory_figures = None;
    if wants(&args, scaling::NAME) || wants(&args, memory::NAME) {
        let t = Instant::now();
        let (section, memory) = scaling::measure(&args, &dbs, &console).await?;
        if let Some(mut s) = section {
            s.seconds = t.elapsed().as_secs_f64();
            sections.push(s);
        }
        memory_figures = Some(memory);
    }
    // Last, with no other server running: its nodes and nginx have the machine to themselves.
    if wants(&args, cluster::NAME) {
        announce(cluster::NAME, "");
        sections.push(if args.no_postgres {
            cluster::skipped("the nodes of a cluster share a PostgreSQL database (`--no-postgres`)")
        } else {
            timed(cluster::measure(&args, &dbs, &console)).await?
        });
    }
    // Stops PostgreSQL; its data goes with it.
    drop(dbs);
    if wants(&args, memory::NAME)
        && let Some(m) = memory_figures
    {
        sections.push(memory::section(
            small_idle_rss,
            &m,
            baseline_idle_rss,
            baseline_loaded_rss,
        ));
    }
    drop(baseline);
    sections.sort_by_key(|s| s.number);

    let mut machine = machine();
    // The machine may be shared (other builds, other tests): the load says how quiet it was.
    machine.push((
        "load average (1, 5, 15 min) at start → end".into(),
        format!("{load_at_start} → {}", load_average()),
    ));
    let header = Header {
        date: now_utc(),
        machine,
        commands: if args.commands.is_empty() {
            vec![std::env::args().collect::<Vec<_>>().join(" ")]
        } else {
            args.commands.clone()
        },
        total_seconds: started.elapsed().as_secs_f64(),
        json_path: "target/bench/results.json".to_owned(),
    };
    let closing = report::closing_note(&args.report);
    report::write(
        &args.report,
        &out_dir.join("results.json"),
        &header,
        &sections,
        &closing,
    )?;
    println!(
        "bench: wrote {} and {} ({:.0} s)",
        args.report.display(),
        out_dir.join("results.json").display(),
        started.elapsed().as_secs_f64()
    );
    // The big scratch databases are not worth keeping.
    for dir in ["db-small", "db-100000", "db-1000000"] {
        let _ = std::fs::remove_dir_all(out_dir.join(dir));
    }
    Ok(())
}

/// The progress line of a section: its number and name.
fn announce(name: &str, detail: &str) {
    println!("bench: {}. {name}{detail}", number(name));
}

/// Runs a section, filling in how long it took.
async fn timed(section: impl std::future::Future<Output = Result<Section>>) -> Result<Section> {
    let t = Instant::now();
    let mut s = section.await?;
    s.seconds = t.elapsed().as_secs_f64();
    Ok(s)
}
