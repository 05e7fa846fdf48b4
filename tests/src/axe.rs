//! axe-core (npm, installed by `cargo xtask test`) run inside the page the browser shows: the
//! accessibility checks of `tests/tests/accessibility.rs`.
//!
//! The script is injected through WebDriver's execute, which runs it as the driver's own code:
//! the console's Content-Security-Policy (no inline or foreign scripts) does not apply to it, so
//! nothing of the console is loosened for the test. `axe.run` is asynchronous, so it runs under
//! execute_async and hands back only what a failure message needs.

use anyhow::{Context, Result, bail};
use fantoccini::Client;
use serde_json::Value;
use std::path::PathBuf;

/// The variable naming `axe.min.js` (set by `cargo xtask test`).
pub const AXE_CORE_ENV: &str = "TUNNEL_AXE_CORE";

/// The impacts that fail the test (axe's scale: minor, moderate, serious, critical).
pub const FAILING_IMPACTS: [&str; 2] = ["serious", "critical"];

/// One rule broken on a page, with the nodes that break it.
#[derive(Debug, Clone)]
pub struct Violation {
    pub rule: String,
    pub impact: String,
    pub help: String,
    /// Each node: its CSS selector path, then axe's summary of what is wrong there.
    pub nodes: Vec<String>,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{} ({}): {}", self.rule, self.impact, self.help)?;
        for node in &self.nodes {
            writeln!(f, "      {node}")?;
        }
        Ok(())
    }
}

/// The source of `axe.min.js`: from [`AXE_CORE_ENV`], else from where `cargo xtask test`
/// installs it (`~/.cache/tunnel-console/axe-core`). Missing is an error that says how to
/// install it, never a skipped check.
pub fn source() -> Result<String> {
    let path = match std::env::var_os(AXE_CORE_ENV) {
        Some(path) => PathBuf::from(path),
        None => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default()
            .join(".cache/tunnel-console/axe-core/node_modules/axe-core/axe.min.js"),
    };
    if !path.is_file() {
        bail!(
            "axe-core is missing ({} does not exist): `cargo xtask test` installs it, or run \
             `npm install --prefix ~/.cache/tunnel-console/axe-core axe-core@<the version of \
             xtask/src/tools.rs>`, or set {AXE_CORE_ENV} to an axe.min.js",
            path.display()
        );
    }
    std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
}

/// Runs axe on the whole document shown now (injecting the script first when this document
/// does not have it yet) and returns the violations whose impact is in [`FAILING_IMPACTS`].
/// The rules: axe's defaults plus `target-size` (WCAG 2.2's 24 px targets), which axe leaves
/// off by default and Lighthouse turns on.
pub async fn serious_violations(client: &Client, axe_source: &str) -> Result<Vec<Violation>> {
    let present = client
        .execute("return typeof window.axe === 'object';", vec![])
        .await?;
    if present != Value::Bool(true) {
        // The script assigns `window.axe` itself (it is wrapped in a function by the driver).
        client
            .execute(&format!("{axe_source}\nreturn true;"), vec![])
            .await
            .context("injecting axe.min.js")?;
    }
    let found = client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             const failing = arguments[0];
             axe.run(document, { resultTypes: ['violations'], rules: { 'target-size': { enabled: true } } }).then(
               (result) => done({ violations: result.violations
                 .filter((v) => failing.includes(v.impact))
                 .map((v) => ({
                   rule: v.id, impact: v.impact, help: v.help,
                   nodes: v.nodes.map((n) => n.target.join(' ') + ' | ' +
                     (n.failureSummary || '').replace(/\\s+/g, ' ').trim()),
                 })) }),
               (error) => done({ error: String(error) }));",
            vec![serde_json::json!(FAILING_IMPACTS)],
        )
        .await
        .context("running axe")?;
    if let Some(error) = found.get("error") {
        bail!("axe.run failed: {error}");
    }
    let list = found["violations"]
        .as_array()
        .with_context(|| format!("axe answered {found}"))?;
    Ok(list
        .iter()
        .map(|v| Violation {
            rule: v["rule"].as_str().unwrap_or_default().to_owned(),
            impact: v["impact"].as_str().unwrap_or_default().to_owned(),
            help: v["help"].as_str().unwrap_or_default().to_owned(),
            nodes: v["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|n| n.as_str().unwrap_or_default().to_owned())
                .collect(),
        })
        .collect())
}
