//! The seven sections of the report, in the order they run (cheapest database first, because
//! the throughput section's POSTs add rows to it), each measuring its figure and its baseline.

use crate::RunArgs;
use crate::browser::Browser;
use crate::http::{Conn, MakeReq, Req, load, sequential};
use crate::procs::{Guard, free_addr};
use crate::report::{self, Header, Row, Section, kib, ms, rps};
use crate::server::{Server, prepare};
use crate::stats::{median, percentile};
use anyhow::{Context, Result, bail};
use flate2::Compression;
use flate2::write::GzEncoder;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Rows the console start section waits for (the console's credential page size).
const ROWS: usize = 100;
/// Credentials in the small database (sections 2, 3, 5, 6 and the small end of section 4).
const SMALL: u64 = 1_000;
/// Credentials of the memory section.
const MEMORY: u64 = 100_000;

pub fn run_all(args: RunArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(args))
}

fn want(args: &RunArgs, n: u8) -> bool {
    args.only.is_empty() || args.only.contains(&n)
}

async fn run(args: RunArgs) -> Result<()> {
    let started = Instant::now();
    let load_at_start = load_average();
    std::fs::create_dir_all(&args.out_dir)?;
    let out_dir = std::fs::canonicalize(&args.out_dir)?;
    let mut sections = Vec::new();

    // The baseline server, up for the whole run.
    let baseline_addr = free_addr()?;
    let mut baseline = Guard::spawn("baseline server", {
        let mut c = Command::new(std::env::current_exe()?);
        c.args(["baseline-server", "--listen", &baseline_addr.to_string()]);
        c
    })?;
    baseline.wait_for_port(baseline_addr)?;

    // The console is served from a copy of the build, with the static baseline page added.
    let console = out_dir.join("console");
    copy_dir(&args.dist, &console)?;

    println!("bench: preparing the small database ({SMALL} credentials)");
    let db = prepare(&args.server_bin, &out_dir.join("db-small"), SMALL)?;
    let small = Server::start(&args.server_bin, db, Some(&console))?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let small_idle_rss = small.process.rss_kib()?;
    let baseline_idle_rss = baseline.rss_kib()?;
    let static_page = write_static_page(&small, &console).await?;

    if want(&args, 1) {
        println!("bench: 1. console size");
        sections.push(timed(console_size(&args.dist, &static_page)).await?);
    }
    if want(&args, 2) {
        println!("bench: 2. console start");
        sections.push(timed(console_start(&args, &small)).await?);
    }
    // Section 4 starts on the small database before section 3 adds rows to it.
    let small_scaling = if want(&args, 4) {
        println!("bench: 4. scaling ({SMALL} credentials)");
        Some(list_latencies(&small).await?)
    } else {
        None
    };
    let mut baseline_loaded_rss = None;
    if want(&args, 3) {
        println!("bench: 3. API throughput and latency");
        let section = timed(throughput(&args, &small, baseline_addr)).await?;
        baseline_loaded_rss = Some(baseline.rss_kib()?);
        sections.push(section);
    }
    if want(&args, 5) {
        println!("bench: 5. SSH CA creation");
        sections.push(timed(ssh_cas(&small)).await?);
    }
    if want(&args, 6) {
        println!("bench: 6. agent restarts");
        sections.push(timed(agent_restarts(&args, &small)).await?);
    }
    drop(small);

    let mut memory_figures = None;
    if want(&args, 4) || want(&args, 7) {
        let t = Instant::now();
        let (section, memory) = scaling(&args, &out_dir, small_scaling).await?;
        if let Some(mut s) = section {
            s.seconds = t.elapsed().as_secs_f64();
            sections.push(s);
        }
        memory_figures = Some(memory);
    }
    if want(&args, 7)
        && let Some(m) = memory_figures
    {
        sections.push(memory_section(
            small_idle_rss,
            &m,
            baseline_idle_rss,
            baseline_loaded_rss,
        ));
    }
    drop(baseline);
    sections.sort_by_key(|s| s.number);

    let mut machine = machine();
    // The machine may be shared (other builds, other tests): the load says how quiet it was.
    machine.push((
        "load average (1, 5, 15 min) at start → end".into(),
        format!("{load_at_start} → {}", load_average()),
    ));
    let header = Header {
        date: now_utc(),
        machine,
        commands: if args.commands.is_empty() {
            vec![std::env::args().collect::<Vec<_>>().join(" ")]
        } else {
            args.commands.clone()
        },
        total_seconds: started.elapsed().as_secs_f64(),
        json_path: "target/bench/results.json".to_owned(),
    };
    let closing = closing_note(&args.report);
    report::write(
        &args.report,
        &out_dir.join("results.json"),
        &header,
        &sections,
        &closing,
    )?;
    println!(
        "bench: wrote {} and {} ({:.0} s)",
        args.report.display(),
        out_dir.join("results.json").display(),
        started.elapsed().as_secs_f64()
    );
    // The big scratch databases are not worth keeping.
    for dir in ["db-small", "db-100000", "db-1000000"] {
        let _ = std::fs::remove_dir_all(out_dir.join(dir));
    }
    Ok(())
}

