//! Searching a list through the console: the search box filters as the user types, the search
//! is in the URL (a reload, back / forward and a shared link show the same rows), Enter applies
//! at once, an empty result says so, and clearing the box shows every row again. The order
//! (newest or oldest first) is chosen beside it and kept in the URL with it.

use serde_json::json;
use tunnel_e2e::api::id;
use tunnel_e2e::harness::Stack;
use tunnel_e2e::pages::{self, credentials, eventually, lists};

/// Waits until the table's rows are exactly `ids`, in order.
async fn rows_are(client: &fantoccini::Client, ids: &[&str]) -> anyhow::Result<()> {
    eventually(&format!("the rows {ids:?}"), || async {
        let rows = lists::row_ids(client).await?;
        Ok((rows == ids).then_some(()))
    })
    .await
}

async fn url(client: &fantoccini::Client) -> anyhow::Result<String> {
    Ok(client.current_url().await?.to_string())
}

#[tokio::test]
async fn a_search_filters_the_list_and_lives_in_the_url() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let api = &stack.api;
    let mut made = Vec::new();
    for description in ["alpha laptop", "beta server", "gamma Laptop"] {
        made.push(id(&api
            .create("/credentials", json!({"description": description}))
            .await?));
    }
    let [alpha, beta, gamma] = [&made[0], &made[1], &made[2]].map(String::as_str);
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    credentials::open_list(client).await?;
    rows_are(client, &[gamma, beta, alpha]).await?;

    // Typing filters once the user pauses; the search goes in the URL.
    pages::fill(client, "Search credentials", "laptop").await?;
    rows_are(client, &[gamma, alpha]).await?;
    assert!(url(client).await?.ends_with("/credentials?q=laptop"));
    browser.screenshot("search-credentials").await?;

    // A reload shows the same search and rows.
    client.refresh().await?;
    rows_are(client, &[gamma, alpha]).await?;
    let field = pages::field(client, "Search credentials").await?;
    assert_eq!(field.prop("value").await?.as_deref(), Some("laptop"));

    // Enter applies at once, as a new history entry; nothing found says so.
    pages::fill(client, "Search credentials", "nowhere").await?;
    pages::press(client, fantoccini::key::Key::Enter).await?;
    pages::wait_for_text(client, "Nothing matches “nowhere”.").await?;
    assert!(url(client).await?.ends_with("?q=nowhere"));

    // Back and forward show each entry's search, in the box too.
    client.back().await?;
    rows_are(client, &[gamma, alpha]).await?;
    eventually("the box following the URL", || async {
        let field = pages::field(client, "Search credentials").await?;
        Ok((field.prop("value").await?.as_deref() == Some("laptop")).then_some(()))
    })
    .await?;
    client.forward().await?;
    pages::wait_for_text(client, "Nothing matches “nowhere”.").await?;

    // Cleared, every row again.
    let field = pages::field(client, "Search credentials").await?;
    field.clear().await?;
    field
        .send_keys(&fantoccini::key::Key::Enter.to_string())
        .await?;
    rows_are(client, &[gamma, beta, alpha]).await?;
    assert!(url(client).await?.ends_with("/credentials"));

    // A shared link opens on its search.
    client
        .goto(&format!("{}/credentials?q=BETA", stack.server.url()))
        .await?;
    rows_are(client, &[beta]).await?;

    // The order goes in the URL beside the search, and survives a reload; back returns to
    // newest first.
    client
        .goto(&format!("{}/credentials?q=laptop", stack.server.url()))
        .await?;
    rows_are(client, &[gamma, alpha]).await?;
    pages::select(client, "Order", "Oldest first").await?;
    rows_are(client, &[alpha, gamma]).await?;
    assert!(
        url(client)
            .await?
            .ends_with("/credentials?q=laptop&order=oldest")
    );
    client.refresh().await?;
    rows_are(client, &[alpha, gamma]).await?;
    assert_eq!(pages::value_of(client, "Order").await?, "oldest");
    client.back().await?;
    rows_are(client, &[gamma, alpha]).await?;
    assert_eq!(pages::value_of(client, "Order").await?, "newest");
    client.forward().await?;
    rows_are(client, &[alpha, gamma]).await?;
    // A new search keeps the order.
    pages::fill(client, "Search credentials", "a").await?;
    pages::press(client, fantoccini::key::Key::Enter).await?;
    rows_are(client, &[alpha, beta, gamma]).await?;
    assert!(
        url(client)
            .await?
            .ends_with("/credentials?q=a&order=oldest")
    );
    browser.screenshot("search-oldest-first").await?;
    browser.close().await?;
    Ok(())
}
