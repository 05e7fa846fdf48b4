//! `--metrics-listen`: the server's own gauges for the operator's monitoring, in the Prometheus
//! text format at `GET /metrics`, on a listener of its own (never the public one, and without
//! authentication, like every scrape target: bind it where only the monitoring reaches).
//!
//! The gauges are read when scraped: tasks alive on the runtime, tunnel sessions held by this
//! node, the database transactions committed and the writes they held (their ratio is how many
//! writes a commit carries), whether the row cache is on (a node alone) and the rows it keeps,
//! and the process's resident memory and open file descriptors from
//! `/proc/self` (Linux; elsewhere those two are left out). `cargo xtask soak` reads them to see whether anything grows.

use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

/// The content type of what `prometheus_client` writes: OpenMetrics text (a counter's `TYPE`
/// line names the family, its sample ends in `_total`, the body ends with `# EOF`), which a
/// strict parser of Prometheus's older 0.0.4 text format would misread under that format's type.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The metrics listener's router: `GET /metrics` only.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .with_state(state)
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], render(&state))
}

/// Every gauge, as the text format.
pub fn render(state: &AppState) -> String {
    let mut registry = Registry::default();
    let gauge = |v: usize| ConstGauge::new(i64::try_from(v).unwrap_or(i64::MAX));
    let runtime = tokio::runtime::Handle::current().metrics();
    registry.register(
        "tunnel_runtime_tasks_alive",
        "Tasks alive on the server's async runtime",
        gauge(runtime.num_alive_tasks()),
    );
    registry.register(
        "tunnel_runtime_workers",
        "Worker threads of the server's async runtime",
        gauge(runtime.num_workers()),
    );
    registry.register(
        "tunnel_sessions_held",
        "Tunnel sessions whose agent is connected to this node",
        gauge(state.registry.len()),
    );
    let (commits, writes) = state.store.commits();
    registry.register(
        "tunnel_store_commits",
        "Database transactions committed by this server (writes queued together share one)",
        ConstCounter::new(commits),
    );
    registry.register(
        "tunnel_store_writes",
        "Writes committed by this server",
        ConstCounter::new(writes),
    );
    let (keeping, kept) = state.store.row_cache();
    registry.register(
        "tunnel_store_row_cache_on",
        "1 while this server keeps the rows it reads (it is the only node), else 0",
        gauge(usize::from(keeping)),
    );
    registry.register(
        "tunnel_store_rows_kept",
        "Rows this server keeps for the GET of one resource",
        gauge(kept),
    );
    if let Some(bytes) = resident_bytes() {
        registry.register(
            "process_resident_memory_bytes",
            "Resident memory of the server process",
            gauge(bytes),
        );
    }
    if let Some(fds) = open_fds() {
        registry.register(
            "process_open_fds",
            "Open file descriptors of the server process",
            gauge(fds),
        );
    }
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = encode(&mut text, &registry);
    text
}

/// `VmRSS` of `/proc/self/status`, in bytes.
fn resident_bytes() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// The entries of `/proc/self/fd` (the one the listing itself opens included).
fn open_fds() -> Option<usize> {
    Some(std::fs::read_dir("/proc/self/fd").ok()?.count())
}
