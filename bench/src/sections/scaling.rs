//! Scaling with the number of credentials: list page latencies with 1 k, 100 k and 1 M
//! credentials, on SQLite and (unless `--no-postgres`) on PostgreSQL, with the same sizes. Every
//! size of a kind has its database and server up at once and is measured in rounds, in turn, so
//! that each ratio compares sizes measured over the same minutes. A second 1 k database and
//! server of each kind, measured in the same rounds, gives the section's noise floor (A/A). The
//! SQLite 100 k server also gives the memory section its figures.

use super::{MEMORY, SMALL, number, wants};
use crate::RunArgs;
use crate::http::{Req, sequential};
use crate::procs::rss_kib;
use crate::report::{Row, Section, ms};
use crate::server::{Databases, Kind, Server};
use crate::stats::{median_of_parts, percentile};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

pub const NAME: &str = "scaling";

/// First page, middle page and last full page latencies, and a selective search's (ms,
/// sequential, one connection).
#[derive(Debug, Clone, Default)]
pub struct ListLatencies {
    pub first: Vec<f64>,
    pub middle: Vec<f64>,
    pub deep: Vec<f64>,
    /// `q` = the last 8 characters of the middle credential's id: one match among them all.
    pub search: Vec<f64>,
}

impl ListLatencies {
    fn extend(&mut self, more: ListLatencies) {
        self.first.extend(more.first);
        self.middle.extend(more.middle);
        self.deep.extend(more.deep);
        self.search.extend(more.search);
    }
}

/// Requests of each series: enough that p99 is not one slow request (with 50 it was the slowest,
/// and one scheduling hiccup on the shared cores moved a ratio by 2x). The A/A pair's p99 ratios
/// in seven runs on SQLite (21 of them, 100 k the largest size): from 300 requests 0.68-1.30,
/// 10 within 10 % of 1; from 1 200, 0.53-1.15, 13 within; as the median of the rounds' p99s,
/// 0.77-1.11, 17 within (p50: 0.93-1.03). 1 200 costs a few seconds per size.
const LIST_SAMPLES: usize = 1200;

/// The rounds each series' requests are spread over, every size of a kind measured once a round,
/// the first of a round moving on by one each round. Measured one size after the other (1 k
/// early in the run, the big ones minutes later, after their bulk loads), a drift of the shared
/// machine went into the ratios: in one run the 1 k first page took 0.16 ms and its middle page,
/// measured right after on the same server, 0.26 ms.
const ROUNDS: usize = 6;

/// Warm-up requests before each series of a round.
const LIST_WARMUP: usize = 10;

/// How much of the middle id the search gives: enough to match that credential alone.
const SEARCH_CHARS: usize = 8;

/// `samples` requests of each series on `server`, one series after the other.
async fn list_latencies(server: &Server, samples: usize) -> Result<ListLatencies> {
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
        series.push(sequential(server.addr, &page(before), LIST_WARMUP, samples).await?);
    }
    let [first, middle, deep] = <[Vec<f64>; 3]>::try_from(series).expect("three series");
    let middle_id = &server.db.middle_id;
    let q = &middle_id[middle_id.len() - SEARCH_CHARS..];
    let search = server.get(&format!("/credentials?limit=100&q={q}"));
    let search = sequential(server.addr, &search, LIST_WARMUP, samples).await?;
    Ok(ListLatencies {
        first,
        middle,
        deep,
        search,
    })
}

/// [`LIST_SAMPLES`] requests of each series on each of `servers`, in [`ROUNDS`] rounds.
async fn interleaved(servers: &[&Server]) -> Result<Vec<ListLatencies>> {
    let mut measured = vec![ListLatencies::default(); servers.len()];
    for round in 0..ROUNDS {
        for turn in 0..servers.len() {
            let i = (round + turn) % servers.len();
            measured[i].extend(list_latencies(servers[i], LIST_SAMPLES / ROUNDS).await?);
        }
    }
    Ok(measured)
}

/// What the memory section needs from the 100 k server.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    pub idle_kib: u64,
    pub listed_kib: u64,
    pub pages: u64,
    pub listing_seconds: f64,
}

