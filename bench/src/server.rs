//! The real `tunnel-server` (release build) on a loopback port and a fresh database, created and
//! bulk-loaded through its own command line (only the server knows SQL; the bench writes none).
//!
//! A run's databases come from [`Databases`]: SQLite files under the output directory (as
//! always), and, unless `--no-postgres`, fresh databases on one durable PostgreSQL cluster of
//! `tunnel-testkit` (Debian's server, on loopback, PostgreSQL's default settings, fsync on),
//! started once for the run when a section measures on PostgreSQL. On PostgreSQL the server and
//! its operator commands get the fixed bench key [`BENCH_SERVER_KEY`] in `TUNNEL_SERVER_KEY`.

use crate::http::{Conn, Req};
use crate::procs::{ProcessGuard, START, free_addr};
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tunnel_testkit::postgres::{Cluster, fresh_database};
use tunnel_testkit::process::serve_command;

/// The server key of every PostgreSQL database of a run (a throwaway key for throwaway data).
const BENCH_SERVER_KEY: &str = "be9c4b0a1d2e3f405162738495a6b7c8d9eafb0c1d2e3f405162738495a6b7c8";

/// The database a server runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Sqlite,
    Postgres,
}

impl Kind {
    /// Its name in the report.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Sqlite => "SQLite",
            Kind::Postgres => "PostgreSQL",
        }
    }

    /// Its key in the raw JSON.
    pub fn slug(self) -> &'static str {
        match self {
            Kind::Sqlite => "sqlite",
            Kind::Postgres => "postgres",
        }
    }
}

/// Where a run makes its databases: SQLite files under `out_dir`, and the run's PostgreSQL
/// cluster when there is one (stopped, with its data, when this is dropped).
#[derive(Debug)]
pub struct Databases {
    out_dir: PathBuf,
    postgres: Option<Postgres>,
}

#[derive(Debug)]
struct Postgres {
    cluster: Cluster,
    version: String,
}

impl Databases {
    /// SQLite only (until [`Databases::start_postgres`]).
    pub fn sqlite(out_dir: &Path) -> Databases {
        Databases {
            out_dir: out_dir.to_owned(),
            postgres: None,
        }
    }

    /// Adds PostgreSQL: a durable cluster started now.
    pub fn start_postgres(&mut self) -> Result<()> {
        let cluster = Cluster::start_durable().context("starting PostgreSQL for the bench")?;
        let version = cluster.binaries().server_version()?;
        self.postgres = Some(Postgres { cluster, version });
        Ok(())
    }

    /// The kinds measured in this run: SQLite, then PostgreSQL when there is a cluster.
    pub fn kinds(&self) -> Vec<Kind> {
        let mut kinds = vec![Kind::Sqlite];
        if self.postgres.is_some() {
            kinds.push(Kind::Postgres);
        }
        kinds
    }

    /// What the PostgreSQL server is, for the sections' text; `None` without PostgreSQL.
    pub fn postgres_description(&self) -> Option<String> {
        self.postgres.as_ref().map(|p| {
            format!(
                "PostgreSQL: `{}` on the same machine, reached over loopback TCP, a fresh \
                 database per server on one cluster started for the run (by `tunnel-testkit`, \
                 `Cluster::start_durable`) with PostgreSQL's default settings — durable: fsync, \
                 synchronous commit and full-page writes on — except the listen address and \
                 port, the socket directory and `max_connections` (300); the server gets its \
                 key from `TUNNEL_SERVER_KEY`.",
                p.version
            )
        })
    }

    /// A fresh database of `kind` (SQLite: `out_dir/<name>/tunnel.db`, an older one removed;
    /// PostgreSQL: a new database on the cluster) with an account, seeded with `credentials`.
    pub fn prepare(
        &self,
        server_bin: &Path,
        kind: Kind,
        name: &str,
        credentials: u64,
    ) -> Result<Database> {
        let url = match kind {
            Kind::Sqlite => {
                let dir = self.out_dir.join(name);
                if dir.exists() {
                    std::fs::remove_dir_all(&dir)
                        .with_context(|| format!("removing {}", dir.display()))?;
                }
                std::fs::create_dir_all(&dir)?;
                format!("sqlite://{}", dir.join("tunnel.db").display())
            }
            Kind::Postgres => {
                let pg = self
                    .postgres
                    .as_ref()
                    .context("no PostgreSQL in this run (--no-postgres)")?;
                fresh_database(&pg.cluster.admin_url())?
            }
        };
        prepare(server_bin, kind, url, credentials)
    }

