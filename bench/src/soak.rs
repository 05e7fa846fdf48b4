//! `tunnel-bench soak` (run by `cargo xtask soak --minutes N`): the release server on a fresh
//! SQLite database, with its default limits on agent connections and failed keys, under a long
//! mixed load: `--agents` real agents connected, some restarted and some stopped through the API
//! every second, some killed and started again, while API clients create, read, list and delete
//! credentials. Every 10 s it samples what the server holds: resident memory, its anonymous part
//! (heap and stacks) and open file descriptors (`/proc`), tasks alive and sessions held (its
//! `--metrics-listen` gauges).
//!
//! A leak shows as growth that does not level off: the table compares the start (every agent
//! connected), the end (the load stopped, every agent connected again) and the second half of
//! the run against its first. It is written into `BENCHMARKS.md` between the `<!-- soak -->`
//! markers, which sit in the report's closing note, so `tunnel-bench run` keeps them (and the
//! soak keeps the rest of the file).

use crate::http::{Conn, Req};
use crate::procs::{ProcessGuard, anon_kib, free_addr, rss_kib};
use crate::report::kib;
use crate::sections::agent_restarts::{agent_token, spawn_agent};
use crate::server::{Databases, Kind, Server};
use anyhow::{Context, Result, bail};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where things are, as built by `cargo xtask soak`, and how long to run.
#[derive(clap::Args, Debug, Clone)]
pub struct SoakArgs {
    /// The release `tunnel-server` binary.
    #[arg(long)]
    pub server_bin: PathBuf,
    /// The release `tunnel-agent` binary.
    #[arg(long)]
    pub agent_bin: PathBuf,
    /// Directory for the scratch database.
    #[arg(long)]
    pub out_dir: PathBuf,
    /// The report the soak's table is written into (between `<!-- soak -->` markers).
    #[arg(long)]
    pub report: PathBuf,
    /// How long the load runs, in minutes.
    #[arg(long, default_value_t = 10.0)]
    pub minutes: f64,
    /// Agents kept connected.
    #[arg(long, default_value_t = 200)]
    pub agents: usize,
    /// The command line that started the run, for the report (set by the xtask).
    #[arg(long)]
    pub commands: Vec<String>,
}

/// Seconds between samples.
const SAMPLE_EVERY: u64 = 10;
/// API clients running at once.
const API_CLIENTS: usize = 4;

/// One sample of what the server holds.
#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    seconds: f64,
    rss_kib: u64,
    anon_kib: u64,
    fds: u64,
    tasks: u64,
    sessions: u64,
}

/// What the churn and the API clients did.
#[derive(Debug, Default)]
struct Counts {
    restarts: AtomicU64,
    stops: AtomicU64,
    kills: AtomicU64,
    command_errors: AtomicU64,
    api_requests: AtomicU64,
    api_errors: AtomicU64,
}

pub fn run(args: SoakArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(soak(args))
}

