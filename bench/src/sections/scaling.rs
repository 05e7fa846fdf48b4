//! Scaling with the number of credentials: list page latencies with 1 k (measured on the small
//! servers, before the throughput section adds rows), 100 k and 1 M credentials, on SQLite and
//! (unless `--no-postgres`) on PostgreSQL, with the same sizes. The SQLite 100 k server also
//! gives the memory section its figures.

use super::{MEMORY, SMALL, number, wants};
use crate::RunArgs;
use crate::http::{Req, sequential};
use crate::procs::rss_kib;
use crate::report::{Row, Section, ms};
use crate::server::{Databases, Kind, Server};
use crate::stats::percentile;
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

pub const NAME: &str = "scaling";

/// First page, middle page and last full page latencies, and a selective search's (ms,
/// sequential, one connection).
#[derive(Debug, Clone)]
pub struct ListLatencies {
    pub first: Vec<f64>,
    pub middle: Vec<f64>,
    pub deep: Vec<f64>,
    /// `q` = the last 8 characters of the middle credential's id: one match among them all.
    pub search: Vec<f64>,
}

/// Requests of each series: enough that p99 is not one slow request (with 50 it was the slowest,
/// and one scheduling hiccup on the shared cores moved a ratio by 2x).
const LIST_SAMPLES: usize = 300;

/// Warm-up requests before each series.
const LIST_WARMUP: usize = 10;

/// How much of the middle id the search gives: enough to match that credential alone.
const SEARCH_CHARS: usize = 8;

pub async fn list_latencies(server: &Server) -> Result<ListLatencies> {
    let page = |before: Option<&str>| match before {
        None => server.get("/credentials?limit=100"),
        Some(id) => server.get(&format!("/credentials?limit=100&before_id={id}")),
    };
    let mut series = Vec::with_capacity(3);
    for before in [
        None,
        Some(server.db.middle_id.as_str()),
        Some(server.db.deep_id.as_str()),
    ] {
        series.push(sequential(server.addr, &page(before), LIST_WARMUP, LIST_SAMPLES).await?);
    }
    let [first, middle, deep] = <[Vec<f64>; 3]>::try_from(series).expect("three series");
    let middle_id = &server.db.middle_id;
    let q = &middle_id[middle_id.len() - SEARCH_CHARS..];
    let search = server.get(&format!("/credentials?limit=100&q={q}"));
    let search = sequential(server.addr, &search, LIST_WARMUP, LIST_SAMPLES).await?;
    Ok(ListLatencies {
        first,
        middle,
        deep,
        search,
    })
}

/// What the memory section needs from the 100 k server.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    pub idle_kib: u64,
    pub listed_kib: u64,
    pub pages: u64,
    pub listing_seconds: f64,
}

