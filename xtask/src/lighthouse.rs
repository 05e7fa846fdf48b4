//! `cargo xtask lighthouse`: Lighthouse's accessibility score of every console page, signed in,
//! in both themes, on a phone and a desktop. Not part of `cargo xtask test` (the end-to-end
//! accessibility test, with axe-core, is): it is run by hand and its table goes in the README.
//!
//! It installs what is missing (npm `lighthouse`, pinned, into the tool cache), builds the
//! console (release) and the debug server and agent the tests use, starts the server on a free
//! loopback port with a throwaway SQLite database and a bootstrap admin key, and runs
//! `xtask/lighthouse/audit.mjs` with Node: it creates the data, starts an agent, and audits each
//! page in Debian's Chromium. The script and everything it starts run in one process group,
//! killed when this returns.

use crate::shell::{cmd, done, exec, root, step, target_dir};
use crate::tools::{CHROMIUM, ensure_browser, ensure_build_tools, ensure_lighthouse};
use anyhow::{Result, bail};
use std::time::Duration;
use tunnel_testkit::process::{ProcessGuard, free_addr, serve_command};

/// The bootstrap admin key of the throwaway server (token format of `docs/ids.md`).
const ADMIN_KEY: &str = "lighthouseAdminKey000000000_lighthouseSecretSecretSecret01";
/// How long the whole audit may take (about 90 runs of a few seconds each).
const AUDIT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

pub fn run() -> Result<()> {
    ensure_build_tools()?;
    ensure_browser()?;
    let lighthouse = ensure_lighthouse()?;

    let timer = step("console release build (trunk)");
    crate::run::build_console()?;
    done(timer);
    let timer = step("server and agent binaries");
    exec(cmd(
        "cargo",
        &["build", "-p", "tunnel-server", "-p", "tunnel-agent"],
    ))?;
    done(timer);

    let debug = target_dir("debug");
    let data = tempfile::tempdir()?;
    let addr = free_addr()?;
    let database = format!("sqlite://{}", data.path().join("tunnel.db").display());
    let mut command = serve_command(&debug.join("tunnel-server"), addr, &database);
    command
        .arg("--console-dir")
        .arg(root().join("dist"))
        .env("TUNNEL_BOOTSTRAP_API_KEY", ADMIN_KEY);
    let mut server = ProcessGuard::spawn("tunnel-server", command)?;
    server.wait_for_port(addr, Duration::from_secs(30))?;

    let timer = step("lighthouse: accessibility of every page");
    let mut command = cmd("node", &["xtask/lighthouse/audit.mjs"]);
    command
        .env("TUNNEL_URL", format!("http://{addr}"))
        .env("TUNNEL_API_KEY", ADMIN_KEY)
        .env("TUNNEL_AGENT", debug.join("tunnel-agent"))
        .env("LIGHTHOUSE_DIR", &lighthouse)
        .env("CHROMIUM", CHROMIUM)
        .env("OUT_DIR", target_dir("lighthouse"));
    let mut audit = ProcessGuard::spawn("node xtask/lighthouse/audit.mjs", command)?;
    let status = audit.wait_exit(AUDIT_TIMEOUT)?;
    if !status.success() {
        bail!("the Lighthouse audit failed ({status}): see above");
    }
    done(timer);
    Ok(())
}
