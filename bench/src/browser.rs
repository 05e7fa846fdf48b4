//! Headless Chromium through chromedriver and fantoccini, for the console start section.
//!
//! The measure is taken by the page itself with the Performance API: before any script of the
//! page runs, a `MutationObserver` is installed (CDP `Page.addScriptToEvaluateOnNewDocument`,
//! through chromedriver's `goog/cdp/execute`) that puts a `performance.mark` the moment the
//! document holds `rows` table rows. The mark's `startTime` is milliseconds since the
//! navigation started, so WebDriver's own round trips do not enter the figure, and the console
//! and the static baseline page are measured by exactly the same code.
//!
//! chromedriver and Chromium's flags come from `tunnel-testkit` (shared with the end-to-end
//! tests); the benchmarks add `--disable-extensions`.

use anyhow::{Result, bail};
use std::time::{Duration, Instant};
use tunnel_testkit::browser::Chromedriver;

/// Flags of the benchmark's Chromium beyond the common ones.
const EXTRA_FLAGS: &[&str] = &["--disable-extensions"];
/// The name of the mark put when the rows are in the document.
const MARK: &str = "bench-rows-shown";

/// The page's own timeline (Navigation and Resource Timing): when the document arrived, and when
/// each file and API request started and ended, in ms since the navigation started.
const TIMELINE: &str = "const nav = performance.getEntriesByType('navigation')[0];
return { document: nav.responseEnd,
  resources: performance.getEntriesByType('resource').map(r => [r.name, r.startTime, r.responseEnd]) };";

/// One visit: when the rows showed, and the phases before it, each ending where the next begins
/// (ms since the navigation started). The phases past `document` are only known for the
/// console; the static page has no files or requests of its own.
#[derive(Debug, Clone, Copy)]
pub struct Visit {
    pub rows: f64,
    /// The document's last byte arrived.
    pub document: f64,
    /// The console's code arrived: the later end of the JS and the WASM.
    pub code: Option<f64>,
    /// The console asked for the list (it had started and rendered its frame).
    pub list_asked: Option<f64>,
    /// The list's last byte arrived.
    pub list_received: Option<f64>,
}

impl Visit {
    fn new(rows: f64, timeline: &serde_json::Value) -> Visit {
        let resources: Vec<(&str, f64, f64)> = timeline["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| Some((r[0].as_str()?, r[1].as_f64()?, r[2].as_f64()?)))
            .collect();
        let code = resources
            .iter()
            .filter(|(name, ..)| name.ends_with(".wasm") || name.ends_with(".js"))
            .map(|&(_, _, end)| end)
            .reduce(f64::max);
        let list = resources
            .iter()
            .find(|(name, ..)| name.contains("/api/credentials"));
        Visit {
            rows,
            document: timeline["document"].as_f64().unwrap_or(0.0),
            code,
            list_asked: list.map(|&(_, start, _)| start),
            list_received: list.map(|&(_, _, end)| end),
        }
    }
}

/// chromedriver; each [`Browser::session`] is a fresh Chromium with an empty profile.
#[derive(Debug)]
pub struct Browser {
    driver: Chromedriver,
}

/// A chromedriver session (one Chromium, cold cache). Closed explicitly with [`Session::close`].
pub struct Session {
    pub client: fantoccini::Client,
    _profile: tempfile::TempDir,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Session")
    }
}

impl Browser {
    pub fn start() -> Result<Browser> {
        Ok(Browser {
            driver: Chromedriver::start()?,
        })
    }

    pub async fn session(&self) -> Result<Session> {
        let session = self.driver.session(EXTRA_FLAGS).await?;
        Ok(Session {
            client: session.client,
            _profile: session.profile,
        })
    }
}

impl Session {
    /// Installs, for every later navigation, the observer that marks when `rows` rows show.
    pub async fn mark_rows_on_new_documents(&self, rows: usize) -> Result<()> {
        let source = format!(
            r"(() => {{
  const want = {rows};
  const seen = () => document.querySelectorAll('table tbody tr').length >= want;
  const observer = new MutationObserver(() => {{
    if (seen()) {{ performance.mark('{MARK}'); observer.disconnect(); }}
  }});
  observer.observe(document, {{ childList: true, subtree: true }});
}})();"
        );
        tunnel_testkit::browser::run_in_every_document(&self.client, &source).await
    }

    /// Navigates to `url` and returns the mark's time (ms since navigation start) and where it
    /// went, waiting at most 60 s for it.
    pub async fn time_to_rows(&self, url: &str) -> Result<Visit> {
        self.client.goto(url).await?;
        let deadline = Instant::now() + Duration::from_secs(60);
        let script = format!(
            "const m = performance.getEntriesByName('{MARK}')[0]; return m ? m.startTime : null;"
        );
        loop {
            if let Some(ms) = self.client.execute(&script, vec![]).await?.as_f64() {
                let timeline = self.client.execute(TIMELINE, vec![]).await?;
                return Ok(Visit::new(ms, &timeline));
            }
            if Instant::now() > deadline {
                let rows = self
                    .client
                    .execute(
                        "return document.querySelectorAll('table tbody tr').length;",
                        vec![],
                    )
                    .await?;
                bail!("{url}: the rows did not show within 60 s (rows now: {rows})");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn close(self) -> Result<()> {
        self.client.close().await?;
        Ok(())
    }
}
