//! Console start: from navigation to 100 credential rows shown, in headless Chromium with a
//! cold profile each run, then again in the same profile (a second visit: the files from the
//! browser's cache, the WASM compiled again), against the static page of the same rows (see
//! `crate::browser`).

use super::number;
use crate::RunArgs;
use crate::browser::{Browser, Visit};
use crate::console::ROWS;
use crate::report::{Row, Section, ms};
use crate::server::Server;
use crate::stats::{median, percentile};
use anyhow::Result;

pub const NAME: &str = "console_start";

/// Alternates console and static page, `--browser-runs` times each.
pub async fn measure(args: &RunArgs, server: &Server) -> Result<Section> {
    let mut s = Section::new(
        number(NAME),
        "Console start",
        "Headless Chromium (fresh profile, so a cold cache, every run), signed in through \
         `sessionStorage`, navigating to `/credentials`. Measured by the page: a \
         `MutationObserver` installed before any page script (DevTools \
         `Page.addScriptToEvaluateOnNewDocument`) puts a `performance.mark` when the document \
         holds 100 rows in `table tbody`; the figure is the mark's `startTime` (ms since the \
         navigation started). Then a second visit in the same profile, after a blank page and \
         a pause of 2 s: the console's files come from the browser's cache (hashed names are \
         `immutable`, `index.html` is revalidated), and the WASM is compiled again, each \
         function when first called (Chromium's code cache keeps only the functions V8 has \
         optimised, and a DevTools trace of the console showed none kept after visits like \
         these: every visit compiled about 1 600 functions). Baseline: the static \
         HTML page of the same 100 rows served by the same server, measured by the same \
         observer, first and second visit alike. Runs alternate between the two. After each \
         console visit the page's Navigation and Resource Timing say where its time went (the \
         note under the table).",
    );
    let base = format!("http://{}", server.addr);
    let auth = serde_json::json!({"base_url": "/api", "api_key": server.db.api_key}).to_string();
    let browser = Browser::start()?;
    let (mut console_ms, mut static_ms) = (Vec::new(), Vec::new());
    let (mut console_again_ms, mut static_again_ms) = (Vec::new(), Vec::new());
    // The console's visits, first and second, for where their time goes.
    let (mut console_visits, mut console_again_visits) = (Vec::new(), Vec::new());
    for run in 0..args.browser_runs {
        for (url, out, again, is_console) in [
            (
                format!("{base}/credentials"),
                &mut console_ms,
                &mut console_again_ms,
                true,
            ),
            (
                format!("{base}/bench-static.html"),
                &mut static_ms,
                &mut static_again_ms,
                false,
            ),
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
            let measured = second_visit(&session, &base, &url).await;
            session.close().await?;
            let (first, second) = measured?;
            if is_console {
                console_visits.push(first);
                console_again_visits.push(second);
            }
            let (first, second) = (first.rows, second.rows);
            println!(
                "    run {}: {url}: {first:.0} ms, second visit {second:.0} ms",
                run + 1
            );
            out.push(first);
            again.push(second);
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
        Row::new(
            format!(
                "second visit: navigation → 100 rows shown, median of {}",
                console_again_ms.len()
            ),
            ms(median(&console_again_ms)),
            format!(
                "{} (static page, second visit)",
                ms(median(&static_again_ms))
            ),
            Some(median(&console_again_ms) / median(&static_again_ms)),
        ),
    ];
    let (phases, phases_again) = (phases(&console_visits), phases(&console_again_visits));
    s.notes.push(format!(
        "Where the console's time goes, medians of each phase in ms (from the page's Navigation \
         and Resource Timing; each phase ends where the next begins): {}. Second visit: {}.",
        describe(&phases),
        describe(&phases_again)
    ));
    s.raw = serde_json::json!({
        "console_ms": console_ms, "static_ms": static_ms,
        "console_second_visit_ms": console_again_ms, "static_second_visit_ms": static_again_ms,
        "console_phases_ms": by_name(&phases),
        "console_second_visit_phases_ms": by_name(&phases_again),
    });
    Ok(s)
}

/// The medians of each phase of `visits`: the document, the code (JS and WASM), starting up to
/// asking for the list, the list request, and building the rows. A phase whose ends a visit did
/// not record (say, no list request seen) is left out of that visit.
fn phases(visits: &[Visit]) -> Vec<(&'static str, f64)> {
    let phase = |f: &dyn Fn(&Visit) -> Option<f64>| {
        let values: Vec<f64> = visits.iter().filter_map(f).collect();
        if values.is_empty() {
            f64::NAN
        } else {
            median(&values)
        }
    };
    vec![
        ("document", phase(&|v| Some(v.document))),
        ("JS and WASM", phase(&|v| Some(v.code? - v.document))),
        (
            "start until the list is asked for",
            phase(&|v| Some(v.list_asked? - v.code?)),
        ),
        (
            "list request",
            phase(&|v| Some(v.list_received? - v.list_asked?)),
        ),
        (
            "rows built and shown",
            phase(&|v| Some(v.rows - v.list_received?)),
        ),
    ]
}

/// The phases as a JSON object keyed by name, for the raw results.
fn by_name(phases: &[(&str, f64)]) -> serde_json::Value {
    phases
        .iter()
        .map(|&(name, v)| (name.to_owned(), serde_json::json!(v)))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

fn describe(phases: &[(&str, f64)]) -> String {
    phases
        .iter()
        .map(|(name, v)| format!("{name} {v:.1}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first visit of `url` in a fresh profile, then a second one after a blank page: the ms
/// to the rows and the phases of each.
async fn second_visit(
    session: &crate::browser::Session,
    base: &str,
    url: &str,
) -> Result<(Visit, Visit)> {
    let first = session.time_to_rows(url).await?;
    session
        .client
        .goto(&format!("{base}/bench-blank.html"))
        .await?;
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let second = session.time_to_rows(url).await?;
    Ok((first, second))
}
