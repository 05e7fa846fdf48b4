//! The server as a cluster: several `tunnel-server` nodes on one durable PostgreSQL database.
//! Two figures, each against a baseline of the same run:
//!
//! - API throughput and latency through nginx in front of 1, 2 and 3 nodes (the shape of
//!   `cargo xtask run --nodes`), with the throughput section's endpoints and load generator,
//!   against one node reached directly: what the proxy and the extra nodes cost. On a machine
//!   of few cores it is the cost, not a gain: every node, nginx, PostgreSQL and the load
//!   generator share the same cores.
//! - Agent command latency through the node holding the agent's WebSocket (same node) and
//!   through another node, which forwards the command over HTTP to the holder (cross-node).

use super::agent_restarts::{agent_token, spawn_agent, wait_sessions};
use super::throughput::{ROUNDS, endpoints, warm_then_load};
use super::{SMALL, number};
use crate::RunArgs;
use crate::http::{Conn, LoadResult, Req, Samples};
use crate::procs::{ProcessGuard, START, free_addr};
use crate::report::{Row, Section, ms, rps};
use crate::server::{Database, Databases, Kind, Node, Server};
use crate::stats::percentile;
use anyhow::{Context, Result, bail};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const NAME: &str = "cluster";

use tunnel_testkit::nginx::NGINX;
/// Shared by every node of the run (at least 32 characters); throwaway, like the server key.
const BENCH_CLUSTER_SECRET: &str =
    "5f0c3b2a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a29181706f5e4d3c2b1a09";
/// The most nodes behind nginx.
const MAX_NODES: usize = 3;
/// How long a node stopping cleanly may take.
const STOP: Duration = Duration::from_secs(15);
/// A node's heartbeat period (a third of the server's default lease, 15 s), and a margin.
const HEARTBEAT: Duration = Duration::from_secs(6);
/// Commands sent through each node, after [`COMMAND_WARMUP`] unmeasured ones.
const COMMANDS: usize = 200;
const COMMAND_WARMUP: usize = 10;
/// The agent's answer to `update` when the server has no `--agent-latest` catalogue: 409 "no
/// update available" (`ErrorCode::NoUpdateAvailable` of `tunnel-core`). A full round trip to
/// the agent that leaves its session open, so one session serves every measurement.
const NO_UPDATE_STATUS: u16 = 409;
const NO_UPDATE_CODE: &str = "ERR_TUNNEL_141";

/// The section when the run has no PostgreSQL: not measured, and why.
pub fn skipped(why: &str) -> Section {
    let mut s = section();
    s.notes.push(format!("Not measured: {why}."));
    s
}

fn section() -> Section {
    Section::new(
        number(NAME),
        "Cluster: API through nginx, commands across nodes",
        &format!(
            "Nodes are release `tunnel-server serve` processes on loopback, all on one fresh \
         PostgreSQL database of 1 000 credentials, with `--node-id bench-N`, \
         `--advertise-url` their own address, the same server key and `--cluster-secret`, and \
         `--public-url` pointing at nginx. **Throughput**: the throughput section's endpoints, \
         load generator and connection count, through Debian's nginx (one worker, upstream \
         round-robin over the nodes with kept-alive connections to them, WebSocket upgrade \
         headers: the configuration of `cargo xtask run --nodes`, `tunnel_testkit::nginx`, with \
         the access log off) in front of 1, 2 and 3 nodes. Baseline: the same endpoint on \
         one node reached directly. Each endpoint's load is cut into {ROUNDS} rounds, each \
         round visiting every setup (direct, then 1, 2 and 3 nodes behind nginx) and starting \
         one setup further along than the last, each visit after a 1 s warm-up, so that the \
         setups share the machine's drift; a setup runs only its own nodes (the others are \
         stopped with SIGTERM and started again when needed; once one node is left, after its \
         next heartbeat, from which a node alone keeps the rows it reads, as the others keep \
         none: the `GET` of one is answered from memory with one node, from the database with \
         two or more). **This \
         machine cannot show scaling**: every node, nginx, PostgreSQL and the load generator \
         share the same cores (see Machine), so more nodes only add processes competing for \
         them; the figures measure the cost of the proxy and of the extra nodes, not the \
         capacity of a real cluster. **Commands**: two nodes, one release `tunnel-agent` \
         connected directly to node 1 (which holds its WebSocket); \
         `POST /api/tunnel_sessions/{{id}}/update` (without an `--agent-latest` catalogue the \
         agent answers 409 \"no update available\": a full round trip to the agent that keeps \
         the session) sent one at a time through node 2 (cross-node: node 2 finds the holder \
         in the database and forwards the command over HTTP to node 1's \
         `/cluster/v1/tunnel_sessions/{{id}}/command`) and through node 1 (same node, the \
         baseline), alternating, each on its own keep-alive connection."
        ),
    )
}

