//! The browser's console stays quiet: signing in and opening every page of the console (each
//! with real data), then a reload with a warm cache and back and forward, leave no warning and no
//! error in it. That covers what the console logs itself, an uncaught exception, a request that
//! failed, a script or style the Content-Security-Policy refused, and the browser's complaints
//! about the page's markup (an attribute it ignores).

use tunnel_e2e::every_page::{self, Texts, settle};
use tunnel_e2e::harness::{ADMIN_KEY, Browser, Stack};
use tunnel_e2e::pages::sign_in::sign_in;
use tunnel_testkit::browser::browser_log;

/// The levels of the browser's console that are a finding (`INFO` and `DEBUG` are not).
const FINDINGS: [&str; 2] = ["WARNING", "SEVERE"];

#[tokio::test]
async fn no_page_leaves_a_warning_or_an_error_in_the_browser_console() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let (server, api) = (&stack.server, &stack.api);
    let texts = Texts::plain("quiet");
    let data = every_page::create(server, api, &texts).await?;
    let browser = Browser::start_logged().await?;
    let client = &browser.client;
    let base = server.url();

    client.goto(&base).await?;
    settle(client, "Sign in").await?;
    // The log is read for real: a line put there now comes back (and is not a finding). Each
    // read takes what came since the last, so this first read is checked with the rest.
    client
        .execute("console.info('tunnel-e2e probe');", vec![])
        .await?;
    let mut log = browser_log(client).await?;
    assert!(
        log.iter().any(|e| e.message.contains("tunnel-e2e probe")),
        "the browser's console did not show a line just written: {log:?}"
    );
    sign_in(client, &base, ADMIN_KEY).await?;
    let routes = every_page::routes(&data, &texts);
    for (route, text) in &routes {
        client.goto(&format!("{base}{route}")).await?;
        settle(client, text).await?;
    }
    // A warm cache: the page revalidated, the files from the cache.
    let (route, text) = &routes[0];
    client.goto(&format!("{base}{route}")).await?;
    settle(client, text).await?;
    client.refresh().await?;
    settle(client, text).await?;
    client.back().await?;
    settle(client, &routes.last().expect("routes").1).await?;
    client.forward().await?;
    settle(client, text).await?;

    log.extend(browser_log(client).await?);
    let findings: Vec<String> = log
        .iter()
        .filter(|e| FINDINGS.contains(&e.level.as_str()))
        .map(|e| format!("{}: {}", e.level, e.message))
        .collect();
    assert!(
        findings.is_empty(),
        "the browser's console after {} pages:\n{}",
        routes.len(),
        findings.join("\n")
    );
    Ok(())
}
