//! Generated requests against the API: schemathesis (PyPI, `tools::ensure_schemathesis`) reads
//! the server's own OpenAPI document and sends requests made from it to a real server on a
//! loopback port, on a fresh SQLite database with an admin key made for the run. Every check
//! runs (a 5xx, a status or header or body the document does not give, a request the document
//! forbids that is accepted, a missing header or bad key that is not refused, a deleted resource
//! still answering, …), through the coverage, fuzzing and stateful phases, except a response-time
//! limit (see [`CHECKS`]) and `positive_data_acceptance`, which expects every request the schemas allow to succeed. The
//! API's rules go beyond what JSON Schema can say (the ACL rule grammar, host names and ports,
//! label syntax, whether a referenced resource exists, a webhook's public address, a body id
//! equal to the path's), so such requests are rightly refused with 400 (docs/testing.md).
//!
//! The run's own key is kept from being revoked by a generated delete (a schemathesis hook,
//! `xtask/schemathesis/hooks.py`).
//!
//! `cargo xtask test` runs it with a fixed seed and a fixed budget, failing unless at least
//! [`MIN_REQUESTS`] requests were generated, on the debug server its end-to-end tests use: the
//! budget is a number of cases, not a time, so a slower server only lengthens the step (131 s
//! against 102–158 s on the release server, the same 6 115 requests), while a release build of
//! its own cost CI about six minutes; the debug build's overflow checks and debug assertions are
//! on as well. `cargo xtask fuzz-api --minutes N` runs it for N minutes with a fresh seed on the
//! release server ([`release_server`]), where speed buys more requests.

use crate::run::random_hex;
use crate::shell::{cmd, done, exec, root, step, target_dir};
use crate::tools::ensure_schemathesis;
use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tunnel_testkit::process::{ProcessGuard, free_addr, serve_command};

/// The fewest generated requests a `cargo xtask test` run accepts.
pub const MIN_REQUESTS: u64 = 5_000;

/// Schemathesis's checks, named one by one: every check it has but `positive_data_acceptance`
/// (see the module) and its response-time limit, which `all` would add: speed is measured by the
/// benchmarks, never asserted as a wall-clock limit in a test (an RSA 4096 SSH CA takes seconds,
/// more on a busy machine).
const CHECKS: [&str; 13] = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "missing_required_header",
    "unsupported_method",
    "allow_header_conformance",
    "use_after_free",
    "ensure_resource_availability",
    "ignored_auth",
    "object_level_authorization",
];

/// How long a run lasts.
pub enum Budget {
    /// `cargo xtask test`: this many cases per operation, seed 1 (reproducible).
    Test,
    /// `cargo xtask fuzz-api`: as many as fit in the minutes, a fresh seed.
    Minutes(f64),
}

/// Starts `binary` on `addr` with its data in `dir`, every rate limit off (the run sends
/// thousands of requests, some with wrong keys, from one address), and waits until it listens.
fn start(binary: &Path, dir: &Path, addr: SocketAddr, key: &str) -> Result<ProcessGuard> {
    let database = format!("sqlite://{}", dir.join("api.sqlite").display());
    let mut command = serve_command(binary, addr, &database);
    command
        .args(["--rate-limit-key", "off", "--rate-limit-ip", "off"])
        .args(["--rate-limit-auth-failures", "off"])
        .env("TUNNEL_BOOTSTRAP_API_KEY", key)
        .stderr(std::fs::File::create(dir.join("server.log"))?);
    let mut server = ProcessGuard::spawn("tunnel-server", command)?;
    server.wait_for_port(addr, Duration::from_secs(60))?;
    Ok(server)
}

/// The number in schemathesis's summary line `N generated, …`.
fn generated(line: &str) -> Option<u64> {
    let (count, _) = line.trim().split_once(" generated")?;
    count.trim().parse().ok()
}