/// Runs a section, filling in how long it took.
async fn timed(section: impl std::future::Future<Output = Result<Section>>) -> Result<Section> {
    let t = Instant::now();
    let mut s = section.await?;
    s.seconds = t.elapsed().as_secs_f64();
    Ok(s)
}

/// The hand-written closing note (improvements made) is kept across runs: everything after
/// the `<!-- closing -->` marker of the previous report is copied into the new one.
fn closing_note(report: &Path) -> String {
    std::fs::read_to_string(report)
        .ok()
        .and_then(|old| {
            old.find("<!-- closing -->")
                .map(|at| old[at..].trim_end().to_owned())
        })
        .unwrap_or_default()
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to)?;
    }
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

fn gzip_len(bytes: &[u8]) -> Result<u64> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::best());
    enc.write_all(bytes)?;
    Ok(enc.finish()?.len() as u64)
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The static baseline of sections 1 and 2: the same first 100 rows the console shows, as
/// plain HTML with the console's stylesheet, served by the same server from the console dir.
/// Also writes `bench-blank.html`, the page the browser opens first to reach the origin.
async fn write_static_page(server: &Server, console: &Path) -> Result<Vec<u8>> {
    let page = server
        .conn()
        .json(&server.get(&format!("/credentials?limit={ROWS}")))
        .await?;
    let rows = page["credentials"]
        .as_array()
        .context("no credentials in the list")?;
    let css = std::fs::read_dir(console)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".css"))
        .unwrap_or_default();
    let mut html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Credentials</title>\
         <link rel=\"stylesheet\" href=\"/{css}\"></head><body><main><h1>Credentials</h1>\
         <div class=\"table-wrap\"><table><thead><tr><th>ID</th><th>Description</th><th>ACL</th>\
         <th>Owner</th><th>Created</th></tr></thead><tbody>\n"
    );
    for c in rows {
        let s = |k: &str| html_escape(c[k].as_str().unwrap_or_default());
        let acl = c["acl"].as_array().map_or(0, Vec::len);
        html.push_str(&format!(
            "<tr><td><a class=\"mono\" href=\"/credentials/{id}\">{id}</a></td><td>{}</td><td>{acl} rule(s)</td><td class=\"mono\">{}</td><td>{}</td></tr>\n",
            s("description"),
            s("owner_id"),
            s("created_at"),
            id = s("id"),
        ));
    }
    html.push_str("</tbody></table></div></main></body></html>\n");
    std::fs::write(console.join("bench-static.html"), &html)?;
    std::fs::write(
        console.join("bench-blank.html"),
        "<!doctype html><title>blank</title>",
    )?;
    Ok(html.into_bytes())
}

