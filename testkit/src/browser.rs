//! chromedriver and headless Chromium (Debian's `/usr/bin` builds), driven through fantoccini.
//!
//! [`Chromedriver::start`] runs the driver under a [`ProcessGuard`]; each
//! [`Chromedriver::session`] is a fresh Chromium (cold cache) with an empty profile in a
//! temporary directory and the flags of [`CHROMIUM_FLAGS`], plus whatever the caller adds.
//! Downloads go, without asking, to the profile's [`DOWNLOADS`] directory.
//! [`run_in_every_document`] installs a script that runs before the page's own in every
//! document the session loads (a Chrome DevTools Protocol command, which WebDriver lacks).
//! [`browser_log`] reads what the pages wrote to the browser's console, and the browser's own
//! warnings and errors there.
//! Dropping the driver kills it and every Chromium it started (one process group).

use crate::process::{ProcessGuard, free_addr};
use anyhow::{Context, Result};
use std::process::{Command, Stdio};
use std::time::Duration;

pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// The flags of every Chromium: headless, no sandbox (containers), nothing that reaches out to
/// the network by itself (updates, sync, QUIC), a fixed window size so layouts are comparable.
/// `--user-data-dir=<temporary directory>` is added per session.
pub const CHROMIUM_FLAGS: &[&str] = &[
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--window-size=1280,900",
];

/// Where a session's downloads land, inside its profile directory.
pub const DOWNLOADS: &str = "downloads";

/// How long chromedriver may take to listen.
const DRIVER_START: Duration = Duration::from_secs(30);

/// A running chromedriver on a free loopback port.
#[derive(Debug)]
pub struct Chromedriver {
    port: u16,
    _process: ProcessGuard,
}

/// One Chromium session: the WebDriver client and the profile directory it uses (removed on
/// drop, after the browser is gone with its driver).
pub struct Session {
    pub client: fantoccini::Client,
    pub profile: tempfile::TempDir,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("profile", &self.profile.path())
            .finish_non_exhaustive()
    }
}

impl Chromedriver {
    pub fn start() -> Result<Chromedriver> {
        let addr = free_addr()?;
        let mut command = Command::new(CHROMEDRIVER);
        command
            .arg(format!("--port={}", addr.port()))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut process = ProcessGuard::spawn("chromedriver", command)?;
        process.wait_for_port(addr, DRIVER_START)?;
        Ok(Chromedriver {
            port: addr.port(),
            _process: process,
        })
    }

    /// A new headless Chromium with [`CHROMIUM_FLAGS`], then `extra_flags`.
    pub async fn session(&self, extra_flags: &[&str]) -> Result<Session> {
        self.start_session(extra_flags, false).await
    }

    /// [`Chromedriver::session`] whose browser console [`browser_log`] reads. Only when asked:
    /// chromedriver then follows the console of every page, and the benchmarks' browsers stay
    /// as they were when measured.
    pub async fn logged_session(&self, extra_flags: &[&str]) -> Result<Session> {
        self.start_session(extra_flags, true).await
    }

    async fn start_session(&self, extra_flags: &[&str], console_log: bool) -> Result<Session> {
        let profile = tempfile::tempdir()?;
        let args = chromium_args(extra_flags, profile.path());
        let mut caps = serde_json::Map::new();
        if console_log {
            caps.insert(
                "goog:loggingPrefs".into(),
                serde_json::json!({ "browser": "ALL" }),
            );
        }
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": CHROMIUM,
                "args": args,
                "prefs": {
                    "download.default_directory": profile.path().join(DOWNLOADS),
                    "download.prompt_for_download": false,
                },
            }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = fantoccini::ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .context("connecting to chromedriver")?;
        Ok(Session { client, profile })
    }
}

/// A command of chromedriver's beyond the WebDriver standard: `body` posted to
/// `session/{id}/{path}` (a DevTools command, the browser's console).
#[derive(Debug)]
struct Extension {
    path: &'static str,
    body: serde_json::Value,
}

impl fantoccini::wd::WebDriverCompatibleCommand for Extension {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/{}",
            session_id.unwrap_or_default(),
            self.path
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.body.to_string()))
    }
}

/// One line of the browser's console: its level (`INFO`, `WARNING`, `SEVERE`…) and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub level: String,
    pub message: String,
}

/// What the browser's console received since the last call (or since the session began): the
/// pages' own `console` calls, uncaught exceptions, and the browser's warnings and errors about
/// the pages (a failed request, a refused script, an ignored attribute). Empty unless the
/// session is a [`Chromedriver::logged_session`].
pub async fn browser_log(client: &fantoccini::Client) -> Result<Vec<LogEntry>> {
    let read = Extension {
        path: "se/log",
        body: serde_json::json!({ "type": "browser" }),
    };
    let entries = client
        .issue_cmd(read)
        .await
        .context("reading the browser's console")?;
    let entries = entries
        .as_array()
        .context("the browser's console is not a list")?;
    Ok(entries
        .iter()
        .map(|e| LogEntry {
            level: e["level"].as_str().unwrap_or_default().to_owned(),
            message: e["message"].as_str().unwrap_or_default().to_owned(),
        })
        .collect())
}

/// Runs `source` in every document `client` loads from now on, before any script of the page:
/// a watcher installed this way also sees what happens while the page starts.
pub async fn run_in_every_document(client: &fantoccini::Client, source: &str) -> Result<()> {
    let cmd = Extension {
        path: "goog/cdp/execute",
        body: serde_json::json!({
            "cmd": "Page.addScriptToEvaluateOnNewDocument",
            "params": { "source": source },
        }),
    };
    client
        .issue_cmd(cmd)
        .await
        .context("Page.addScriptToEvaluateOnNewDocument")?;
    Ok(())
}

/// Chromium's command line: the common flags, the caller's, and the profile directory.
pub fn chromium_args(extra_flags: &[&str], profile: &std::path::Path) -> Vec<String> {
    CHROMIUM_FLAGS
        .iter()
        .chain(extra_flags)
        .map(|f| (*f).to_owned())
        .chain([format!("--user-data-dir={}", profile.display())])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_session_gets_the_common_flags_its_own_and_a_profile() {
        let args = chromium_args(&["--disable-extensions"], std::path::Path::new("/tmp/p"));
        for flag in [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
            "--disable-extensions",
        ] {
            assert!(args.iter().any(|a| a == flag), "{flag} missing: {args:?}");
        }
        assert_eq!(args.last().unwrap(), "--user-data-dir=/tmp/p");
    }
}
