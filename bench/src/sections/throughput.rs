//! API throughput and latency under load: three credential endpoints of the real server, on
//! SQLite and (unless `--no-postgres`) on PostgreSQL, against the bare axum handler of
//! `crate::baseline`, with the load generator of `crate::http`. Each read is measured in rounds
//! paired with rounds of its baseline ([`paired`]): measured minutes apart, a ratio moved with the
//! shared machine's drift as much as with the server.

use super::number;
use crate::RunArgs;
use crate::http::{LoadResult, MakeReq, Req, Samples, load, load_samples};
use crate::report::{Row, Section, ms, rps};
use crate::server::{Kind, Server};
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub const NAME: &str = "throughput";

/// Rounds a figure's load is cut into, each paired with a round of its baseline (ABBA: the
/// first of a pair alternates, so that each side goes first as often).
pub(super) const ROUNDS: u32 = 4;

/// The one write of [`endpoints`].
const CREATE: &str = "POST /api/credentials";

/// The unmeasured load before a measurement, which warms a server's caches and its database pool.
const WARM_UP: Duration = Duration::from_secs(1);

/// Each endpoint of each server (SQLite first, then PostgreSQL when given) for `--load-seconds`
/// with `--connections`, after a 1 s warm-up, in rounds paired with the baseline's. `postgres`
/// describes the PostgreSQL server for the section's text (`None`: not measured on PostgreSQL).
pub async fn measure(
    args: &RunArgs,
    servers: &[&Server],
    postgres: Option<&str>,
    baseline: SocketAddr,
) -> Result<Section> {
    let mut s = Section::new(
        number(NAME),
        "API throughput and latency",
        &format!(
            "Load generator in `tunnel-bench` (tokio + hyper, HTTP/1.1 keep-alive), on loopback, \
         each endpoint for the configured time with the configured connections (below), \
         the account holding 1 000 credentials. Every response is read in full; non-2xx \
         responses count as errors. Baseline: a bare axum handler returning a constant \
         credential-shaped JSON body (~300 bytes), its own process, same machine, same run. \
         Each read's load is cut into {ROUNDS} rounds, each paired with a round of the same \
         length of the baseline, the two in turn and the first of a pair alternating (ABBA), \
         so that a figure and its baseline come from the same seconds of the run; a row's \
         baseline column is the bare handler's figure from that row's own rounds. The `POST` \
         runs in one piece right after a baseline run of the same length: what a write leaves \
         to do (SQLite's search indexer catching up, PostgreSQL's autovacuum) would fall into \
         the baseline's rounds. \
         The load generator shares the machine's cores with the server, as it does with the \
         baseline."
        ),
    );
    match postgres {
        Some(pg) => s.method.push_str(&format!(
            " Measured on SQLite (the server's file database, as above) and on PostgreSQL, \
             each server with its own database of 1 000 credentials, one after the other \
             (SQLite first), each figure against its own rounds of the baseline. {pg}"
        )),
        None => s
            .notes
            .push("Not measured on PostgreSQL (`--no-postgres`).".to_owned()),
    }
    let duration = Duration::from_secs(args.load_seconds);
    let n = args.connections;
    s.notes.push(format!(
        "{n} connections, {} s per endpoint (the reads in {ROUNDS} rounds), the baseline as \
         long, after a 1 s warm-up of each.",
        args.load_seconds
    ));
    let make_base: MakeReq = Arc::new(|_| Req::get("/api/credentials/cr_x", None));

    let mut raw = serde_json::Map::new();
    // results[server][endpoint]: (name, measured, its baseline)
    let mut results = Vec::new();
    for server in servers {
        let kind = server.db.kind;
        let mut per_endpoint = Vec::new();
        let mut kind_raw = serde_json::Map::new();
        for (name, make) in endpoints(server).await? {
            let (r, base) = if name == CREATE {
                let base = warm_then_load(baseline, n, duration, make_base.clone()).await?;
                let measured = warm_then_load(server.addr, n, duration, make).await?;
                (measured.result(), base.result())
            } else {
                paired(
                    (server.addr, make),
                    (baseline, make_base.clone()),
                    n,
                    duration,
                )
                .await?
            };
            println!(
                "    {} {name}: {:.0} req/s p50 {:.2} ms p99 {:.2} ms ({} errors); \
                 baseline {:.0} req/s p50 {:.2} ms p99 {:.2} ms",
                kind.label(),
                r.rps,
                r.p50_ms,
                r.p99_ms,
                r.errors,
                base.rps,
                base.p50_ms,
                base.p99_ms
            );
            if r.errors > 0 {
                s.notes.push(format!(
                    "`{name}` on {}: {} non-2xx responses or failures.",
                    kind.label(),
                    r.errors
                ));
            }
            let mut json = r.json();
            json["baseline"] = base.json();
            kind_raw.insert(name.into(), json);
            per_endpoint.push((name, r, base));
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
    // first one's (limits off) in rounds paired as above.
    let limits_row = match servers.first() {
        Some(server) if server.db.kind == Kind::Sqlite => {
            let copy = server.db.sqlite_copy(&args.server_bin, "limited")?;
            let limited = Server::start_limited(&args.server_bin, copy)?;
            let (name, make) = endpoints(server).await?.swap_remove(0);
            let (r, off) = paired(
                (limited.addr, make.clone()),
                (server.addr, make),
                n,
                duration,
            )
            .await?;
            println!(
                "    SQLite {name}, every rate limit on: {:.0} req/s p50 {:.2} ms p99 {:.2} ms ({} errors); \
                 off: {:.0} req/s p50 {:.2} ms p99 {:.2} ms",
                r.rps, r.p50_ms, r.p99_ms, r.errors, off.rps, off.p50_ms, off.p99_ms
            );
            let mut json = r.json();
            json["baseline"] = off.json();
            raw.insert(format!("{name} rate limited"), json);
            s.notes.push(format!(
                "The rate limits' cost (`{name}`, SQLite): the same load on a second server, on a \
                 copy of the same database, with every limit on (buckets per key and per address large \
                 enough never to empty, so each request pays for both checks and none is \
                 refused; the failed-key and agent limits at their defaults), its baseline \
                 column being the first server's figure with the limits off, in rounds paired \
                 with these as above. {} errors.",
                r.errors
            ));
            Some((name, r, off))
        }
        _ => None,
    };
    let by_kind = servers.len() > 1;
    let endpoint_count = results.first().map_or(0, |(_, e)| e.len());
    for e in 0..endpoint_count {
        for metric in ["throughput", "p50", "p99"] {
            for (kind, per_endpoint) in &results {
                let (name, r, base) = &per_endpoint[e];
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

/// A load run of `make` on `addr` (see [`load_samples`]) after an unmeasured [`WARM_UP`].
pub(super) async fn warm_then_load(
    addr: SocketAddr,
    connections: usize,
    duration: Duration,
    make: MakeReq,
) -> Result<Samples> {
    load(addr, connections, WARM_UP, make.clone()).await?;
    load_samples(addr, connections, duration, make).await
}

/// `make` on `addr` and its baseline, `base_make` on `base_addr`, each for `duration` in all:
/// both warmed up, then [`ROUNDS`] pairs of rounds, one of each, the first of a pair
/// alternating. So the two share the machine's drift over those seconds. `(measured, baseline)`.
async fn paired(
    (addr, make): (SocketAddr, MakeReq),
    (base_addr, base_make): (SocketAddr, MakeReq),
    connections: usize,
    duration: Duration,
) -> Result<(LoadResult, LoadResult)> {
    load(addr, connections, WARM_UP, make.clone()).await?;
    load(base_addr, connections, WARM_UP, base_make.clone()).await?;
    let round = duration / ROUNDS;
    let (mut measured, mut base) = (Samples::default(), Samples::default());
    for r in 0..ROUNDS {
        for measured_now in [r % 2 == 0, r % 2 == 1] {
            if measured_now {
                measured.add(load_samples(addr, connections, round, make.clone()).await?);
            } else {
                base.add(load_samples(base_addr, connections, round, base_make.clone()).await?);
            }
        }
    }
    Ok((measured.result(), base.result()))
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
        (CREATE, {
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
