//! Scaling with the number of credentials: list page latencies with 1 k (measured on the small
//! server, before the throughput section adds rows), 100 k and 1 M credentials. The 100 k
//! server also gives the memory section its figures.

use super::{MEMORY, SMALL, number, wants};
use crate::RunArgs;
use crate::http::{Req, sequential};
use crate::procs::rss_kib;
use crate::report::{Row, Section, ms};
use crate::server::{Server, prepare};
use crate::stats::percentile;
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::time::{Duration, Instant};

pub const NAME: &str = "scaling";

/// First page, middle page and last full page latencies (ms, sequential, one connection).
#[derive(Debug, Clone)]
pub struct ListLatencies {
    pub first: Vec<f64>,
    pub middle: Vec<f64>,
    pub deep: Vec<f64>,
}

const LIST_SAMPLES: usize = 50;

/// Warm-up requests before each series.
const LIST_WARMUP: usize = 5;

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
    Ok(ListLatencies {
        first,
        middle,
        deep,
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

/// The 100 k and `--max-credentials` databases, each with its own server (and the 100 k
/// server's memory for the memory section).
pub async fn measure(
    args: &RunArgs,
    out_dir: &Path,
    small: Option<ListLatencies>,
) -> Result<(Option<Section>, Memory)> {
    let mut s = Section::new(
        number(NAME),
        "Scaling with the number of credentials",
        "`GET /api/credentials?limit=100` latency with the account holding 1 k, 100 k and 1 M \
         credentials (bulk-loaded by `tunnel-server dev seed-credentials`), 50 sequential \
         requests on one connection after 5 warm-up ones: the first page, a middle page \
         (`before_id` = the middle credential) and the last full page (`before_id` = the \
         101st oldest). Baseline: the same page with 1 k credentials.",
    );
    let mut memory = Memory::default();
    let mut sizes = vec![MEMORY];
    if args.max_credentials > MEMORY && wants(args, NAME) {
        sizes.push(args.max_credentials);
    }
    let mut raw = serde_json::Map::new();
    if let Some(small) = &small {
        raw.insert(SMALL.to_string(), latencies_json(small));
    }
    for count in sizes {
        // The memory section reads the same servers; its number is not named here so that
        // this section depends on none other.
        println!(
            "bench: {}. preparing a database of {count} credentials",
            number(NAME)
        );
        let db = prepare(
            &args.server_bin,
            &out_dir.join(format!("db-{count}")),
            count,
        )?;
        s.notes.push(format!(
            "Bulk load of {count} credentials: {:.1} s.",
            db.seed_seconds
        ));
        // The console is served too (unused here), as in production.
        let server = Server::start(&args.server_bin, db, Some(&out_dir.join("console")))?;
        if count == MEMORY {
            tokio::time::sleep(Duration::from_secs(1)).await;
            memory.idle_kib = rss_kib(server.process.pid())?;
        }
        if wants(args, NAME) {
            let l = list_latencies(&server).await?;
            if let Some(small) = &small {
                for (what, big, base) in [
                    ("first page", &l.first, &small.first),
                    ("middle page", &l.middle, &small.middle),
                    ("last full page", &l.deep, &small.deep),
                ] {
                    for (p, label) in [(50.0, "p50"), (99.0, "p99")] {
                        let (a, b) = (percentile(big, p), percentile(base, p));
                        s.rows.push(Row::new(
                            format!("{} credentials, {what}, {label}", thousands(count)),
                            ms(a),
                            format!("{} (1 000)", ms(b)),
                            Some(a / b),
                        ));
                    }
                }
            }
            raw.insert(count.to_string(), latencies_json(&l));
        }
        if count == MEMORY {
            let t = Instant::now();
            memory.pages = list_everything(&server).await?;
            memory.listing_seconds = t.elapsed().as_secs_f64();
            memory.listed_kib = rss_kib(server.process.pid())?;
        }
    }
    s.raw = raw.into();
    Ok((wants(args, NAME).then_some(s), memory))
}

fn latencies_json(l: &ListLatencies) -> serde_json::Value {
    serde_json::json!({"first_ms": l.first, "middle_ms": l.middle, "deep_ms": l.deep})
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
