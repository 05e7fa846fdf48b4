//! Agent command latency: from `POST /api/tunnel_sessions/{id}/restart` until the agent's new
//! session is listed, against a cold start of the agent process.

use super::number;
use crate::RunArgs;
use crate::http::Conn;
use crate::procs::ProcessGuard;
use crate::report::{Row, Section, ms};
use crate::server::Server;
use crate::stats::{median, percentile};
use anyhow::{Context, Result, bail};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const NAME: &str = "agent_restarts";

/// Cold starts first (the baseline), then `--restarts` restarts of one agent.
pub async fn measure(args: &RunArgs, server: &Server) -> Result<Section> {
    let mut s = Section::new(
        number(NAME),
        "Agent command latency",
        "The release `tunnel-agent` connected to the release server over loopback. Each restart: \
         `POST /api/tunnel_sessions/{id}/restart` (answered once the agent acknowledged), the \
         agent re-executes itself and opens a new session; the figure runs from sending the \
         POST until `GET /api/tunnel_sessions` (polled every 2 ms) lists the new session id. \
         Baseline: a cold start, from spawning the agent process until its session is listed \
         (median of 5).",
    );
    let mut conn = server.conn();
    let token = agent_token(server).await?;
    let agent = |token: &str| spawn_agent(&args.agent_bin, server.addr, token);

    let mut cold = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let guard = agent(&token)?;
        wait_sessions(&mut conn, server, |ids| !ids.is_empty()).await?;
        cold.push(t.elapsed().as_secs_f64() * 1000.0);
        drop(guard);
        wait_sessions(&mut conn, server, Vec::is_empty).await?;
    }

    let _agent = agent(&token)?;
    let mut current = wait_sessions(&mut conn, server, |ids| ids.len() == 1).await?[0].clone();
    let mut restarts = Vec::new();
    for _ in 0..args.restarts {
        let t = Instant::now();
        conn.json(&server.post(&format!("/tunnel_sessions/{current}/restart"), "{}"))
            .await?;
        let old = current.clone();
        let ids = wait_sessions(&mut conn, server, |ids| ids.iter().any(|i| *i != old)).await?;
        restarts.push(t.elapsed().as_secs_f64() * 1000.0);
        current = ids.into_iter().find(|i| *i != old).unwrap_or_default();
        // The old session may still be listed for a moment; start the next from a clean state.
        wait_sessions(&mut conn, server, |ids| ids.len() == 1).await?;
    }
    let (p50, p99, c) = (
        percentile(&restarts, 50.0),
        percentile(&restarts, 99.0),
        median(&cold),
    );
    s.rows.push(Row::new(
        format!("restart → new session listed, p50 of {}", restarts.len()),
        ms(p50),
        format!("{} (cold start)", ms(c)),
        Some(p50 / c),
    ));
    s.rows.push(Row::new(
        format!("restart → new session listed, p99 of {}", restarts.len()),
        ms(p99),
        format!("{} (cold start)", ms(c)),
        Some(p99 / c),
    ));
    s.raw = serde_json::json!({"restart_ms": restarts, "cold_start_ms": cold});
    Ok(s)
}

/// The token of a credential created for an agent through `server`'s API.
pub(crate) async fn agent_token(server: &Server) -> Result<String> {
    let created = server
        .conn()
        .json(&server.post("/credentials", r#"{"description":"bench agent"}"#))
        .await?;
    Ok(created["token"].as_str().context("no token")?.to_owned())
}

/// The release agent (`agent_bin`) connecting to the server at `server` with `token`.
pub(crate) fn spawn_agent(
    agent_bin: &Path,
    server: SocketAddr,
    token: &str,
) -> Result<ProcessGuard> {
    let mut c = Command::new(agent_bin);
    c.args(["--server", &format!("http://{server}")])
        .env("TUNNEL_AUTHTOKEN", token)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    ProcessGuard::spawn("tunnel-agent", c)
}

/// Polls the session list (every 2 ms, at most 30 s) until `done` holds; returns the ids.
pub(super) async fn wait_sessions(
    conn: &mut Conn,
    server: &Server,
    done: impl Fn(&Vec<String>) -> bool,
) -> Result<Vec<String>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let list = conn.json(&server.get("/tunnel_sessions")).await?;
        let ids: Vec<String> = list["tunnel_sessions"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s["id"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if done(&ids) {
            return Ok(ids);
        }
        if Instant::now() > deadline {
            bail!("the tunnel sessions did not reach the expected state within 30 s: {ids:?}");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}
