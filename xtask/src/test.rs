//! `cargo xtask test`: the project's one test command (CI runs it through `.ci/run`).
//!
//! Steps, each printed with its duration, stopping at the first failure: tools (PostgreSQL's
//! server among them), `cargo fmt --check`, clippy (native workspace, and the WASM crates for
//! wasm32), the release console build, the server and agent binaries, the native tests of the
//! workspace (end-to-end ones and `tunnel-testkit` included: every step names the workspace, not
//! a list of crates), generated requests against the debug server the end-to-end tests ran
//! (`fuzz_api`, schemathesis), the contract suites again on a real PostgreSQL (one cluster
//! started from Debian's programs for the step, named to the tests by `TUNNEL_TEST_POSTGRES`,
//! stopped afterwards, also when a suite fails), and the browser tests of the WASM crates in
//! headless Chromium. The end-to-end tests get npm axe-core's `axe.min.js` in `TUNNEL_AXE_CORE`.
//! The testing layers: `docs/testing.md`. `cargo xtask postgres` ([`hold_cluster`]) starts the
//! PostgreSQL pass's cluster alone, for running a suite on it by hand.

use crate::shell::TestCount;
use crate::shell::{cmd, done, exec, exec_tests, step, target_dir};
use crate::tools::{
    AXE_CORE_ENV, CHROMEDRIVER, ensure_axe_core, ensure_browser, ensure_build_tools,
    ensure_postgres,
};
use anyhow::{Context, Result};
use tunnel_testkit::postgres::{Cluster, TEST_POSTGRES_ENV};

/// The test binaries whose support code reads `TUNNEL_TEST_POSTGRES`, run a second time on
/// PostgreSQL: the server's API and webhook suites (in process), the agent's tests (the server
/// application on a loopback port), and the end-to-end flows (the real server binary).
const POSTGRES_SUITES: [&[&str]; 3] = [
    &["-p", "tunnel-server", "--test", "api", "--test", "webhooks"],
    &[
        "-p",
        "tunnel-agent",
        "--test",
        "server_channel",
        "--test",
        "agent_binary",
        "--test",
        "agent_reconnect",
        "--test",
        "agent_failover",
        "--test",
        "agent_tls",
        "--test",
        "session_update_target",
    ],
    // The accessibility test looks at the console, whatever database the server has: it runs
    // once, in the SQLite pass, and is filtered out here (by its name) to spare CI its minutes.
    &[
        "-p",
        "tunnel-e2e",
        "--all-targets",
        "--",
        "--skip",
        ACCESSIBILITY_TEST,
    ],
];

/// The name of the end-to-end accessibility test (`tests/tests/accessibility.rs`).
const ACCESSIBILITY_TEST: &str = "axe_finds_no_serious_violation_on_any_console_page";

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

    // The end-to-end tests start these programs as real processes.
    let timer = step("server and agent binaries (for the end-to-end tests)");
    exec(cmd(
        "cargo",
        &["build", "-p", "tunnel-server", "-p", "tunnel-agent"],
    ))?;
    done(timer);

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
fn postgres_pass() -> Result<TestCount> {
    let cluster = Cluster::start().context("starting the PostgreSQL cluster of the tests")?;
    println!(
        "    PostgreSQL {} on 127.0.0.1:{} ({TEST_POSTGRES_ENV} set for the suites below)",
        cluster.binaries().version,
        cluster.port()
    );
    let mut count = TestCount::default();
    for suite in POSTGRES_SUITES {
        let mut args = vec!["test"];
        args.extend_from_slice(suite);
        let mut command = cmd("cargo", &args);
        command.env(TEST_POSTGRES_ENV, cluster.admin_url());
        count.add(exec_tests(command)?);
    }
    cluster.stop()?;
    Ok(count)
}

/// `cargo xtask postgres`: the cluster of the PostgreSQL pass, held open until Enter is pressed
/// (then stopped and deleted), so a developer can run one suite on it from another shell.
pub fn hold_cluster() -> Result<()> {
    ensure_postgres()?;
    let cluster = Cluster::start().context("starting a PostgreSQL cluster")?;
    println!(
        "\nPostgreSQL {} on 127.0.0.1:{}. In another shell:\n\n    export {TEST_POSTGRES_ENV}='{}'\n    cargo test -p tunnel-server --test api\n\nPress Enter to stop it.",
        cluster.binaries().version,
        cluster.port(),
        cluster.admin_url()
    );
    let mut line = String::new();
    // End of input (no terminal) stops it too.
    std::io::stdin().read_line(&mut line)?;
    cluster.stop()
}