/// 1. Console size.
async fn console_size(dist: &Path, static_page: &[u8]) -> Result<Section> {
    let mut s = Section::new(
        1,
        "Console size",
        "The release build of the console (`trunk build --release`: `wasm-release` profile, \
         wasm-opt `-Oz`), each file raw and gzip-compressed (flate2, level 9). Baseline: the \
         static HTML page of the same 100 credential rows used in section 2 (what a page \
         without any application costs).",
    );
    let (mut wasm, mut wasm_gz, mut js_gz, mut css_gz, mut total_gz, mut total) =
        (0, 0, 0, 0, 0, 0);
    for entry in std::fs::read_dir(dist)? {
        let path = entry?.path();
        if !path.is_file() {
            continue;
        }
        let bytes = std::fs::read(&path)?;
        let gz = gzip_len(&bytes)?;
        total += bytes.len() as u64;
        total_gz += gz;
        match path.extension().and_then(|e| e.to_str()) {
            Some("wasm") => {
                wasm += bytes.len() as u64;
                wasm_gz += gz;
            }
            Some("js") => js_gz += gz,
            Some("css") => css_gz += gz,
            _ => {}
        }
    }
    let page_gz = gzip_len(static_page)?;
    let page = static_page.len() as u64;
    let r = |a: u64, b: u64| Some(a as f64 / b as f64);
    let base = format!("{} (static page, gzip)", kib(page_gz));
    s.rows = vec![
        Row::new(
            "WASM, raw",
            kib(wasm),
            format!("{} (static page, raw)", kib(page)),
            r(wasm, page),
        ),
        Row::new(
            "WASM, gzip",
            kib(wasm_gz),
            base.clone(),
            r(wasm_gz, page_gz),
        ),
        Row::new("JS glue, gzip", kib(js_gz), base.clone(), r(js_gz, page_gz)),
        Row::new("CSS, gzip", kib(css_gz), base.clone(), r(css_gz, page_gz)),
        Row::new(
            "total (every file of dist/), gzip",
            kib(total_gz),
            base,
            r(total_gz, page_gz),
        ),
        Row::new(
            "total, raw",
            kib(total),
            format!("{} (static page, raw)", kib(page)),
            r(total, page),
        ),
    ];
    s.raw = serde_json::json!({
        "wasm_bytes": wasm, "wasm_gzip": wasm_gz, "js_gzip": js_gz, "css_gzip": css_gz,
        "total_gzip": total_gz, "total_bytes": total,
        "static_page_bytes": page, "static_page_gzip": page_gz,
    });
    Ok(s)
}

/// 2. Console start, in headless Chromium, cold profile each run.
async fn console_start(args: &RunArgs, server: &Server) -> Result<Section> {
    let mut s = Section::new(
        2,
        "Console start",
        "Headless Chromium (fresh profile, so a cold cache, every run), signed in through \
         `sessionStorage`, navigating to `/credentials`. Measured by the page: a \
         `MutationObserver` installed before any page script (DevTools \
         `Page.addScriptToEvaluateOnNewDocument`) puts a `performance.mark` when the document \
         holds 100 rows in `table tbody`; the figure is the mark's `startTime` (ms since the \
         navigation started). Baseline: the static HTML page of the same 100 rows served by \
         the same server, measured by the same observer. Runs alternate between the two.",
    );
    let base = format!("http://{}", server.addr);
    let auth = serde_json::json!({"base_url": "/api", "api_key": server.db.api_key}).to_string();
    let browser = Browser::start()?;
    let (mut console_ms, mut static_ms) = (Vec::new(), Vec::new());
    for run in 0..args.browser_runs {
        for (url, out) in [
            (format!("{base}/credentials"), &mut console_ms),
            (format!("{base}/bench-static.html"), &mut static_ms),
        ] {
            let session = browser.session().await?;
            session
                .client
                .goto(&format!("{base}/bench-blank.html"))
                .await?;
            session
                .client
                .execute(
                    "sessionStorage.setItem('tunnel-console.auth', arguments[0]);",
                    vec![serde_json::Value::String(auth.clone())],
                )
                .await?;
            session.mark_rows_on_new_documents(ROWS).await?;
            let measured = session.time_to_rows(&url).await;
            session.close().await?;
            let ms = measured?;
            println!("    run {}: {url}: {ms:.0} ms", run + 1);
            out.push(ms);
        }
    }
    let (c, b) = (median(&console_ms), median(&static_ms));
    s.rows = vec![
        Row::new(
            format!(
                "navigation → 100 rows shown, median of {}",
                console_ms.len()
            ),
            ms(c),
            format!("{} (static page)", ms(b)),
            Some(c / b),
        ),
        Row::new(
            "slowest run",
            ms(percentile(&console_ms, 100.0)),
            format!("{} (static page)", ms(percentile(&static_ms, 100.0))),
            Some(percentile(&console_ms, 100.0) / percentile(&static_ms, 100.0)),
        ),
    ];
    s.raw = serde_json::json!({"console_ms": console_ms, "static_ms": static_ms});
    Ok(s)
}

