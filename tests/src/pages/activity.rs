//! The Activity page (the audit log): its rows, its filters (kept in the URL) and one event in
//! full; and the "Recent activity" section of the detail pages.

use super::{eventually, field, open_from_navigation};
use anyhow::Result;
use fantoccini::{Client, Locator};

/// Opens the Activity page from the main navigation.
pub async fn open(client: &Client) -> Result<()> {
    open_from_navigation(client, "Activity", "Every change to the account").await
}

/// The text of the Activity row of event `event_id`, once it is shown.
pub async fn row_text(client: &Client, event_id: &str) -> Result<String> {
    let css = format!("table tbody tr[data-id='{event_id}']");
    eventually(&format!("the activity row of {event_id}"), || async {
        match client.find(Locator::Css(&css)).await {
            Ok(row) => Ok(Some(row.text().await?)),
            Err(_) => Ok(None),
        }
    })
    .await
}

/// The link target (`href`) of the object in the row of event `event_id`.
pub async fn object_href(client: &Client, event_id: &str) -> Result<Option<String>> {
    let css = format!("table tbody tr[data-id='{event_id}'] a.object-link");
    Ok(client.find(Locator::Css(&css)).await?.attr("href").await?)
}

/// The query of the page's URL (without `?`).
pub async fn query(client: &Client) -> Result<String> {
    Ok(client
        .current_url()
        .await?
        .query()
        .unwrap_or_default()
        .to_owned())
}

/// Waits until the URL's query is `expected` (without `?`).
pub async fn wait_for_query(client: &Client, expected: &str) -> Result<()> {
    eventually(&format!("the query {expected:?}"), || async {
        Ok((query(client).await? == expected).then_some(()))
    })
    .await
}

/// The value of the filter field labelled `label` ("Type", "Object ID", …), once it equals
/// `expected` (the fields follow the URL after it changes).
pub async fn wait_for_filter(client: &Client, label: &str, expected: &str) -> Result<()> {
    let el = field(client, label).await?;
    eventually(&format!("the filter {label:?} = {expected:?}"), || async {
        let value = el.prop("value").await?.unwrap_or_default();
        Ok((value == expected).then_some(()))
    })
    .await
}

/// The event ids of the "Recent activity" section of a detail page, once it lists `event_id`.
pub async fn recent_has(client: &Client, event_id: &str) -> Result<()> {
    let css = format!(".recent-activity li[data-id='{event_id}']");
    eventually(&format!("{event_id} in the recent activity"), || async {
        Ok(client.find(Locator::Css(&css)).await.ok().map(drop))
    })
    .await
}
