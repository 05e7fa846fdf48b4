//! API throughput and latency under load: three credential endpoints of the real server, on
//! SQLite and (unless `--no-postgres`) on PostgreSQL, against the bare axum handler of
//! `crate::baseline` (one baseline measurement for both), with the load generator of
//! `crate::http`.

use super::number;
use crate::RunArgs;
use crate::http::{LoadResult, MakeReq, Req, load};
use crate::report::{Row, Section, ms, rps};
use crate::server::{Kind, Server};
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub const NAME: &str = "throughput";

/// Each endpoint of each server (SQLite first, then PostgreSQL when given) for `--load-seconds`
/// with `--connections`, after a 1 s warm-up. `postgres` describes the PostgreSQL server for the
/// section's text (`None`: not measured on PostgreSQL).
pub async fn measure(
    args: &RunArgs,
    servers: &[&Server],
    postgres: Option<&str>,
    baseline: SocketAddr,
) -> Result<Section> {
    let mut s = Section::new(
        number(NAME),
        "API throughput and latency",
        "Load generator in `tunnel-bench` (tokio + hyper, HTTP/1.1 keep-alive), on loopback, \
         each endpoint for the configured time with the configured connections (below), \
         the account holding 1 000 credentials. Every response is read in full; non-2xx \
         responses count as errors. Baseline: a bare axum handler returning a constant \
         credential-shaped JSON body (~300 bytes), its own process, same machine, same run. \
         The load generator shares the machine's cores with the server, as it does with the \
         baseline.",
    );
    match postgres {
        Some(pg) => s.method.push_str(&format!(
            " Measured on SQLite (the server's file database, as above) and on PostgreSQL, \
             each server with its own database of 1 000 credentials, one after the other \
             (SQLite first), both against the same baseline measurement. {pg}"
        )),
        None => s
            .notes
            .push("Not measured on PostgreSQL (`--no-postgres`).".to_owned()),
    }
    let duration = Duration::from_secs(args.load_seconds);
    let n = args.connections;
    s.notes.push(format!(
        "{n} connections, {} s per endpoint, after a 1 s warm-up each.",
        args.load_seconds
    ));
    let make_base: MakeReq = Arc::new(|_| Req::get("/api/credentials/cr_x", None));
    let base = warm_then_load(baseline, n, duration, make_base).await?;
    println!(
        "    baseline: {:.0} req/s p50 {:.2} ms p99 {:.2} ms",
        base.rps, base.p50_ms, base.p99_ms
    );

    let mut raw = serde_json::Map::new();
    raw.insert("baseline".into(), base.json());
    // results[server][endpoint]
    let mut results = Vec::new();
    for server in servers {
        let kind = server.db.kind;
        let mut per_endpoint = Vec::new();
        let mut kind_raw = serde_json::Map::new();
        for (name, make) in endpoints(server).await? {
            let r = warm_then_load(server.addr, n, duration, make).await?;
            println!(
                "    {} {name}: {:.0} req/s p50 {:.2} ms p99 {:.2} ms ({} errors)",
                kind.label(),
                r.rps,
                r.p50_ms,
                r.p99_ms,
                r.errors
            );
            if r.errors > 0 {
                s.notes.push(format!(
                    "`{name}` on {}: {} non-2xx responses or failures.",
                    kind.label(),
                    r.errors
                ));
            }
            kind_raw.insert(name.into(), r.json());
            per_endpoint.push((name, r));
        }
        // SQLite's figures stay where they always were; PostgreSQL's go under its own key.
        match kind {
            Kind::Sqlite => raw.extend(kind_raw),
            Kind::Postgres => {
                raw.insert(kind.slug().into(), kind_raw.into());
            }
        }
        results.push((kind, per_endpoint));
    }
    // The rate limits' cost: the same read on a second server, on a copy of the SQLite
    // database (a SQLite file is served by one process), with every limit on, against the
    // first one's figure (limits off) of this run.
    let limits_row = match (servers.first(), results.first()) {
        (Some(server), Some((Kind::Sqlite, per_endpoint))) => {
            let copy = server.db.sqlite_copy(&args.server_bin, "limited")?;
            let limited = Server::start_limited(&args.server_bin, copy)?;
            let (name, make) = endpoints(server).await?.swap_remove(0);
            let r = warm_then_load(limited.addr, n, duration, make).await?;
            println!(
                "    SQLite {name}, every rate limit on: {:.0} req/s p50 {:.2} ms p99 {:.2} ms ({} errors)",
                r.rps, r.p50_ms, r.p99_ms, r.errors
            );
            raw.insert(format!("{name} rate limited"), r.json());
            let off = &per_endpoint[0].1;
            s.notes.push(format!(
                "The rate limits' cost (`{name}`, SQLite): the same load on a second server, on a \
                 copy of the same database, with every limit on (buckets per key and per address large \
                 enough never to empty, so each request pays for both checks and none is \
                 refused; the failed-key and agent limits at their defaults), its baseline \
                 column being the first server's figure with the limits off. {} errors.",
                r.errors
            ));
            Some((name, r, off.clone()))
        }
        _ => None,
    };
    let by_kind = servers.len() > 1;
    let endpoint_count = results.first().map_or(0, |(_, e)| e.len());
    for e in 0..endpoint_count {
        for metric in ["throughput", "p50", "p99"] {
            for (kind, per_endpoint) in &results {
                let (name, r) = &per_endpoint[e];
                let (measured, base_value, value, base_shown) = match metric {
                    "throughput" => (rps(r.rps), base.rps, r.rps, rps(base.rps)),
                    "p50" => (ms(r.p50_ms), base.p50_ms, r.p50_ms, ms(base.p50_ms)),
                    _ => (ms(r.p99_ms), base.p99_ms, r.p99_ms, ms(base.p99_ms)),
                };
                let row = Row::new(
                    format!("`{name}` {metric}"),
                    measured,
                    base_shown,
                    Some(value / base_value),
                );
                s.rows.push(if by_kind { row.on(*kind) } else { row });
            }
        }
    }
    if let Some((name, on, off)) = limits_row {
        s.rows.push(Row::new(
            format!("`{name}` throughput, rate limits on (vs off)"),
            rps(on.rps),
            rps(off.rps),
            Some(on.rps / off.rps),
        ));
        s.rows.push(Row::new(
            format!("`{name}` p99, rate limits on (vs off)"),
            ms(on.p99_ms),
            ms(off.p99_ms),
            Some(on.p99_ms / off.p99_ms),
        ));
    }
    s.raw = raw.into();
    Ok(s)
}