/// 3. API throughput and latency under load, against the bare axum handler.
async fn throughput(
    args: &RunArgs,
    server: &Server,
    baseline: std::net::SocketAddr,
) -> Result<Section> {
    let mut s = Section::new(
        3,
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

/// First page, middle page and last full page latencies (ms, sequential, one connection).
#[derive(Debug, Clone)]
pub struct ListLatencies {
    pub first: Vec<f64>,
    pub middle: Vec<f64>,
    pub deep: Vec<f64>,
}

const LIST_SAMPLES: usize = 50;

async fn list_latencies(server: &Server) -> Result<ListLatencies> {
    let first = sequential(
        server.addr,
        &server.get("/credentials?limit=100"),
        5,
        LIST_SAMPLES,
    )
    .await?;
    let middle = sequential(
        server.addr,
        &server.get(&format!(
            "/credentials?limit=100&before_id={}",
            server.db.middle_id
        )),
        5,
        LIST_SAMPLES,
    )
    .await?;
    let deep = sequential(
        server.addr,
        &server.get(&format!(
            "/credentials?limit=100&before_id={}",
            server.db.deep_id
        )),
        5,
        LIST_SAMPLES,
    )
    .await?;
    Ok(ListLatencies {
        first,
        middle,
        deep,
    })
}

/// What section 7 needs from the 100 k server.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    pub idle_kib: u64,
    pub listed_kib: u64,
    pub pages: u64,
    pub listing_seconds: f64,
}

/// 4. Scaling (and the 100 k server's memory for section 7).
async fn scaling(
    args: &RunArgs,
    out_dir: &Path,
    small: Option<ListLatencies>,
) -> Result<(Option<Section>, Memory)> {
    let mut s = Section::new(
        4,
        "Scaling with the number of credentials",
        "`GET /api/credentials?limit=100` latency with the account holding 1 k, 100 k and 1 M \
         credentials (bulk-loaded by `tunnel-server dev seed-credentials`), 50 sequential \
         requests on one connection after 5 warm-up ones: the first page, a middle page \
         (`before_id` = the middle credential) and the last full page (`before_id` = the \
         101st oldest). Baseline: the same page with 1 k credentials.",
    );
    let mut memory = Memory::default();
    let mut sizes = vec![MEMORY];
    if args.max_credentials > MEMORY && want(args, 4) {
        sizes.push(args.max_credentials);
    }
    let mut raw = serde_json::Map::new();
    if let Some(small) = &small {
        raw.insert(SMALL.to_string(), latencies_json(small));
    }
    for count in sizes {
        println!("bench: 4/7. preparing a database of {count} credentials");
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
            memory.idle_kib = server.process.rss_kib()?;
        }
        if want(args, 4) {
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
            memory.listed_kib = server.process.rss_kib()?;
        }
    }
    s.raw = raw.into();
    Ok((want(args, 4).then_some(s), memory))
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

/// 7. Server memory.
fn memory_section(
    small_idle: u64,
    m: &Memory,
    baseline_idle: u64,
    baseline_loaded: Option<u64>,
) -> Section {
    let mut s = Section::new(
        7,
        "Server memory",
        "Resident set size (`VmRSS` of `/proc/<pid>/status`) of the release `tunnel-server`: \
         idle one second after start, with 1 k and with 100 k credentials, then after listing \
         all 100 k credentials page by page (100 per page, following `next_page_uri`). \
         Baseline: the bare axum server of section 3, idle and after its load run.",
    );
    let k = |v: u64| kib(v * 1024);
    let r = |a: u64, b: u64| Some(a as f64 / b as f64);
    s.rows.push(Row::new(
        "idle, 1 k credentials",
        k(small_idle),
        format!("{} (bare axum, idle)", k(baseline_idle)),
        r(small_idle, baseline_idle),
    ));
    s.rows.push(Row::new(
        "idle, 100 k credentials",
        k(m.idle_kib),
        format!("{} (bare axum, idle)", k(baseline_idle)),
        r(m.idle_kib, baseline_idle),
    ));
    let loaded = baseline_loaded.unwrap_or(baseline_idle);
    s.rows.push(Row::new(
        "100 k credentials, after a full listing",
        k(m.listed_kib),
        format!(
            "{} (bare axum, after {})",
            k(loaded),
            if baseline_loaded.is_some() {
                "its load run"
            } else {
                "nothing: section 3 not run"
            }
        ),
        r(m.listed_kib, loaded),
    ));
    s.notes.push(format!(
        "The full listing took {} pages in {:.1} s. (Measured during section 4, on its 100 k \
         server; the section time below is the listing's.)",
        m.pages, m.listing_seconds
    ));
    s.seconds = m.listing_seconds;
    s.raw = serde_json::json!({
        "idle_1k_kib": small_idle, "idle_100k_kib": m.idle_kib, "after_listing_100k_kib": m.listed_kib,
        "pages": m.pages, "listing_seconds": m.listing_seconds,
        "baseline_idle_kib": baseline_idle, "baseline_after_load_kib": baseline_loaded,
    });
    s
}

/// 5. SSH CA creation per key type.
async fn ssh_cas(server: &Server) -> Result<Section> {
    let mut s = Section::new(
        5,
        "SSH CA creation",
        "`POST /api/ssh_certificate_authorities` per key type, sequential, one connection \
         (the server generates the key, seals the private key and stores it); median of the \
         runs shown. Baseline: `POST /api/credentials` on the same connection (the cost of a \
         create request without key generation), median of 9.",
    );
    let mut conn = server.conn();
    let cred = server.post("/credentials", r#"{"description":"bench baseline"}"#);
    let mut base = Vec::new();
    for i in 0..11 {
        let t = Instant::now();
        conn.json(&cred).await?;
        if i >= 2 {
            base.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let b = median(&base);
    let cases: [(&str, &str, usize); 6] = [
        ("ed25519", r#"{"private_key_type":"ed25519"}"#, 9),
        (
            "ecdsa p256",
            r#"{"private_key_type":"ecdsa","elliptic_curve":"p256"}"#,
            9,
        ),
        (
            "ecdsa p384",
            r#"{"private_key_type":"ecdsa","elliptic_curve":"p384"}"#,
            9,
        ),
        (
            "ecdsa p521",
            r#"{"private_key_type":"ecdsa","elliptic_curve":"p521"}"#,
            9,
        ),
        (
            "rsa 2048",
            r#"{"private_key_type":"rsa","key_size":2048}"#,
            5,
        ),
        (
            "rsa 4096",
            r#"{"private_key_type":"rsa","key_size":4096}"#,
            3,
        ),
    ];
    let mut raw = serde_json::Map::new();
    raw.insert("baseline_credential_ms".into(), base.clone().into());
    for (name, body, runs) in cases {
        let req = server.post("/ssh_certificate_authorities", body);
        let mut times = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            conn.json(&req).await?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        let m = median(&times);
        println!("    {name}: median {m:.1} ms of {runs}");
        s.rows.push(Row::new(
            format!(
                "{name}, median of {runs} (slowest {})",
                ms(percentile(&times, 100.0))
            ),
            ms(m),
            format!("{} (POST /credentials)", ms(b)),
            Some(m / b),
        ));
        raw.insert(name.into(), times.into());
    }
    s.raw = raw.into();
    Ok(s)
}

/// 6. Agent restart latency.
async fn agent_restarts(args: &RunArgs, server: &Server) -> Result<Section> {
    let mut s = Section::new(
        6,
        "Agent command latency",
        "The release `tunnel-agent` connected to the release server over loopback. Each restart: \
         `POST /api/tunnel_sessions/{id}/restart` (answered once the agent acknowledged), the \
         agent re-executes itself and opens a new session; the figure runs from sending the \
         POST until `GET /api/tunnel_sessions` (polled every 2 ms) lists the new session id. \
         Baseline: a cold start, from spawning the agent process until its session is listed \
         (median of 5).",
    );
    let mut conn = server.conn();
    let created = conn
        .json(&server.post("/credentials", r#"{"description":"bench agent"}"#))
        .await?;
    let token = created["token"].as_str().context("no token")?.to_owned();
    let agent = |token: &str| -> Result<Guard> {
        let mut c = Command::new(&args.agent_bin);
        c.args(["--server", &format!("http://{}", server.addr)])
            .env("TUNNEL_AUTHTOKEN", token)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        Guard::spawn("tunnel-agent", c)
    };

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

/// Polls the session list (every 2 ms, at most 30 s) until `done` holds; returns the ids.
async fn wait_sessions(
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

fn now_utc() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// The first three fields of `/proc/loadavg`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Cores, memory, CPU model, kernel, browser: what the figures depend on.
fn machine() -> Vec<(String, String)> {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown".into());
    let meminfo = read("/proc/meminfo");
    let mem_kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let version = |program: &str| {
        Command::new(program)
            .arg("--version")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_else(|| "unknown".into())
    };
    vec![
        ("cores (available to the run)".into(), cores.to_string()),
        (
            "memory".into(),
            format!("{:.1} GiB", mem_kib as f64 / 1024.0 / 1024.0),
        ),
        ("CPU".into(), model),
        (
            "kernel".into(),
            read("/proc/sys/kernel/osrelease").trim().to_owned(),
        ),
        ("rustc".into(), version("rustc")),
        ("browser".into(), version(crate::browser::CHROMIUM)),
    ]
}
