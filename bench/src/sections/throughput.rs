//! API throughput and latency under load: three credential endpoints of the real server
//! against the bare axum handler of `crate::baseline`, with the load generator of
//! `crate::http`.

use super::number;
use crate::RunArgs;
use crate::http::{MakeReq, Req, load};
use crate::report::{Row, Section, ms, rps};
use crate::server::Server;
use anyhow::{Context, Result};
use std::sync::Arc;
use std::time::Duration;

pub const NAME: &str = "throughput";

/// Each endpoint for `--load-seconds` with `--connections`, after a 1 s warm-up.
pub async fn measure(
    args: &RunArgs,
    server: &Server,
    baseline: std::net::SocketAddr,
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
    let duration = Duration::from_secs(args.load_seconds);
    let n = args.connections;
    s.notes.push(format!(
        "{n} connections, {} s per endpoint, after a 1 s warm-up each.",
        args.load_seconds
    ));
    let warm =
        |addr, make: MakeReq| async move { load(addr, n, Duration::from_secs(1), make).await };

    let make_base: MakeReq = Arc::new(|_| Req::get("/api/credentials/cr_x", None));
    warm(baseline, make_base.clone()).await?;
    let base = load(baseline, n, duration, make_base).await?;
    println!(
        "    baseline: {:.0} req/s p50 {:.2} ms p99 {:.2} ms",
        base.rps, base.p50_ms, base.p99_ms
    );

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
    let endpoints: Vec<(&str, MakeReq)> = vec![
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
    ];
    let mut raw = serde_json::Map::new();
    raw.insert("baseline".into(), base.json());
    for (name, make) in endpoints {
        warm(server.addr, make.clone()).await?;
        let r = load(server.addr, n, duration, make).await?;
        println!(
            "    {name}: {:.0} req/s p50 {:.2} ms p99 {:.2} ms ({} errors)",
            r.rps, r.p50_ms, r.p99_ms, r.errors
        );
        s.rows.push(Row::new(
            format!("`{name}` throughput"),
            rps(r.rps),
            rps(base.rps),
            Some(r.rps / base.rps),
        ));
        s.rows.push(Row::new(
            format!("`{name}` p50"),
            ms(r.p50_ms),
            ms(base.p50_ms),
            Some(r.p50_ms / base.p50_ms),
        ));
        s.rows.push(Row::new(
            format!("`{name}` p99"),
            ms(r.p99_ms),
            ms(base.p99_ms),
            Some(r.p99_ms / base.p99_ms),
        ));
        if r.errors > 0 {
            s.notes.push(format!(
                "`{name}`: {} non-2xx responses or failures.",
                r.errors
            ));
        }
        raw.insert(name.into(), r.json());
    }
    s.raw = raw.into();
    Ok(s)
}