    /// Removes what [`Databases::prepare`] made for `name` on SQLite (PostgreSQL's databases
    /// go with the cluster at the end of the run).
    pub fn remove(&self, kind: Kind, name: &str) {
        if kind == Kind::Sqlite {
            let _ = std::fs::remove_dir_all(self.out_dir.join(name));
        }
    }
}

/// A database prepared for a run: its kind and URL, the account, its admin key.
#[derive(Debug, Clone)]
pub struct Database {
    pub kind: Kind,
    pub url: String,
    pub api_key: String,
    /// Seconds the bulk load took (0 when nothing was seeded), as `seed-credentials` timed it.
    pub seed_seconds: f64,
    /// Seeded ids to page from: the middle one and the 101st oldest (empty when not seeded).
    pub middle_id: String,
    pub deep_id: String,
}

impl Database {
    /// A copy of this SQLite database with its server key, in a directory beside its own
    /// (`<dir>-<suffix>/`, an older one removed), made by `tunnel-server migrate` while its
    /// server runs: a SQLite file is served by one process, so a second server needs a copy.
    /// Same rows, so the same key and ids.
    pub fn sqlite_copy(&self, server_bin: &Path, suffix: &str) -> Result<Database> {
        anyhow::ensure!(
            self.kind == Kind::Sqlite,
            "only a SQLite database is copied"
        );
        let file = Path::new(
            self.url
                .strip_prefix("sqlite://")
                .context("a SQLite URL starts with sqlite://")?,
        );
        let (dir, name) = (
            file.parent().context("a SQLite file has a directory")?,
            file.file_name().context("a SQLite URL names a file")?,
        );
        let mut copy_dir = dir.as_os_str().to_owned();
        copy_dir.push(format!("-{suffix}"));
        let copy_dir = PathBuf::from(copy_dir);
        if copy_dir.exists() {
            std::fs::remove_dir_all(&copy_dir)
                .with_context(|| format!("removing {}", copy_dir.display()))?;
        }
        std::fs::create_dir_all(&copy_dir)?;
        std::fs::copy(dir.join("server.key"), copy_dir.join("server.key"))
            .context("copying the server key")?;
        let url = format!("sqlite://{}", copy_dir.join(name).display());
        run_json(
            server_bin,
            self.kind,
            &["migrate", "--from", &self.url, "--to", &url],
        )?;
        Ok(Database {
            url,
            ..self.clone()
        })
    }
}

/// Creates an account on the (empty) database of `url` and seeds `credentials`.
fn prepare(server_bin: &Path, kind: Kind, url: String, credentials: u64) -> Result<Database> {
    let created = run_json(server_bin, kind, &["account", "create", "--database", &url])?;
    let field = |v: &serde_json::Value, k: &str| -> Result<String> {
        v[k].as_str()
            .map(str::to_owned)
            .with_context(|| format!("`account create` printed no {k}"))
    };
    let account_id = field(&created, "account_id")?;
    let api_key = field(&created, "api_key")?;
    let (mut seed_seconds, mut middle_id, mut deep_id) = (0.0, String::new(), String::new());
    if credentials > 0 {
        let seeded = run_json(
            server_bin,
            kind,
            &[
                "dev",
                "seed-credentials",
                "--database",
                &url,
                "--account",
                &account_id,
                "--count",
                &credentials.to_string(),
            ],
        )?;
        seed_seconds = seeded["seconds"].as_f64().unwrap_or_default();
        middle_id = field(&seeded, "middle_id")?;
        deep_id = field(&seeded, "deep_id")?;
    }
    Ok(Database {
        kind,
        url,
        api_key,
        seed_seconds,
        middle_id,
        deep_id,
    })
}

/// Gives `command` the server key when it runs on PostgreSQL.
fn with_key(command: &mut Command, kind: Kind) {
    if kind == Kind::Postgres {
        command.env("TUNNEL_SERVER_KEY", BENCH_SERVER_KEY);
    }
}