/// Runs schemathesis against `binary` (a `tunnel-server`); returns the requests generated.
pub fn run(binary: &Path, budget: Budget) -> Result<u64> {
    let st = ensure_schemathesis()?;
    let timer = step("API contract: generated requests (schemathesis)");
    let work = target_dir("schemathesis");
    std::fs::create_dir_all(&work)?;
    let dir = tempfile::tempdir_in(&work)?;
    let addr = free_addr()?;
    // A fresh admin key for the run: random, so nothing fixed ever unlocks a server.
    let key = format!("tk_{}", random_hex(20)?);
    let _server = start(binary, dir.path(), addr, &key)?;

    let schema = format!("http://{addr}/api/openapi.json");
    let auth = format!("Authorization: Bearer {key}");
    let seed = match budget {
        Budget::Test => "1".to_owned(),
        Budget::Minutes(_) => u32::from_str_radix(&random_hex(4)?, 16)?.to_string(),
    };
    let mut args: Vec<String> = ["run", &schema, "-H", &auth, "-H", "Service-Version: 2"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(
        [
            "--checks",
            &CHECKS.join(","),
            "--phases",
            "coverage,fuzzing,stateful",
            // One worker: Hypothesis parses lambda sources with `ast` from each worker thread,
            // and the machine's CPython (3.11.7) failed that once when two threads parsed at
            // once ("AST constructor recursion depth mismatch"), a run error, not a finding.
            "--workers",
            "1",
            "--wait-for-schema",
            "30",
            // An RSA 4096 SSH CA takes seconds to generate, more on a busy machine.
            "--request-timeout",
            "120",
            "--seed",
            &seed,
            "--report",
            "junit",
        ]
        .map(str::to_owned),
    );
    match budget {
        Budget::Test => args.extend(["--max-examples", "60"].map(str::to_owned)),
        Budget::Minutes(minutes) => {
            let seconds = ((minutes * 60.0).round() as u64).max(1).to_string();
            args.extend(["--max-examples", "100000", "--max-time", &seconds].map(str::to_owned));
        }
    }
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut command = cmd(&st.to_string_lossy(), &arg_refs);
    // Its `.hypothesis` database and reports go under target/, not into the checkout.
    command.current_dir(dir.path());
    command.env("NO_COLOR", "1");
    // Keeps the run's own key from being revoked by a generated delete (see the hooks file).
    command
        .env(
            "SCHEMATHESIS_HOOKS",
            root().join("xtask/schemathesis/hooks.py"),
        )
        .env("TUNNEL_FUZZ_BASE_URL", format!("http://{addr}/api"))
        .env("TUNNEL_FUZZ_API_KEY", &key);
    println!("    schemathesis against {schema} (seed {seed})");
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot start schemathesis")?;
    let mut count = None;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line?;
            count = count.or(generated(&line));
            println!("{line}");
        }
    }
    let _ = std::io::stdout().flush();
    let status = child.wait()?;
    if !status.success() {
        bail!(
            "schemathesis found problems ({status}); the server's log: {}",
            dir.keep().join("server.log").display()
        );
    }
    let count = count.context("schemathesis printed no count of generated requests")?;
    if matches!(budget, Budget::Test) && count < MIN_REQUESTS {
        bail!("schemathesis generated {count} requests; at least {MIN_REQUESTS} are wanted");
    }
    println!("    {count} generated requests, no finding");
    done(timer);
    Ok(count)
}

/// Builds the release server, the one `cargo xtask fuzz-api` sends its requests to (the server
/// as it is deployed; in a run bounded by time, the debug build's slower answers would mean
/// fewer requests); its path.
pub fn release_server() -> Result<std::path::PathBuf> {
    let timer = step("release build: tunnel-server (for the generated requests)");
    exec(cmd("cargo", &["build", "--release", "-p", "tunnel-server"]))?;
    done(timer);
    Ok(target_dir("release").join("tunnel-server"))
}

/// `cargo xtask fuzz-api --minutes N`: the release server, N minutes.
pub fn fuzz(minutes: f64) -> Result<()> {
    run(&release_server()?, Budget::Minutes(minutes))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::generated;

    #[test]
    fn the_summary_count_is_read() {
        assert_eq!(
            generated("  5328 generated, 5328 passed, 74 skipped"),
            Some(5328)
        );
        assert_eq!(generated("Test cases:"), None);
    }
}
