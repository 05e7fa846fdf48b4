//! Flow 8: with 250 credentials created through the API, the console pages through all of them,
//! newest first, with no duplicates and no gaps; "Previous" goes back, the focus on the first row
//! of the page it shows. The page is in the URL:
//! a reload shows the same page (offering "First page", since the pages before it are not
//! known), and back / forward step through the pages.

use serde_json::json;
use std::collections::HashSet;
use tunnel_e2e::api::id;
use tunnel_e2e::harness::Stack;
use tunnel_e2e::pages::{self, credentials, lists};

#[tokio::test]
async fn pages_through_250_credentials() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let api = &stack.api;
    let mut created = Vec::new();
    for i in 0..250 {
        let c = api
            .create(
                "/credentials",
                json!({"description": format!("bulk {i:03}")}),
            )
            .await?;
        created.push(id(&c));
    }
    created.reverse(); // newest first, as the list shows them

    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    credentials::open_list(client).await?;
    let first_page = lists::row_ids(client).await?;
    let pages_seen = lists::collect_all_pages(client, 300).await?;
    browser.screenshot("credentials-last-page").await?;
    let seen: Vec<String> = pages_seen.concat();
    let unique: HashSet<_> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no duplicates");
    assert_eq!(seen, created, "every credential once, newest first");
    assert!(pages_seen.len() > 2, "250 credentials span several pages");

    // "Previous" from the last page shows the page before it again.
    pages::click_button(client, "← Previous").await?;
    let before_last = &pages_seen[pages_seen.len() - 2];
    pages::eventually("the page before the last", || async {
        Ok((lists::row_ids(client).await? == *before_last).then_some(()))
    })
    .await?;
    pages::wait_for_text(client, "Page 2").await?;
    // The focus is on that page's first row (so the view shows it), not left on the pager at
    // the bottom of the page.
    let first_row = client
        .execute(
            "return document.querySelector('main tbody a.name').innerText.trim();",
            vec![],
        )
        .await?;
    pages::wait_for_focus(client, &format!("a.name {first_row}")).await?;

    // A row's page and Back: the list still knows its page number and the way back.
    lists::open_row(client, &before_last[0]).await?;
    pages::wait_for_text(client, "Recent activity").await?;
    client.back().await?;
    pages::eventually("the page before the last after Back", || async {
        Ok((lists::row_ids(client).await? == *before_last).then_some(()))
    })
    .await?;
    pages::wait_for_text(client, "Page 2").await?;
    assert!(pages::has_button(client, "← Previous").await?);

    // The page is in the URL: a reload shows the same rows.
    let url = client.current_url().await?.to_string();
    assert!(url.contains("?before_id="), "{url}");
    client.refresh().await?;
    pages::eventually("the same page after a reload", || async {
        Ok((lists::row_ids(client).await? == *before_last).then_some(()))
    })
    .await?;
    pages::wait_for_text(client, "A later page").await?;
    // Back steps to the last page, then forward again to this one.
    client.back().await?;
    let last = &pages_seen[pages_seen.len() - 1];
    pages::eventually("the last page again", || async {
        Ok((lists::row_ids(client).await? == *last).then_some(()))
    })
    .await?;
    client.forward().await?;
    pages::eventually("the page before the last again", || async {
        Ok((lists::row_ids(client).await? == *before_last).then_some(()))
    })
    .await?;
    // Without the pages before it, "First page" goes to the first.
    pages::click_button(client, "← First page").await?;
    pages::eventually("the first page", || async {
        Ok((lists::row_ids(client).await? == first_page).then_some(()))
    })
    .await?;
    assert!(
        client
            .current_url()
            .await?
            .to_string()
            .ends_with("/credentials")
    );

    let (_, check) = api.get("/credentials?limit=1").await?;
    assert_eq!(check["credentials"][0]["id"], first_page[0].as_str());
    browser.close().await?;
    Ok(())
}