/// Both figures on a database of `dbs`' PostgreSQL cluster (which the caller started).
pub async fn measure(args: &RunArgs, dbs: &Databases, console: &Path) -> Result<Section> {
    let mut s = section();
    if let Some(pg) = dbs.postgres_description() {
        s.method.push(' ');
        s.method.push_str(&pg);
    }
    let db = dbs.prepare(&args.server_bin, Kind::Postgres, "db-cluster", SMALL)?;
    // One address for every nginx of the run, so every node's `--public-url` is right.
    let nginx_addr = free_addr()?;
    let mut nodes = Nodes {
        server_bin: &args.server_bin,
        db: &db,
        console,
        public_url: format!("http://{nginx_addr}/api"),
        started: Vec::new(),
    };
    let mut raw = serde_json::Map::new();

    if Path::new(NGINX).exists() {
        throughput(args, &mut s, &mut nodes, nginx_addr, &mut raw).await?;
    } else {
        s.notes.push(format!(
            "Throughput through nginx not measured: {NGINX} is missing (`apt-get install \
             nginx`, or `cargo xtask run --nodes` installs it)."
        ));
    }

    // Two nodes, not three: a third would only compete for the cores.
    nodes.run_exactly(2)?;
    let (same, cross) = commands(args, &nodes.started[0], &nodes.started[1]).await?;
    for (p, label) in [(50.0, "p50"), (99.0, "p99")] {
        let (b, a) = (percentile(&cross, p), percentile(&same, p));
        s.rows.push(Row::new(
            format!("`POST …/update` through the other node (cross-node), {label} of {COMMANDS}"),
            ms(b),
            format!("{} (same node)", ms(a)),
            Some(b / a),
        ));
    }
    raw.insert(
        "commands".into(),
        serde_json::json!({"same_node_ms": same, "cross_node_ms": cross}),
    );
    s.raw = raw.into();
    Ok(s)
}

/// The nodes of the section, started in order (`bench-1`, …) when needed, on one database;
/// dropping one stops it.
struct Nodes<'a> {
    server_bin: &'a Path,
    db: &'a Database,
    /// Served too (unused here), as in production.
    console: &'a Path,
    public_url: String,
    started: Vec<Server>,
}

impl Nodes<'_> {
    /// Runs exactly `count` nodes: the last ones beyond it stopped, the missing ones started.
    /// Nodes stop cleanly (SIGTERM), so that their rows leave the cluster as they exit; when
    /// one node is left, it waits for that node's next heartbeat, from which it keeps the rows
    /// it reads again (a node alone does, docs/cluster.md): every visit of a one-node setup
    /// then measures a node alone, whichever setup came before it.
    fn run_exactly(&mut self, count: usize) -> Result<()> {
        let stopping = self.started.len() > count;
        for mut node in self.started.drain(count.min(self.started.len())..) {
            node.process.terminate();
            node.process.wait_exit(STOP)?;
        }
        if stopping && count == 1 {
            std::thread::sleep(HEARTBEAT);
        }
        while self.started.len() < count {
            let node = Node {
                id: format!("bench-{}", self.started.len() + 1),
                secret: BENCH_CLUSTER_SECRET.to_owned(),
                public_url: self.public_url.clone(),
            };
            let server = Server::start_node(self.server_bin, self.db.clone(), self.console, &node)?;
            self.started.push(server);
        }
        Ok(())
    }

    fn addrs(&self) -> Vec<SocketAddr> {
        self.started.iter().map(|n| n.addr).collect()
    }
}

/// The label of a setup: `0` is node 1 reached directly (the baseline), `n` nginx in front of
/// `n` nodes.
fn setup_label(nodes_behind_nginx: usize) -> String {
    match nodes_behind_nginx {
        0 => "1 node, direct".to_owned(),
        1 => "nginx + 1 node".to_owned(),
        n => format!("nginx + {n} nodes"),
    }
}

