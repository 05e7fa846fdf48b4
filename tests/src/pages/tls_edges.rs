//! The TLS edges pages: the list with its create form, and per edge the backend module editor
//! (with a form to create a tunnel-group backend to pick).

use super::{click_button, click_in_dialog, field, fill, open_from_navigation, wait_for_text};
use anyhow::Result;
use fantoccini::Client;

pub async fn open_list(client: &Client) -> Result<()> {
    open_from_navigation(client, "TLS edges", "Pick an edge").await
}

/// Creates an edge from the list page.
pub async fn create_edge(client: &Client, description: &str, hostports: &str) -> Result<()> {
    fill(client, "Description", description).await?;
    fill(client, "Host:ports", hostports).await?;
    click_button(client, "Create TLS edge").await?;
    wait_for_text(client, "created").await
}

/// Creates a tunnel-group backend from an edge's page.
pub async fn create_backend(client: &Client, description: &str, labels: &str) -> Result<()> {
    fill(client, "Description", description).await?;
    fill(client, "Labels", labels).await?;
    click_button(client, "Create backend").await?;
    wait_for_text(client, "Tunnel-group backend bkdtg_").await
}

/// Sets the "Enabled" switch of the module form.
pub async fn set_enabled(client: &Client, enabled: bool) -> Result<()> {
    let switch = field(client, "Enabled (applied to traffic)").await?;
    let checked = switch.prop("checked").await?.as_deref() == Some("true");
    if checked != enabled {
        switch.click().await?;
    }
    Ok(())
}

pub async fn delete_module(client: &Client) -> Result<()> {
    click_button(client, "Delete module").await?;
    click_in_dialog(client, "Delete module").await
}