/// The 1 k, 100 k and `--max-credentials` databases of each kind of `dbs` (PostgreSQL only when
/// this section is wanted), each with its own server, all of a kind up at once; and the SQLite
/// 100 k server's memory for the memory section (that size alone when only it is wanted).
pub async fn measure(
    args: &RunArgs,
    dbs: &Databases,
    console: &Path,
) -> Result<(Option<Section>, Memory)> {
    let per_round = LIST_SAMPLES / ROUNDS;
    let method = format!(
        "`GET /api/credentials?limit=100` latency with the account holding 1 k, 100 k and 1 M \
         credentials (bulk-loaded by `tunnel-server dev seed-credentials`), {LIST_SAMPLES} \
         sequential requests on one connection: the first page, a middle page (`before_id` = \
         the middle credential) and the last full page (`before_id` = the 101st oldest). \
         Baseline: the same page with 1 k credentials. And a search (`q` = the last 8 \
         characters of the middle credential's id, which match it alone, answered from the \
         trigram index), against the plain first page of the same database. Every size has a \
         database and a server of its own, all of them up at once, and each series is \
         measured in {ROUNDS} rounds of {per_round} requests (after {LIST_WARMUP} warm-up \
         ones), every size once a round, in turn, so that a figure and its baseline come from \
         the same minutes. A second server on a second database of 1 k credentials is measured \
         in the same rounds (A/A): its ratios to the first one's are what noise alone does to \
         a ratio."
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
            " Measured on SQLite and on PostgreSQL with the same sizes (SQLite's first); the \
             baseline of each is the 1 k figure on the same database, and PostgreSQL's 1 k \
             rows compare with SQLite's. The bulk load inserts row by row in transactions of \
             50 000 rows on both, then (PostgreSQL) runs `ANALYZE` on the table, as a bulk \
             load should. {pg}"
        ));
    } else if wants(args, NAME) {
        s.notes
            .push("Not measured on PostgreSQL (`--no-postgres`).".to_owned());
    }
    let mut memory = Memory::default();
    // The sizes of a kind: the 1 k baseline first, then the big ones.
    let mut sizes = vec![MEMORY];
    if wants(args, NAME) {
        sizes.insert(0, SMALL);
        if args.max_credentials > MEMORY {
            sizes.push(args.max_credentials);
        }
    }
    let big: Vec<u64> = sizes.iter().copied().filter(|&c| c != SMALL).collect();
    // (kind, count) → latencies and seconds of the bulk load.
    let mut measured: BTreeMap<(Kind, u64), ListLatencies> = BTreeMap::new();
    let mut seeds: BTreeMap<(Kind, u64), f64> = BTreeMap::new();
    // The 1 k twin of each kind (A/A).
    let mut twins: BTreeMap<Kind, ListLatencies> = BTreeMap::new();
    for &kind in &kinds {
        // Every database first, then the servers: none waits idle through another's bulk load.
        let mut databases = Vec::with_capacity(sizes.len());
        for &count in &sizes {
            println!(
                "bench: {}. preparing a {} database of {count} credentials",
                number(NAME),
                kind.label()
            );
            let t = Instant::now();
            let db = dbs.prepare(&args.server_bin, kind, &db_name(count), count)?;
            println!(
                "    bulk load {:.1} s (prepare {:.1} s)",
                db.seed_seconds,
                t.elapsed().as_secs_f64()
            );
            if count != SMALL {
                seeds.insert((kind, count), db.seed_seconds);
            }
            databases.push(db);
        }
        // The twin: a second database of the 1 k size, measured like the others (A/A).
        if wants(args, NAME) {
            println!(
                "bench: {}. preparing a second {} database of {SMALL} credentials",
                number(NAME),
                kind.label()
            );
            databases.push(dbs.prepare(&args.server_bin, kind, TWIN, SMALL)?);
        }
        // The console is served too (unused here), as in production.
        let console = console.to_path_buf();
        let servers = databases
            .into_iter()
            .map(|db| Server::start(&args.server_bin, db, Some(&console)))
            .collect::<Result<Vec<_>>>()?;
        // The memory section reads the 100 k server; its number is not named here so that this
        // section depends on none other.
        let memory_server = sizes
            .iter()
            .position(|&count| count == MEMORY)
            .filter(|_| kind == Kind::Sqlite)
            .map(|i| &servers[i]);
        if let Some(server) = memory_server {
            tokio::time::sleep(Duration::from_secs(1)).await;
            memory.idle_kib = rss_kib(server.process.pid())?;
        }
        if wants(args, NAME) {
            println!(
                "bench: {}. {} lists, {ROUNDS} rounds",
                number(NAME),
                kind.label()
            );
            let all: Vec<&Server> = servers.iter().collect();
            let mut latencies = interleaved(&all).await?;
            if let Some(twin) = latencies.pop() {
                twins.insert(kind, twin);
            }
            for (&count, latencies) in sizes.iter().zip(latencies) {
                measured.insert((kind, count), latencies);
            }
        }
        if let Some(server) = memory_server {
            let t = Instant::now();
            memory.pages = list_everything(server).await?;
            memory.listing_seconds = t.elapsed().as_secs_f64();
            memory.listed_kib = rss_kib(server.process.pid())?;
        }
        drop(servers);
        for &count in &sizes {
            dbs.remove(kind, &db_name(count));
        }
        dbs.remove(kind, TWIN);
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
        && let (Some(sqlite), Some(pg)) = (
            measured.get(&(Kind::Sqlite, SMALL)),
            measured.get(&(Kind::Postgres, SMALL)),
        )
    {
        for ((what, pg), (_, base)) in pages(pg).into_iter().zip(pages(sqlite)) {
            for (p, label) in percentiles {
                let (a, b) = (percentile(&pg, p), percentile(&base, p));
                s.rows.push(
                    ratio_row(
                        format!("{} credentials, {what}, {label}", thousands(SMALL)),
                        (a, b),
                        "1 000, SQLite",
                    )
                    .on(Kind::Postgres),
                );
            }
        }
    }
    // The twin against the 1 k database: what the ratios below can tell apart from noise.
    for (&kind, twin) in &twins {
        let Some(base) = measured.get(&(kind, SMALL)) else {
            continue;
        };
        for ((what, twin), (_, base)) in pages(twin).into_iter().zip(pages(base)) {
            for (p, label) in percentiles {
                let (a, b) = (percentile(&twin, p), percentile(&base, p));
                let row = ratio_row(
                    format!(
                        "{} credentials again (A/A), {what}, {label}",
                        thousands(SMALL)
                    ),
                    (a, b),
                    "1 000, the first server",
                );
                s.rows.push(if by_kind { row.on(kind) } else { row });
            }
        }
    }
    for &count in &big {
        for (page, what) in ["first page", "middle page", "last full page"]
            .into_iter()
            .enumerate()
        {
            for (p, label) in percentiles {
                for &kind in &kinds {
                    let (Some(big), Some(base)) =
                        (measured.get(&(kind, count)), measured.get(&(kind, SMALL)))
                    else {
                        continue;
                    };
                    let (big, base) = (&pages(big)[page].1, &pages(base)[page].1);
                    let (a, b) = (percentile(big, p), percentile(base, p));
                    let baseline = match (by_kind, kind) {
                        (true, Kind::Postgres) => "1 000, PostgreSQL",
                        _ => "1 000",
                    };
                    let row = ratio_row(
                        format!("{} credentials, {what}, {label}", thousands(count)),
                        (a, b),
                        baseline,
                    );
                    s.rows.push(if by_kind { row.on(kind) } else { row });
                }
            }
        }
    }
    // The p99 ratios again, each p99 the median of the rounds' own.
    for &kind in &kinds {
        let Some(base) = measured.get(&(kind, SMALL)) else {
            continue;
        };
        let others = twins
            .get(&kind)
            .map(|t| (format!("{} again (A/A)", thousands(SMALL)), t))
            .into_iter()
            .chain(
                big.iter()
                    .filter_map(|&count| Some((thousands(count), measured.get(&(kind, count))?))),
            );
        let ratios: Vec<String> = others
            .map(|(name, l)| {
                let each: Vec<String> = pages(l)
                    .iter()
                    .zip(pages(base))
                    .map(|((_, a), (_, b))| {
                        let (a, b) = (
                            median_of_parts(a, ROUNDS, 99.0),
                            median_of_parts(&b, ROUNDS, 99.0),
                        );
                        format!("{:.2}", a / b)
                    })
                    .collect();
                format!("{name} {}", each.join(" / "))
            })
            .collect();
        let on = if by_kind {
            format!(" ({})", kind.label())
        } else {
            String::new()
        };
        s.notes.push(format!(
            "p99 ratios to 1 k{on} with each p99 the median of the {ROUNDS} rounds' own (a \
             burst of the shared machine in one round moves it less): {} (first, middle and \
             last full page).",
            ratios.join("; ")
        ));
    }
    // The search beside the plain list: at every size, against the first page of the same
    // database.
    for &count in &sizes {
        for (p, label) in percentiles {
            for &kind in &kinds {
                let Some(l) = measured.get(&(kind, count)) else {
                    continue;
                };
                let (a, b) = (percentile(&l.search, p), percentile(&l.first, p));
                let row = ratio_row(
                    format!(
                        "{} credentials, search `q` (one match), {label}",
                        thousands(count)
                    ),
                    (a, b),
                    "first page, same size",
                );
                s.rows.push(if by_kind { row.on(kind) } else { row });
            }
        }
    }
    for &count in &big {
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
    for ((kind, count), l) in &measured {
        match kind {
            Kind::Sqlite => raw.insert(count.to_string(), latencies_json(l)),
            Kind::Postgres => pg_raw.insert(count.to_string(), latencies_json(l)),
        };
    }
    for (kind, twin) in &twins {
        let into = match kind {
            Kind::Sqlite => &mut raw,
            Kind::Postgres => &mut pg_raw,
        };
        into.insert(format!("{SMALL}_again"), latencies_json(twin));
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

/// The row of `figure`: `measured` against `baseline` (both in ms), the baseline described by
/// `of` in parentheses.
fn ratio_row(figure: String, (measured, baseline): (f64, f64), of: &str) -> Row {
    Row::new(
        figure,
        ms(measured),
        format!("{} ({of})", ms(baseline)),
        Some(measured / baseline),
    )
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

/// The name of the second database of [`SMALL`] credentials (A/A): two servers of the same
/// size, measured the same way, differ only by noise, which bounds what a ratio of this section
/// can resolve.
const TWIN: &str = "db-twin";

/// The name of the database of `count` credentials (one per size and kind), made and removed
/// by this section.
fn db_name(count: u64) -> String {
    format!("db-{count}")
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