async fn soak(args: SoakArgs) -> Result<()> {
    let started = Instant::now();
    std::fs::create_dir_all(&args.out_dir)?;
    let db = Databases::sqlite(&args.out_dir).prepare(&args.server_bin, Kind::Sqlite, "soak", 0)?;
    let metrics = free_addr()?;
    let server = Server::start_watched(&args.server_bin, db, metrics)?;
    let token = agent_token(&server).await?;
    let mut conn = server.conn();

    println!("soak: starting {} agents", args.agents);
    let mut fleet = Fleet::start(&args, server.addr, token)?;
    let all = args.agents;
    wait_sessions_within(&server, all, Duration::from_secs(180)).await?;
    let first = sample(&server, metrics, 0.0).await?;
    println!("soak: {all} sessions; load for {} min", args.minutes);

    let counts = Arc::new(Counts::default());
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..API_CLIENTS)
        .map(|i| {
            tokio::spawn(api_client(
                server.addr,
                server.db.api_key.clone(),
                i,
                stop.clone(),
                counts.clone(),
            ))
        })
        .collect();

    let load_start = Instant::now();
    let deadline = load_start + Duration::from_secs_f64(args.minutes * 60.0);
    let mut samples = vec![first];
    let mut rng = Rng::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut next_sample = load_start + Duration::from_secs(SAMPLE_EVERY);
    let mut round = 0u64;
    while Instant::now() < deadline {
        tick.tick().await;
        round += 1;
        // Stopped agents exit; the fleet is kept at its size.
        fleet.restart_exited()?;
        churn(&mut conn, &server, &mut fleet, &mut rng, round, &counts).await?;
        if Instant::now() >= next_sample {
            next_sample += Duration::from_secs(SAMPLE_EVERY);
            let s = sample(&server, metrics, load_start.elapsed().as_secs_f64()).await?;
            println!(
                "soak: {:>5.0} s  rss {} KiB (anonymous {} KiB)  fds {}  tasks {}  sessions {}",
                s.seconds, s.rss_kib, s.anon_kib, s.fds, s.tasks, s.sessions
            );
            samples.push(s);
        }
    }
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await??;
    }
    // The end: every agent connected again and a moment to settle.
    fleet.restart_exited()?;
    wait_sessions_within(&server, all, Duration::from_secs(180)).await?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let last = sample(&server, metrics, load_start.elapsed().as_secs_f64()).await?;
    samples.push(last);
    drop(fleet);

    let block = report(&args, &samples, &counts, started.elapsed().as_secs_f64());
    write_block(&args.report, &block)?;
    println!("{block}");
    Ok(())
}

