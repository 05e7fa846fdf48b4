//! Server memory: resident set size of the release server idle with 1 k and 100 k credentials
//! and after listing all 100 k, against the bare axum server idle and after its load run.

use super::scaling::Memory;
use super::{number, scaling, throughput};
use crate::report::{Row, Section, kib};

pub const NAME: &str = "memory";

/// The figures gathered by the run (idle RSS of the small and baseline servers, the
/// baseline's after its load, the 100 k server's from the scaling section).
pub fn section(
    small_idle: u64,
    m: &Memory,
    baseline_idle: u64,
    baseline_loaded: Option<u64>,
) -> Section {
    let method = format!(
        "Resident set size (`VmRSS` of `/proc/<pid>/status`) of the release `tunnel-server`: \
         idle one second after start, with 1 k and with 100 k credentials, then after listing \
         all 100 k credentials page by page (100 per page, following `next_page_uri`). \
         Baseline: the bare axum server of section {}, idle and after its load run.",
        number(throughput::NAME)
    );
    let mut s = Section::new(number(NAME), "Server memory", &method);
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
                "its load run".to_owned()
            } else {
                format!("nothing: section {} not run", number(throughput::NAME))
            }
        ),
        r(m.listed_kib, loaded),
    ));
    s.notes.push(format!(
        "The full listing took {} pages in {:.1} s. (Measured during section {}, on its 100 k \
         server; the section time below is the listing's.)",
        m.pages,
        m.listing_seconds,
        number(scaling::NAME)
    ));
    s.seconds = m.listing_seconds;
    s.raw = serde_json::json!({
        "idle_1k_kib": small_idle, "idle_100k_kib": m.idle_kib, "after_listing_100k_kib": m.listed_kib,
        "pages": m.pages, "listing_seconds": m.listing_seconds,
        "baseline_idle_kib": baseline_idle, "baseline_after_load_kib": baseline_loaded,
    });
    s
}