fn run_json(bin: &Path, kind: Kind, args: &[&str]) -> Result<serde_json::Value> {
    let mut command = Command::new(bin);
    command
        .args(args)
        .env("RUST_LOG", "warn")
        .stderr(Stdio::inherit());
    with_key(&mut command, kind);
    let shown = || {
        // PostgreSQL URLs carry the cluster's password.
        args.iter()
            .map(|a| {
                if a.starts_with("postgres") {
                    "<url>"
                } else {
                    a
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let out = command
        .output()
        .with_context(|| format!("running {} {}", bin.display(), shown()))?;
    anyhow::ensure!(
        out.status.success(),
        "`tunnel-server {}` failed ({})",
        shown(),
        out.status
    );
    serde_json::from_slice(&out.stdout).context("tunnel-server printed no JSON")
}

/// A running `tunnel-server`.
#[derive(Debug)]
pub struct Server {
    pub addr: SocketAddr,
    pub db: Database,
    pub process: ProcessGuard,
    /// Where its `--metrics-listen` gauges are served, when asked for.
    pub metrics: Option<SocketAddr>,
}

/// What makes a server a node of a cluster (on a PostgreSQL database shared with the other
/// nodes): the server's `--node-id`, `--cluster-secret` and `--public-url`; its
/// `--advertise-url` is its own loopback address.
#[derive(Debug, Clone)]
pub struct Node {
    pub id: String,
    pub secret: String,
    pub public_url: String,
}

/// The load generator sends thousands of requests a second with one key from one address: the
/// rate limits are off for every measurement but the one of their cost.
const LIMITS_OFF: [&str; 8] = [
    "--rate-limit-key",
    "off",
    "--rate-limit-ip",
    "off",
    "--rate-limit-auth-failures",
    "off",
    "--rate-limit-agent-connects",
    "off",
];
const LIMITS_NEVER_EMPTY: [&str; 4] = [
    "--rate-limit-key",
    "1000000/s,1000000",
    "--rate-limit-ip",
    "1000000/s,1000000",
];

impl Server {
    pub fn start(server_bin: &Path, db: Database, console: Option<&PathBuf>) -> Result<Server> {
        Server::spawn(
            server_bin,
            db,
            console.map(PathBuf::as_path),
            None,
            &LIMITS_OFF,
        )
    }

    /// A server with every rate limit on: the defaults for failed keys and agent connections,
    /// and per-key and per-IP buckets too large for the load to empty, so that every request
    /// pays for the checks (the same work whatever the numbers) and none is refused.
    pub fn start_limited(server_bin: &Path, db: Database) -> Result<Server> {
        Server::spawn(server_bin, db, None, None, &LIMITS_NEVER_EMPTY)
    }

    /// A server as [`Server::start_limited`] runs it, with its gauges on `metrics` (the soak).
    pub fn start_watched(server_bin: &Path, db: Database, metrics: SocketAddr) -> Result<Server> {
        let listen = metrics.to_string();
        let mut args = LIMITS_NEVER_EMPTY.to_vec();
        args.extend(["--metrics-listen", &listen]);
        let mut server = Server::spawn(server_bin, db, None, None, &args)?;
        server.metrics = Some(metrics);
        Ok(server)
    }

    /// A node of a cluster.
    pub fn start_node(
        server_bin: &Path,
        db: Database,
        console: &Path,
        node: &Node,
    ) -> Result<Server> {
        Server::spawn(server_bin, db, Some(console), Some(node), &LIMITS_OFF)
    }

    fn spawn(
        server_bin: &Path,
        db: Database,
        console: Option<&Path>,
        node: Option<&Node>,
        args: &[&str],
    ) -> Result<Server> {
        let addr = free_addr()?;
        let mut command = serve_command(server_bin, addr, &db.url);
        with_key(&mut command, db.kind);
        command.args(args);
        // The webhooks section's receiver is on loopback.
        command.arg("--allow-private-webhooks");
        if let Some(dir) = console {
            command.arg("--console-dir").arg(dir);
        }
        if let Some(node) = node {
            // In the environment, as `cargo xtask run --nodes` passes them: the secret stays
            // out of `ps`.
            command
                .env("TUNNEL_NODE_ID", &node.id)
                .env("TUNNEL_ADVERTISE_URL", format!("http://{addr}"))
                .env("TUNNEL_CLUSTER_SECRET", &node.secret)
                .env("TUNNEL_PUBLIC_URL", &node.public_url);
        }
        let name = node.map_or_else(|| "tunnel-server".to_owned(), |n| format!("node {}", n.id));
        let mut process = ProcessGuard::spawn(&name, command)?;
        process.wait_for_port(addr, START)?;
        Ok(Server {
            addr,
            db,
            process,
            metrics: None,
        })
    }

    pub fn key(&self) -> Option<&str> {
        Some(&self.db.api_key)
    }

    pub fn conn(&self) -> Conn {
        Conn::new(self.addr)
    }

    pub fn get(&self, path: &str) -> Req {
        Req::get(format!("/api{path}"), self.key())
    }

    pub fn post(&self, path: &str, body: &str) -> Req {
        Req::post(format!("/api{path}"), self.key(), body)
    }
}
