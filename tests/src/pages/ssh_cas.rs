//! The SSH certificate authority pages: list, create (key type, then curve or size), detail with
//! the public key, edit and delete.

use super::{click_button, click_in_dialog, open_from_navigation, select, value_of, wait_for_text};
use anyhow::Result;
use fantoccini::Client;

pub async fn open_list(client: &Client) -> Result<()> {
    open_from_navigation(client, "SSH CAs", "SSH certificate authorities").await
}

/// Creates a CA from the list page and returns its public key line, shown on its detail page.
/// `curve_or_size` is the option text of the second select, if the key type has one.
pub async fn create(
    client: &Client,
    description: &str,
    key_type: &str,
    second: Option<(&str, &str)>,
) -> Result<String> {
    open_list(client).await?;
    click_button(client, "New SSH CA").await?;
    select(client, "Key type", key_type).await?;
    if let Some((label, option)) = second {
        select(client, label, option).await?;
    }
    super::fill(client, "Description", description).await?;
    click_button(client, "Create SSH CA").await?;
    wait_for_text(client, "Copy public key").await?;
    value_of(client, "Public key").await
}

pub async fn delete(client: &Client) -> Result<()> {
    click_button(client, "Delete").await?;
    click_in_dialog(client, "Delete SSH CA").await
}
