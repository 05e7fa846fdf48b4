//! `cargo xtask test`: the project's one test command (CI runs it through `.ci/run`).
//!
//! Steps, each printed with its duration, stopping at the first failure: tools (PostgreSQL's
//! server among them), `cargo fmt --check`, clippy (native workspace, and the WASM crates for
//! wasm32), the release console build, the native tests of the workspace (end-to-end ones and
//! `tunnel-testkit` included: every step names the workspace, not a list of crates; they build
//! the server and agent binaries the end-to-end tests start), generated requests against the
//! debug server the end-to-end tests ran (`fuzz_api`, schemathesis), the contract suites again
//! on a real PostgreSQL (one cluster started from Debian's programs for the step, named to the
//! tests by `TUNNEL_TEST_POSTGRES`, stopped afterwards, also when a suite fails), and the
//! browser tests of the WASM crates in headless Chromium. The end-to-end tests get npm
//! axe-core's `axe.min.js` in `TUNNEL_AXE_CORE`. The testing layers: `docs/testing.md`. `cargo
//! xtask postgres` ([`hold_cluster`]) starts the PostgreSQL pass's cluster alone, for running a
//! suite on it by hand.

use crate::shell::TestCount;
use crate::shell::{cmd, done, exec, exec_tests, output, step, target_dir};
use crate::tools::{
    AXE_CORE_ENV, CHROMEDRIVER, ensure_axe_core, ensure_browser, ensure_build_tools,
    ensure_postgres,
};
use anyhow::{Context, Result, bail};
use tunnel_testkit::postgres::{Cluster, TEST_POSTGRES_ENV};

/// The test targets whose support code reads `TUNNEL_TEST_POSTGRES`, run a second time on
/// PostgreSQL: the server's API and webhook suites (in process), the agent's tests (the server
/// application on a loopback port), and the end-to-end flows (the real server binary), each
/// package's by name or all of its but some.
const POSTGRES_SUITES: [(&str, Targets); 3] = [
    ("tunnel-server", Targets::Only(&["api", "webhooks"])),
    (
        "tunnel-agent",
        Targets::Only(&[
            "server_channel",
            "agent_binary",
            "agent_reconnect",
            "agent_failover",
            "agent_tls",
            "session_update_target",
        ]),
    ),
    // The accessibility test looks at the console, whatever database the server has: it runs
    // once, in the SQLite pass, and is left out here to spare CI its minutes.
    ("tunnel-e2e", Targets::AllBut(&["accessibility"])),
];

/// Which of a package's test targets (`tests/*.rs`, `tests/*/main.rs`) a suite runs.
enum Targets {
    Only(&'static [&'static str]),
    /// Every one but these, so a new end-to-end flow joins the pass without being listed.
    AllBut(&'static [&'static str]),
}

/// The crates whose tests also run in the browser.
const WASM_CRATES: [&str; 2] = ["tunnel-core", "tunnel-web"];

pub fn run() -> Result<()> {
    ensure_build_tools()?;
    ensure_browser()?;
    let axe = ensure_axe_core()?;
    ensure_postgres()?;

    let timer = step("cargo fmt --check");
    exec(cmd("cargo", &["fmt", "--all", "--", "--check"]))?;
    done(timer);

    let timer = step("clippy (native, whole workspace)");
    exec(cmd(
        "cargo",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    ))?;
    done(timer);

    let timer = step("clippy (wasm32: tunnel-core, tunnel-web)");
    let mut args = vec![
        "clippy",
        "--target",
        "wasm32-unknown-unknown",
        "--all-targets",
    ];
    for krate in WASM_CRATES {
        args.extend(["-p", krate]);
    }
    args.extend(["--", "-D", "warnings"]);
    exec(cmd("cargo", &args))?;
    done(timer);

    let timer = step("console release build (trunk)");
    crate::run::build_console()?;
    done(timer);

    // Builds, among the rest, `target/debug/tunnel-server` and `tunnel-agent`, which the
    // agent's and the end-to-end tests start as real processes: cargo builds a package's
    // binaries for its integration tests, and builds everything before it runs a test.
    let timer = step("native tests (workspace)");
    let mut tests = cmd("cargo", &["test", "--workspace", "--all-targets"]);
    tests.env(AXE_CORE_ENV, &axe);
    let mut count = exec_tests(tests)?;
    done(timer);

    // Its own steps (timed inside), a fixed budget, on the debug server the steps above built
    // (`crate::fuzz_api::run` says why not the release one).
    let generated = crate::fuzz_api::run(
        &target_dir("debug").join("tunnel-server"),
        crate::fuzz_api::Budget::Test,
    )?;
    println!("    (schemathesis: {generated} generated requests)");

    let timer = step("native tests on PostgreSQL (the contract suites again)");
    count.add(postgres_pass()?);
    done(timer);

    let timer = step("browser tests (wasm-bindgen-test in headless Chromium)");
    let mut args = vec!["test", "--target", "wasm32-unknown-unknown"];
    for krate in WASM_CRATES {
        args.extend(["-p", krate]);
    }
    let mut browser = cmd("cargo", &args);
    browser
        .env(
            "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER",
            "wasm-bindgen-test-runner",
        )
        .env("CHROMEDRIVER", CHROMEDRIVER)
        .env("WASM_BINDGEN_TEST_TIMEOUT", "120");
    count.add(exec_tests(browser)?);
    done(timer);

    println!("\nxtask test: all steps passed");
    // One closing line for the whole run (cargo's last line is often an empty doc-test run).
    println!("total: {} passed, {} failed", count.passed, count.failed);
    Ok(())
}

