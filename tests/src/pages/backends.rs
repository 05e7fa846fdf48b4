//! The tunnel-group backends pages (the console's "Backends"): the list, the create page, and
//! the detail page with its editor.

use super::{click_button, fill, open_from_navigation, wait_for_text};
use anyhow::Result;
use fantoccini::Client;

pub async fn open_list(client: &Client) -> Result<()> {
    open_from_navigation(client, "Backends", "Tunnel-group backends").await
}

/// Creates a backend from the list's "New backend" page; the console then shows its page.
pub async fn create(client: &Client, description: &str, labels: &str) -> Result<()> {
    click_button(client, "New backend").await?;
    fill(client, "Description", description).await?;
    fill(client, "Labels", labels).await?;
    click_button(client, "Create backend").await?;
    wait_for_text(client, "Tunnels online").await
}

/// Opens the editor of the page's resource, sets `label` to `value` and saves.
pub async fn edit(client: &Client, label: &str, value: &str) -> Result<()> {
    click_button(client, "Edit").await?;
    fill(client, label, value).await?;
    click_button(client, "Save changes").await?;
    wait_for_text(client, "saved.").await
}
