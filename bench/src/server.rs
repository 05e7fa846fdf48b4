//! The real `tunnel-server` (release build) on a loopback port and a fresh SQLite database,
//! created and bulk-loaded through its own command line (only the server knows SQL).

use crate::http::{Conn, Req};
use crate::procs::{ProcessGuard, START, free_addr};
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tunnel_testkit::process::serve_command;

/// A database prepared for a run: its URL, the account, its admin key.
#[derive(Debug, Clone)]
pub struct Database {
    pub url: String,
    pub api_key: String,
    /// Seconds the bulk load took (0 when nothing was seeded).
    pub seed_seconds: f64,
    /// Seeded ids to page from: the middle one and the 101st oldest (empty when not seeded).
    pub middle_id: String,
    pub deep_id: String,
}

/// Creates `dir/tunnel.db` (removing an older one) with an account, and seeds `credentials`.
pub fn prepare(server_bin: &Path, dir: &Path, credentials: u64) -> Result<Database> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir)?;
    let url = format!("sqlite://{}", dir.join("tunnel.db").display());
    let created = run_json(server_bin, &["account", "create", "--database", &url])?;
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
        url,
        api_key,
        seed_seconds,
        middle_id,
        deep_id,
    })
}

fn run_json(bin: &Path, args: &[&str]) -> Result<serde_json::Value> {
    let out = Command::new(bin)
        .args(args)
        .env("RUST_LOG", "warn")
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {} {}", bin.display(), args.join(" ")))?;
    anyhow::ensure!(
        out.status.success(),
        "`tunnel-server {}` failed ({})",
        args.join(" "),
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
}

impl Server {
    pub fn start(server_bin: &Path, db: Database, console: Option<&PathBuf>) -> Result<Server> {
        let addr = free_addr()?;
        let mut command = serve_command(server_bin, addr, &db.url);
        // The webhooks section's receiver is on loopback.
        command.arg("--allow-private-webhooks");
        if let Some(dir) = console {
            command.arg("--console-dir").arg(dir);
        }
        let mut process = ProcessGuard::spawn("tunnel-server", command)?;
        process.wait_for_port(addr, START)?;
        Ok(Server { addr, db, process })
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
