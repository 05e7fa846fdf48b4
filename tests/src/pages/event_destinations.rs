//! The event destination pages: list, create (the signing secret shown once), and the detail
//! page with the test event, the deliveries, rotate secret and delete.

use super::{click_button, eventually, field, fill, open_from_navigation, page_text};
use anyhow::{Context, Result};
use fantoccini::{Client, Locator};

pub async fn open_list(client: &Client) -> Result<()> {
    open_from_navigation(
        client,
        "Destinations",
        "Where event subscriptions send events",
    )
    .await
}

/// Creates a webhook destination through the form; returns the signing secret its dialog
/// showed (the dialog is left open). The form opens without an error on the empty URL.
pub async fn create(client: &Client, url: &str, description: &str) -> Result<String> {
    open_list(client).await?;
    click_button(client, "New destination").await?;
    super::wait_for_text(client, "Events are POSTed here").await?;
    anyhow::ensure!(
        !page_text(client).await?.contains("must be an http"),
        "the new destination form opens with an error"
    );
    fill(client, "Webhook URL", url).await?;
    fill(client, "Description", description).await?;
    click_button(client, "Create destination").await?;
    secret_in_dialog(client).await
}

/// The value shown in the signing secret dialog.
pub async fn secret_in_dialog(client: &Client) -> Result<String> {
    super::wait_for_text(client, "Your new signing secret").await?;
    let input = field(client, "Signing secret").await?;
    input
        .prop("value")
        .await?
        .context("the secret field has no value")
}

/// Clicks "Refresh" over the deliveries until the page shows `text` in them.
pub async fn wait_for_delivery(client: &Client, text: &str) -> Result<String> {
    eventually(&format!("a delivery showing {text:?}"), || async {
        click_button(client, "Refresh").await?;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let shown = match client.find(Locator::Css(".deliveries table")).await {
            Ok(table) => table.text().await?,
            Err(_) => return Ok(None),
        };
        Ok(shown.contains(text).then_some(shown))
    })
    .await
}

/// The page's text, for assertions on what a test event answered.
pub async fn text(client: &Client) -> Result<String> {
    page_text(client).await
}