/// The throughput rows: each endpoint on node 1 directly, and through nginx in front of 1, 2
/// and 3 nodes. Each endpoint's load is cut into [`ROUNDS`] rounds; a round visits every setup,
/// starting one further along each time, so that the setups share the shared machine's drift
/// (measured one after the other, a setup's ratio moved with the minute it ran in). A setup runs
/// exactly its own nodes: the others are stopped, and started again when a setup needs them.
async fn throughput(
    args: &RunArgs,
    s: &mut Section,
    nodes: &mut Nodes<'_>,
    nginx_addr: SocketAddr,
    raw: &mut serde_json::Map<String, serde_json::Value>,
) -> Result<()> {
    let duration = Duration::from_secs(args.load_seconds);
    let n = args.connections;
    s.notes.push(format!(
        "Throughput: {n} connections, {} s per endpoint and setup in {ROUNDS} rounds, after a \
         1 s warm-up before each. Every \
         `POST` commits a row with fsync: its figures follow the disk (shared with everything \
         else on the machine) more than the proxy or the number of nodes.",
        args.load_seconds
    ));
    nodes.run_exactly(1)?;
    let endpoints = endpoints(&nodes.started[0]).await?;
    let setups = MAX_NODES + 1;
    // samples[setup][endpoint], setup as in [`setup_label`].
    let mut samples: Vec<Vec<Samples>> = (0..setups)
        .map(|_| endpoints.iter().map(|_| Samples::default()).collect())
        .collect();
    let round = duration / ROUNDS;
    for r in 0..ROUNDS as usize {
        for i in 0..setups {
            let behind = (i + r) % setups;
            nodes.run_exactly(behind.max(1))?;
            let (nginx, addr) = match behind {
                0 => (None, nodes.started[0].addr),
                _ => (Some(Nginx::start(nginx_addr, &nodes.addrs())?), nginx_addr),
            };
            let measured = async {
                let mut per_endpoint = Vec::new();
                for (_, make) in &endpoints {
                    per_endpoint.push(warm_then_load(addr, n, round, make.clone()).await?);
                }
                anyhow::Ok(per_endpoint)
            }
            .await;
            // nginx stopped (its log's warnings printed) also when a round failed.
            if let Some(nginx) = nginx {
                nginx.stop()?;
            }
            for (e, s) in measured?.into_iter().enumerate() {
                samples[behind][e].add(s);
            }
        }
    }
    let results: Vec<(String, Vec<LoadResult>)> = samples
        .into_iter()
        .enumerate()
        .map(|(behind, per_endpoint)| {
            let per_endpoint: Vec<LoadResult> =
                per_endpoint.into_iter().map(Samples::result).collect();
            let label = setup_label(behind);
            for ((name, _), r) in endpoints.iter().zip(&per_endpoint) {
                println!(
                    "    {label}, {name}: {:.0} req/s p50 {:.2} ms p99 {:.2} ms ({} errors)",
                    r.rps, r.p50_ms, r.p99_ms, r.errors
                );
            }
            (label, per_endpoint)
        })
        .collect();

    let (_, base) = &results[0];
    for (e, (name, _)) in endpoints.iter().enumerate() {
        for metric in ["throughput", "p50", "p99"] {
            let pick = |r: &LoadResult| match metric {
                "throughput" => (r.rps, rps(r.rps)),
                "p50" => (r.p50_ms, ms(r.p50_ms)),
                _ => (r.p99_ms, ms(r.p99_ms)),
            };
            let (base_value, base_shown) = pick(&base[e]);
            for (label, per_endpoint) in &results[1..] {
                let (value, shown) = pick(&per_endpoint[e]);
                s.rows.push(Row::new(
                    format!("`{name}` {metric}, {label}"),
                    shown,
                    format!("{base_shown} (1 node, direct)"),
                    Some(value / base_value),
                ));
            }
        }
    }
    for (label, per_endpoint) in &results {
        for ((name, _), r) in endpoints.iter().zip(per_endpoint) {
            if r.errors > 0 {
                s.notes.push(format!(
                    "`{name}`, {label}: {} non-2xx responses or failures.",
                    r.errors
                ));
            }
        }
    }
    raw.insert(
        "throughput".into(),
        results
            .iter()
            .map(|(label, per_endpoint)| {
                let by_endpoint: serde_json::Map<_, _> = endpoints
                    .iter()
                    .zip(per_endpoint)
                    .map(|((name, _), r)| ((*name).to_owned(), r.json()))
                    .collect();
                (label.clone(), by_endpoint.into())
            })
            .collect::<serde_json::Map<_, _>>()
            .into(),
    );
    Ok(())
}