/// A load run of `make` on `addr` (see [`load`]) after an unmeasured 1 s one, which warms the
/// server's caches and its database pool.
pub(super) async fn warm_then_load(
    addr: SocketAddr,
    connections: usize,
    duration: Duration,
    make: MakeReq,
) -> Result<LoadResult> {
    load(addr, connections, Duration::from_secs(1), make.clone()).await?;
    load(addr, connections, duration, make).await
}

/// The three endpoints on `server`, with ids of its small database to read.
pub(super) async fn endpoints(server: &Server) -> Result<Vec<(&'static str, MakeReq)>> {
    let page = server
        .conn()
        .json(&server.get("/credentials?limit=100"))
        .await?;
    let ids: Arc<Vec<String>> = Arc::new(
        page["credentials"]
            .as_array()
            .context("no credentials")?
            .iter()
            .filter_map(|c| c["id"].as_str().map(str::to_owned))
            .collect(),
    );
    anyhow::ensure!(!ids.is_empty(), "the small database has no credentials");
    let key = server.db.api_key.clone();
    Ok(vec![
        ("GET /api/credentials/{id}", {
            let (ids, key) = (ids.clone(), key.clone());
            Arc::new(move |i| {
                let id = &ids[usize::try_from(i).unwrap_or_default() % ids.len()];
                Req::get(format!("/api/credentials/{id}"), Some(&key))
            })
        }),
        ("GET /api/credentials?limit=100", {
            let key = key.clone();
            Arc::new(move |_| Req::get("/api/credentials?limit=100", Some(&key)))
        }),
        ("POST /api/credentials", {
            let key = key.clone();
            Arc::new(move |i| {
                Req::post(
                    "/api/credentials",
                    Some(&key),
                    format!(r#"{{"description":"bench {i}","acl":["bind:*.example.com"]}}"#),
                )
            })
        }),
    ])
}
