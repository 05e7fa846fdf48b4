//! The tunnel sessions pages (the console's "Sessions"): the refreshed list, the detail page and
//! the agent commands.

use super::{click_button, click_in_dialog, open_from_navigation, wait_for_text};
use anyhow::Result;
use fantoccini::{Client, Locator};

pub async fn open_list(client: &Client) -> Result<()> {
    open_from_navigation(client, "Sessions", "Tunnel sessions").await
}

/// Opens a session from the list by its id (the list refreshes itself every few seconds).
pub async fn open(client: &Client, id: &str) -> Result<()> {
    super::lists::open_row(client, id).await?;
    wait_for_text(client, "Agent commands").await
}

/// Sends `command` ("Restart", "Update", "Stop") through its button and the confirmation.
pub async fn command(client: &Client, command: &str) -> Result<()> {
    click_button(client, command).await?;
    click_in_dialog(client, command).await
}

/// Whether the page's button whose text starts with `prefix` is enabled now.
pub async fn button_enabled(client: &Client, prefix: &str) -> Result<bool> {
    let xpath = format!("//button[starts-with(normalize-space(), '{prefix}')]");
    Ok(client
        .find(Locator::XPath(&xpath))
        .await?
        .is_enabled()
        .await?)
}