/// `update` latencies (ms) through node `a`, which holds the agent, and through node `b`:
/// `(same node, cross-node)`, [`COMMANDS`] each, alternating which goes first so that neither
/// always follows the other.
async fn commands(args: &RunArgs, a: &Server, b: &Server) -> Result<(Vec<f64>, Vec<f64>)> {
    let token = agent_token(a).await?;
    let _agent = spawn_agent(&args.agent_bin, a.addr, &token)?;
    let id = wait_sessions(&mut a.conn(), a, |ids| ids.len() == 1).await?[0].clone();
    // Node b reads the session from the database: it must list it too before it can forward.
    wait_sessions(&mut b.conn(), b, |ids| ids.len() == 1 && ids[0] == id).await?;
    let path = format!("/tunnel_sessions/{id}/update");
    let (mut via_a, mut via_b) = (a.conn(), b.conn());
    let (req_a, req_b) = (a.post(&path, "{}"), b.post(&path, "{}"));
    let (mut same, mut cross) = (Vec::new(), Vec::new());
    for i in 0..COMMAND_WARMUP + COMMANDS {
        let measured = i >= COMMAND_WARMUP;
        let one = async |conn: &mut Conn, req: &Req, out: &mut Vec<f64>| -> Result<()> {
            let ms = no_update(conn, req).await?;
            if measured {
                out.push(ms);
            }
            Ok(())
        };
        if i % 2 == 0 {
            one(&mut via_a, &req_a, &mut same).await?;
            one(&mut via_b, &req_b, &mut cross).await?;
        } else {
            one(&mut via_b, &req_b, &mut cross).await?;
            one(&mut via_a, &req_a, &mut same).await?;
        }
    }
    Ok((same, cross))
}

/// Sends `req` (an `update`) and checks the agent's "no update available"; its latency in ms.
async fn no_update(conn: &mut Conn, req: &Req) -> Result<f64> {
    let sent = Instant::now();
    let (status, body) = conn.send(req).await?;
    let ms = sent.elapsed().as_secs_f64() * 1000.0;
    let code = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v["error_code"].as_str().map(str::to_owned));
    if status != NO_UPDATE_STATUS || code.as_deref() != Some(NO_UPDATE_CODE) {
        bail!(
            "{} {} answered {status} (expected {NO_UPDATE_STATUS} {NO_UPDATE_CODE}): {}",
            req.method,
            req.path,
            String::from_utf8_lossy(&body)
        );
    }
    Ok(ms)
}

/// nginx in front of the nodes, a guarded foreground process whose prefix (configuration, pid,
/// error log, temporary files) is a temporary directory: no root needed, nothing in /etc or
/// /var touched. The guard comes first so the process is gone before its directory.
struct Nginx {
    process: ProcessGuard,
    prefix: tempfile::TempDir,
}

impl Nginx {
    fn start(listen: SocketAddr, nodes: &[SocketAddr]) -> Result<Nginx> {
        let prefix = tempfile::Builder::new()
            .prefix("tunnel-bench-nginx-")
            .tempdir()
            .context("creating nginx's directory")?;
        let conf = prefix.path().join("nginx.conf");
        std::fs::write(
            &conf,
            tunnel_testkit::nginx::config(
                prefix.path(),
                &listen.to_string(),
                nodes,
                false,
                &format!("tunnel-bench (section {NAME})"),
            ),
        )
        .context("writing nginx.conf")?;
        let mut command = Command::new(NGINX);
        command
            .arg("-p")
            .arg(prefix.path())
            .arg("-c")
            .arg(&conf)
            // Errors before the configuration is read go to the prefix too, not /var/log/nginx.
            .arg("-e")
            .arg(prefix.path().join("error.log"))
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null());
        let mut process = ProcessGuard::spawn("nginx", command)?;
        process.wait_for_port(listen, START).with_context(|| {
            let log = std::fs::read_to_string(prefix.path().join("error.log"));
            format!("nginx's error log:\n{}", log.unwrap_or_default())
        })?;
        Ok(Nginx { process, prefix })
    }

    /// Kills nginx (with its worker: the guard kills the process group), leaving its listen
    /// address free for the next one; the error log's warnings and errors are printed first.
    fn stop(mut self) -> Result<()> {
        let log = std::fs::read_to_string(self.prefix.path().join("error.log"))?;
        for line in log
            .lines()
            .filter(|l| l.contains("[warn]") || l.contains("[error]") || l.contains("[crit]"))
            .take(10)
        {
            println!("    nginx: {line}");
        }
        self.process.kill();
        Ok(())
    }
}
