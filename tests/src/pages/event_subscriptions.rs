//! The event subscription pages (the console's "Events"): list, create and edit with the source
//! picker, free entry and the destination picker (with a form to add a webhook destination),
//! delete.

use super::{
    click_button, click_in_dialog, eventually, fill, has_button, open_from_navigation, select,
    wait_for_text,
};
use anyhow::Result;
use fantoccini::Client;

pub async fn open_list(client: &Client) -> Result<()> {
    open_from_navigation(client, "Events", "Event subscriptions").await
}

pub async fn start_new(client: &Client) -> Result<()> {
    open_list(client).await?;
    click_button(client, "New subscription").await?;
    wait_for_text(client, "New event subscription").await
}

pub async fn pick_source(client: &Client, event_type: &str) -> Result<()> {
    select(client, "Add from the catalogue", event_type).await
}

pub async fn type_source(client: &Client, event_type: &str) -> Result<()> {
    fill(client, "Or type one", event_type).await
}

pub async fn add_webhook(client: &Client, url: &str) -> Result<()> {
    fill(client, "New webhook destination URL", url).await?;
    click_button(client, "Add webhook").await?;
    wait_for_text(client, "created and selected").await?;
    close_secret_dialog(client).await
}

/// Closes the dialog with a new destination's signing secret, which opens with the "created
/// and selected" toast. Waited for (bounded), not looked for once: the dialog is modal, and a
/// field filled before it opened would lose what was typed to it.
pub async fn close_secret_dialog(client: &Client) -> Result<()> {
    click_in_dialog(client, "I have copied it").await?;
    eventually("the signing secret's dialog to close", || async {
        Ok((!has_button(client, "I have copied it").await?).then_some(()))
    })
    .await
}