/// One second of churn, by turns: restart two sessions through the API, stop one (its agent
/// exits and is started again next second), or kill two agents' processes and start new ones.
async fn churn(
    conn: &mut Conn,
    server: &Server,
    fleet: &mut Fleet,
    rng: &mut Rng,
    round: u64,
    counts: &Counts,
) -> Result<()> {
    match round % 3 {
        0 => command(conn, server, rng, "restart", 2, &counts.restarts, counts).await,
        1 => command(conn, server, rng, "stop", 1, &counts.stops, counts).await,
        _ => {
            for _ in 0..2 {
                let i = rng.below(fleet.agents.len());
                fleet.replace(i)?;
                counts.kills.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    }
}

/// Sends `what` (restart or stop) to `times` random sessions; counts the accepted ones in
/// `accepted`. A 404 is no error: the session ended meanwhile (its agent killed or restarted).
async fn command(
    conn: &mut Conn,
    server: &Server,
    rng: &mut Rng,
    what: &str,
    times: usize,
    accepted: &AtomicU64,
    counts: &Counts,
) -> Result<()> {
    let ids = session_ids(conn, server).await?;
    for _ in 0..times {
        let Some(id) = ids.get(rng.below(ids.len())) else {
            break;
        };
        let req = server.post(&format!("/tunnel_sessions/{id}/{what}"), "{}");
        match conn.send(&req).await?.0 {
            204 => accepted.fetch_add(1, Ordering::Relaxed),
            404 => 0,
            _ => counts.command_errors.fetch_add(1, Ordering::Relaxed),
        };
    }
    Ok(())
}

/// An API client until `stop`: create a credential, read it, list a page, delete it.
async fn api_client(
    addr: SocketAddr,
    key: String,
    n: usize,
    stop: Arc<AtomicBool>,
    counts: Arc<Counts>,
) -> Result<()> {
    let mut conn = Conn::new(addr);
    let key = Some(key.as_str());
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        i += 1;
        let body = format!(r#"{{"description":"soak {n}-{i}","acl":["bind:*.example.com"]}}"#);
        let (status, created) = conn.send(&Req::post("/api/credentials", key, body)).await?;
        let mut ok = status == 201;
        let id = serde_json::from_slice::<serde_json::Value>(&created)
            .ok()
            .and_then(|v| v["id"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let path = format!("/api/credentials/{id}");
        ok &= conn.send(&Req::get(path.clone(), key)).await?.0 == 200;
        ok &= conn
            .send(&Req::get("/api/credentials?limit=100", key))
            .await?
            .0
            == 200;
        let delete = Req {
            method: hyper::Method::DELETE,
            ..Req::get(path, key)
        };
        ok &= conn.send(&delete).await?.0 == 204;
        counts.api_requests.fetch_add(4, Ordering::Relaxed);
        if !ok {
            counts.api_errors.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}

async fn session_ids(conn: &mut Conn, server: &Server) -> Result<Vec<String>> {
    let list = conn.json(&server.get("/tunnel_sessions?limit=100")).await?;
    Ok(list["tunnel_sessions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default())
}

/// Waits until the server holds `n` sessions (its gauge: the list is paged), at most `within`.
async fn wait_sessions_within(server: &Server, n: usize, within: Duration) -> Result<()> {
    let deadline = Instant::now() + within;
    let metrics = server
        .metrics
        .context("a server without --metrics-listen")?;
    loop {
        let held = gauges(metrics).await?.sessions;
        if held == n as u64 {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "{held} of {n} agents connected after {} s",
                within.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The server's gauges (tasks, sessions) from its metrics listener.
async fn gauges(metrics: SocketAddr) -> Result<Sample> {
    let (status, body) = Conn::new(metrics).send(&Req::get("/metrics", None)).await?;
    anyhow::ensure!(status == 200, "GET /metrics answered {status}");
    let text = String::from_utf8_lossy(&body);
    let value = |name: &str| -> Result<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
            .and_then(|v| v.trim().parse().ok())
            .with_context(|| format!("no {name} in /metrics"))
    };
    Ok(Sample {
        tasks: value("tunnel_runtime_tasks_alive")?,
        sessions: value("tunnel_sessions_held")?,
        fds: value("process_open_fds")?,
        ..Sample::default()
    })
}

async fn sample(server: &Server, metrics: SocketAddr, seconds: f64) -> Result<Sample> {
    let g = gauges(metrics).await?;
    Ok(Sample {
        seconds,
        rss_kib: rss_kib(server.process.pid())?,
        anon_kib: anon_kib(server.process.pid())?,
        ..g
    })
}

/// The mean of `f` over `samples`.
fn mean(samples: &[Sample], f: impl Fn(&Sample) -> u64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.iter().map(|s| f(s) as f64).sum::<f64>() / samples.len() as f64
}

/// The Markdown block: the figures at start and end, the largest, and the growth of the second
/// half of the run over the first (close to 1 once it levels off).
fn report(args: &SoakArgs, samples: &[Sample], counts: &Counts, seconds: f64) -> String {
    let (first, last) = (samples[0], samples[samples.len() - 1]);
    // The load's samples, without the start and the settled end.
    let during = &samples[1..samples.len().saturating_sub(1).max(1)];
    let half = during.len() / 2;
    let (early, late) = during.split_at(half);
    let row = |name: &str, f: &dyn Fn(&Sample) -> u64, show: &dyn Fn(u64) -> String| {
        let max = samples.iter().map(f).max().unwrap_or(0);
        let growth = mean(late, f) / mean(early, f);
        let growth = if growth.is_finite() {
            format!("{growth:.2}×")
        } else {
            "–".into()
        };
        format!(
            "| {name} | {} | {} | {} | {growth} |\n",
            show(f(&first)),
            show(f(&last)),
            show(max)
        )
    };
    let memory = |v: u64| kib(v * 1024);
    let count = |v: u64| v.to_string();
    let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let mut md = String::new();
    md.push_str("<!-- soak -->\n## Soak\n\n");
    md.push_str(&format!(
        "Written by `cargo xtask soak` ({}; {:.0} s in all). The release server on a fresh SQLite \
         database, agent-connection and failed-key limits at their defaults. {} real agents on one \
         credential; every second, by turns, two sessions restarted through the API, one stopped \
         (its agent exits and is started again), or two agents' processes killed and started \
         again; {API_CLIENTS} API clients meanwhile create, read, list and delete credentials. \
         Sampled every {SAMPLE_EVERY} s: resident memory and its anonymous part (`/proc`: \
         `VmRSS`, and `RssAnon`, the heap and stacks without the binary's pages, which are read in \
         as code first runs), open file descriptors, tasks alive and sessions held \
         (`--metrics-listen`). Start: every agent connected, before the load; end: the load \
         stopped, every agent connected again, 5 s later. Growth: the mean of the second half of \
         the load's samples over the first half's (1.00× when it levelled off).\n\n",
        args.commands
            .first()
            .map_or("tunnel-bench soak", String::as_str),
        seconds,
        args.agents,
    ));
    md.push_str("| figure | start | end | largest | growth |\n|---|---:|---:|---:|---:|\n");
    md.push_str(&row("resident memory", &|s| s.rss_kib, &memory));
    md.push_str(&row("of which anonymous", &|s| s.anon_kib, &memory));
    md.push_str(&row("open file descriptors", &|s| s.fds, &count));
    md.push_str(&row("tasks alive", &|s| s.tasks, &count));
    md.push_str(&row("sessions held", &|s| s.sessions, &count));
    let series = |f: &dyn Fn(&Sample) -> u64| {
        samples
            .iter()
            .map(|s| format!("{:.1}", f(s) as f64 / 1024.0))
            .collect::<Vec<_>>()
            .join(", ")
    };
    md.push_str(&format!(
        "\nResident memory at each sample, MiB: {}.\n\nIts anonymous part, MiB: {}.\n\n",
        series(&|s| s.rss_kib),
        series(&|s| s.anon_kib)
    ));
    md.push_str(&format!(
        "Load: {:.1} min, {} samples; {} restarts and {} stops accepted, {} agents killed, {} \
         commands answered other than 204 or 404; {} API requests, {} rounds with a failed \
         request.\n\n<!-- /soak -->",
        args.minutes,
        during.len(),
        load(&counts.restarts),
        load(&counts.stops),
        load(&counts.kills),
        load(&counts.command_errors),
        load(&counts.api_requests),
        load(&counts.api_errors),
    ));
    md
}

/// Puts `block` into the report in place of the previous one, or appends it.
fn write_block(report: &std::path::Path, block: &str) -> Result<()> {
    let old = std::fs::read_to_string(report).unwrap_or_default();
    let new = match (old.find("<!-- soak -->"), old.find("<!-- /soak -->")) {
        (Some(from), Some(to)) if to > from => {
            format!(
                "{}{block}{}",
                &old[..from],
                &old[to + "<!-- /soak -->".len()..]
            )
        }
        _ => format!("{}\n\n{block}\n", old.trim_end()),
    };
    std::fs::write(report, new).with_context(|| format!("writing {}", report.display()))
}

/// The agents, each a process of its own on the one credential.
struct Fleet {
    agents: Vec<ProcessGuard>,
    bin: PathBuf,
    server: SocketAddr,
    token: String,
}

impl Fleet {
    fn start(args: &SoakArgs, server: SocketAddr, token: String) -> Result<Fleet> {
        let mut fleet = Fleet {
            agents: Vec::with_capacity(args.agents),
            bin: args.agent_bin.clone(),
            server,
            token,
        };
        for _ in 0..args.agents {
            let agent = fleet.spawn()?;
            fleet.agents.push(agent);
        }
        Ok(fleet)
    }

    fn spawn(&self) -> Result<ProcessGuard> {
        spawn_agent(&self.bin, self.server, &self.token)
    }

    /// Kills agent `i` (its process group) and starts a new one in its place.
    fn replace(&mut self, i: usize) -> Result<()> {
        self.agents[i] = self.spawn()?;
        Ok(())
    }

    /// Starts again the agents that exited (stopped through the API).
    fn restart_exited(&mut self) -> Result<()> {
        for i in 0..self.agents.len() {
            if !self.agents[i].is_running() {
                self.replace(i)?;
            }
        }
        Ok(())
    }
}

/// A small xorshift generator: which sessions and agents the churn picks (no need for more).
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x9E37_79B9_7F4A_7C15, |d| d.as_nanos() as u64);
        Rng(seed | 1)
    }

    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        if n == 0 {
            0
        } else {
            (self.0 % n as u64) as usize
        }
    }
}
