//! The console under a rate limit (docs/rate-limits.md): a server allowing one request every
//! 3 s per key, its bucket emptied by a script using the same key; the console's next request
//! is refused with a 429, which the console shows as a calm note (not an error), waits out and
//! sends again, and the page then shows what it asked for.

use fantoccini::Locator;
use hyper::Method;
use serde_json::json;
use tunnel_e2e::api::id;
use tunnel_e2e::harness::Stack;
use tunnel_e2e::pages::{credentials, eventually, lists, page_text};

/// The note of `web/src/api.rs` (`RATE_LIMITED_NOTE`).
const NOTE: &str = "The server is limiting how fast requests may come";

#[tokio::test]
async fn the_console_waits_out_a_429_and_shows_the_page() -> anyhow::Result<()> {
    let stack = Stack::start(&["--rate-limit-key", "20/m,1"])?;
    let api = &stack.api;
    let made = id(&api
        .create("/credentials", json!({"description": "slowed down"}))
        .await?);
    // Signing in and the list each wait out what the script above left of the bucket.
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    credentials::open_list(client).await?;
    eventually("the row", || async {
        Ok((lists::row_ids(client).await? == [made.clone()]).then_some(()))
    })
    .await?;

    // The script takes the bucket's one request, and gets the next one refused.
    let mut drained = false;
    for _ in 0..5 {
        let (status, body) = api.call_once(Method::GET, "/credentials", None).await?;
        if status == 429 {
            assert_eq!(body["error_code"], "ERR_TUNNEL_170", "{body}");
            drained = true;
            break;
        }
    }
    assert!(drained, "the bucket of one request a 3 s never emptied");

    // Opening the credential: refused, noted calmly, waited out, shown.
    lists::open_row(client, &made).await?;
    eventually("the calm note", || async {
        Ok(page_text(client).await?.contains(NOTE).then_some(()))
    })
    .await?;
    let toast_is_calm = client
        .find_all(Locator::Css(".toast.toast-error"))
        .await?
        .is_empty();
    assert!(toast_is_calm, "the note is not shown as an error");
    browser.screenshot("rate-limited-note").await?;
    // Its uri is shown only once the credential itself arrived.
    let uri = format!("{}/credentials/{made}", stack.server.api_url());
    eventually("the credential's page", || async {
        Ok(page_text(client).await?.contains(&uri).then_some(()))
    })
    .await?;
    assert!(
        client
            .find_all(Locator::Css(".error-box"))
            .await?
            .is_empty(),
        "no error shown: {}",
        page_text(client).await?
    );
    Ok(())
}