/// The 100 k and `--max-credentials` databases of each kind of `dbs` (PostgreSQL only when this
/// section is wanted), each with its own server (and the SQLite 100 k server's memory for the
/// memory section). `small`: the 1 k latencies of each kind's small server.
pub async fn measure(
    args: &RunArgs,
    dbs: &Databases,
    console: &Path,
    small: &BTreeMap<Kind, ListLatencies>,
) -> Result<(Option<Section>, Memory)> {
    let method = format!(
        "`GET /api/credentials?limit=100` latency with the account holding 1 k, 100 k and 1 M \
         credentials (bulk-loaded by `tunnel-server dev seed-credentials`), {LIST_SAMPLES} \
         sequential requests on one connection after {LIST_WARMUP} warm-up ones: the first \
         page, a middle page (`before_id` = the middle credential) and the last full page \
         (`before_id` = the 101st oldest). Baseline: the same page with 1 k credentials. And a \
         search (`q` = the last 8 characters of the middle credential's id, which match it \
         alone, answered from the trigram index), against the plain first page of the same \
         database."
    );
    let mut s = Section::new(
        number(NAME),
        "Scaling with the number of credentials",
        &method,
    );
    let kinds: Vec<Kind> = dbs
        .kinds()
        .into_iter()
        .filter(|k| *k == Kind::Sqlite || wants(args, NAME))
        .collect();
    let by_kind = kinds.len() > 1;
    if let Some(pg) = dbs.postgres_description().filter(|_| by_kind) {
        s.method.push_str(&format!(
            " Measured on SQLite and on PostgreSQL with the same sizes, each size a database \
             and a server of its own (SQLite's first); the baseline of each is the 1 k \
             figure on the same database, and PostgreSQL's 1 k rows compare with SQLite's. \
             The bulk load inserts row by row in transactions of 50 000 rows on both, then \
             (PostgreSQL) runs `ANALYZE` on the table, as a bulk load should. {pg}"
        ));
    } else if wants(args, NAME) {
        s.notes
            .push("Not measured on PostgreSQL (`--no-postgres`).".to_owned());
    }
    let mut memory = Memory::default();
    let mut sizes = vec![MEMORY];
    if args.max_credentials > MEMORY && wants(args, NAME) {
        sizes.push(args.max_credentials);
    }
    // (kind, count) → latencies and seconds of the bulk load.
    let mut measured: BTreeMap<(Kind, u64), ListLatencies> = BTreeMap::new();
    let mut seeds: BTreeMap<(Kind, u64), f64> = BTreeMap::new();
    for &kind in &kinds {
        for &count in &sizes {
            // The memory section reads the same servers; its number is not named here so that
            // this section depends on none other.
            println!(
                "bench: {}. preparing a {} database of {count} credentials",
                number(NAME),
                kind.label()
            );
            let name = format!("db-{count}");
            let t = Instant::now();
            let db = dbs.prepare(&args.server_bin, kind, &name, count)?;
            println!(
                "    bulk load {:.1} s (prepare {:.1} s)",
                db.seed_seconds,
                t.elapsed().as_secs_f64()
            );
            seeds.insert((kind, count), db.seed_seconds);
            // The console is served too (unused here), as in production.
            let server = Server::start(&args.server_bin, db, Some(&console.to_path_buf()))?;
            let memory_server = kind == Kind::Sqlite && count == MEMORY;
            if memory_server {
                tokio::time::sleep(Duration::from_secs(1)).await;
                memory.idle_kib = rss_kib(server.process.pid())?;
            }
            if wants(args, NAME) {
                measured.insert((kind, count), list_latencies(&server).await?);
            }
            if memory_server {
                let t = Instant::now();
                memory.pages = list_everything(&server).await?;
                memory.listing_seconds = t.elapsed().as_secs_f64();
                memory.listed_kib = rss_kib(server.process.pid())?;
            }
            drop(server);
            dbs.remove(kind, &name);
        }
    }

    let pages = |l: &ListLatencies| -> [(&'static str, Vec<f64>); 3] {
        [
            ("first page", l.first.clone()),
            ("middle page", l.middle.clone()),
            ("last full page", l.deep.clone()),
        ]
    };
    let percentiles = [(50.0, "p50"), (99.0, "p99")];
    // PostgreSQL's 1 k against SQLite's.
    if by_kind
        && let (Some(sqlite), Some(pg)) = (small.get(&Kind::Sqlite), small.get(&Kind::Postgres))
    {
        for ((what, pg), (_, base)) in pages(pg).into_iter().zip(pages(sqlite)) {
            for (p, label) in percentiles {
                let (a, b) = (percentile(&pg, p), percentile(&base, p));
                s.rows.push(
                    Row::new(
                        format!("{} credentials, {what}, {label}", thousands(SMALL)),
                        ms(a),
                        format!("{} (1 000, SQLite)", ms(b)),
                        Some(a / b),
                    )
                    .on(Kind::Postgres),
                );
            }
        }
    }
    for &count in &sizes {
        for (page, what) in ["first page", "middle page", "last full page"]
            .into_iter()
            .enumerate()
        {
            for (p, label) in percentiles {
                for &kind in &kinds {
                    let (Some(big), Some(base)) = (measured.get(&(kind, count)), small.get(&kind))
                    else {
                        continue;
                    };
                    let (big, base) = (&pages(big)[page].1, &pages(base)[page].1);
                    let (a, b) = (percentile(big, p), percentile(base, p));
                    let baseline = match (by_kind, kind) {
                        (true, Kind::Postgres) => format!("{} (1 000, PostgreSQL)", ms(b)),
                        _ => format!("{} (1 000)", ms(b)),
                    };
                    let row = Row::new(
                        format!("{} credentials, {what}, {label}", thousands(count)),
                        ms(a),
                        baseline,
                        Some(a / b),
                    );
                    s.rows.push(if by_kind { row.on(kind) } else { row });
                }
            }
        }
    }
    // The search beside the plain list: at every size, against the first page of the same
    // database.
    let mut all_sizes = vec![SMALL];
    all_sizes.extend(&sizes);
    for &count in &all_sizes {
        for (p, label) in percentiles {
            for &kind in &kinds {
                let latencies = match count {
                    SMALL => small.get(&kind),
                    _ => measured.get(&(kind, count)),
                };
                let Some(l) = latencies else {
                    continue;
                };
                let (a, b) = (percentile(&l.search, p), percentile(&l.first, p));
                let row = Row::new(
                    format!(
                        "{} credentials, search `q` (one match), {label}",
                        thousands(count)
                    ),
                    ms(a),
                    format!("{} (first page, same size)", ms(b)),
                    Some(a / b),
                );
                s.rows.push(if by_kind { row.on(kind) } else { row });
            }
        }
    }
    for &count in &sizes {
        let sqlite = seeds
            .get(&(Kind::Sqlite, count))
            .copied()
            .unwrap_or_default();
        match seeds.get(&(Kind::Postgres, count)) {
            Some(pg) => s.notes.push(format!(
                "Bulk load of {count} credentials: SQLite {sqlite:.1} s, PostgreSQL {pg:.1} s \
                 ({:.1}× SQLite's).",
                pg / sqlite
            )),
            None => s
                .notes
                .push(format!("Bulk load of {count} credentials: {sqlite:.1} s.")),
        }
    }

    // SQLite's figures stay where they always were; PostgreSQL's go under its own key.
    let mut raw = serde_json::Map::new();
    let mut pg_raw = serde_json::Map::new();
    for (kind, l) in small {
        if *kind == Kind::Sqlite {
            raw.insert(SMALL.to_string(), latencies_json(l));
        } else if by_kind {
            pg_raw.insert(SMALL.to_string(), latencies_json(l));
        }
    }
    for ((kind, count), l) in &measured {
        match kind {
            Kind::Sqlite => raw.insert(count.to_string(), latencies_json(l)),
            Kind::Postgres => pg_raw.insert(count.to_string(), latencies_json(l)),
        };
    }
    if by_kind {
        let seed_seconds: serde_json::Map<_, _> = seeds
            .iter()
            .filter(|((k, _), _)| *k == Kind::Postgres)
            .map(|((_, count), s)| (count.to_string(), (*s).into()))
            .collect();
        pg_raw.insert("seed_seconds".into(), seed_seconds.into());
        raw.insert(Kind::Postgres.slug().into(), pg_raw.into());
    }
    s.raw = raw.into();
    Ok((wants(args, NAME).then_some(s), memory))
}

fn latencies_json(l: &ListLatencies) -> serde_json::Value {
    serde_json::json!({"first_ms": l.first, "middle_ms": l.middle, "deep_ms": l.deep, "search_ms": l.search})
}

fn thousands(n: u64) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{} M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{} k", n / 1_000),
        n => n.to_string(),
    }
}

/// Follows `next_page_uri` from the first page to the last; returns the number of pages.
async fn list_everything(server: &Server) -> Result<u64> {
    let mut conn = server.conn();
    let mut path = "/api/credentials?limit=100".to_owned();
    for pages in 1..=100_000u64 {
        let page = conn.json(&Req::get(path.clone(), server.key())).await?;
        match page["next_page_uri"].as_str() {
            None => return Ok(pages),
            Some(next) => {
                let at = next.find("/api/").context("next_page_uri without /api/")?;
                path = next[at..].to_owned();
            }
        }
    }
    bail!("more than 100 000 pages")
}