/// Starts one throwaway PostgreSQL cluster and runs [`POSTGRES_SUITES`] against it, every test
/// on a fresh database of its own (`tunnel_testkit::postgres::test_database`). The cluster is a
/// guard: it is stopped and deleted when this returns, also when a suite fails.
///
/// One `cargo test --workspace` names every target with `--test`: selecting the workspace
/// resolves the dependencies' features as the native tests step did, so nothing is built
/// again. A `-p` per suite resolved them for that package alone and rebuilt about 250 crates
/// (three minutes of CI).
fn postgres_pass() -> Result<TestCount> {
    let targets = postgres_targets()?;
    let cluster = Cluster::start().context("starting the PostgreSQL cluster of the tests")?;
    println!(
        "    PostgreSQL {} on 127.0.0.1:{} ({TEST_POSTGRES_ENV} set for the suites below)",
        cluster.binaries().version,
        cluster.port()
    );
    let mut args = vec!["test", "--workspace"];
    for target in &targets {
        args.extend(["--test", target.as_str()]);
    }
    let mut command = cmd("cargo", &args);
    command.env(TEST_POSTGRES_ENV, cluster.admin_url());
    let count = exec_tests(command)?;
    cluster.stop()?;
    Ok(count)
}

/// The test targets of [`POSTGRES_SUITES`], from `cargo metadata`. Target names are unique in
/// the workspace (checked here), so a `--test` names one package's target.
fn postgres_targets() -> Result<Vec<String>> {
    let metadata = output(cmd(
        "cargo",
        &["metadata", "--no-deps", "--format-version", "1"],
    ))
    .context("`cargo metadata` failed")?;
    let metadata: serde_json::Value =
        serde_json::from_str(&metadata).context("reading `cargo metadata`")?;
    let mut tests: Vec<(String, String)> = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let krate = package["name"].as_str().unwrap_or_default();
        for target in package["targets"].as_array().into_iter().flatten() {
            let is_test = target["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "test"));
            if let (true, Some(name)) = (is_test, target["name"].as_str()) {
                tests.push((krate.to_owned(), name.to_owned()));
            }
        }
    }
    let mut targets = Vec::new();
    for (krate, which) in &POSTGRES_SUITES {
        let (names, listed_run) = match which {
            Targets::Only(names) => (names, true),
            Targets::AllBut(names) => (names, false),
        };
        let own: Vec<&String> = tests
            .iter()
            .filter(|(k, _)| k == krate)
            .map(|(_, n)| n)
            .collect();
        if let Some(name) = names.iter().find(|name| !own.iter().any(|n| n == *name)) {
            bail!("{krate} has no test target `{name}` (named by the PostgreSQL pass)");
        }
        for name in own {
            if names.contains(&name.as_str()) != listed_run {
                continue;
            }
            if tests.iter().filter(|(_, n)| n == name).count() > 1 {
                bail!("two packages have a test target `{name}`: `--test {name}` would run both");
            }
            targets.push(name.clone());
        }
    }
    Ok(targets)
}

/// `cargo xtask postgres`: the cluster of the PostgreSQL pass, held open until Enter is pressed
/// (then stopped and deleted), so a developer can run one suite on it from another shell.
pub fn hold_cluster() -> Result<()> {
    ensure_postgres()?;
    let cluster = Cluster::start().context("starting a PostgreSQL cluster")?;
    println!(
        "\nPostgreSQL {} on 127.0.0.1:{}. In another shell:\n\n    export {TEST_POSTGRES_ENV}='{}'\n    cargo test --workspace --test api\n\nPress Enter to stop it.",
        cluster.binaries().version,
        cluster.port(),
        cluster.admin_url()
    );
    let mut line = String::new();
    // End of input (no terminal) stops it too.
    std::io::stdin().read_line(&mut line)?;
    cluster.stop()
}

#[cfg(test)]
mod tests {
    /// The pass picks the suites' targets from the workspace as it is: the API suite and the
    /// end-to-end flows in, the accessibility test out, no name twice.
    #[test]
    fn postgres_targets_follow_the_workspace() {
        let targets = super::postgres_targets().expect("the PostgreSQL pass's targets");
        for name in ["api", "webhooks", "agent_tls", "credentials", "cluster"] {
            assert!(
                targets.iter().any(|t| t == name),
                "{name} missing: {targets:?}"
            );
        }
        for name in ["accessibility", "http", "components"] {
            assert!(
                !targets.iter().any(|t| t == name),
                "{name} included: {targets:?}"
            );
        }
        let mut unique = targets.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), targets.len());
    }
}
