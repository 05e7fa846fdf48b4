//! The API keys pages: list, create (the key shown once), detail, edit and delete; and who the
//! top bar says is signed in.

use super::{field, open_from_navigation, wait_for_text};
use anyhow::{Context, Result};
use fantoccini::{Client, Locator};

/// Opens the list from the main navigation.
pub async fn open_list(client: &Client) -> Result<()> {
    open_from_navigation(client, "API keys", "Keys that people and scripts use").await
}

/// The value shown in the dialog of a new key.
pub async fn key_in_dialog(client: &Client) -> Result<String> {
    wait_for_text(client, "Your new API key").await?;
    field(client, "API key")
        .await?
        .prop("value")
        .await?
        .context("the key field has no value")
}

/// What the top bar says about who is signed in, once it says it: the text shown (role and
/// account), then its title (the whole of it, with the user or bot id).
pub async fn who_am_i(client: &Client) -> Result<(String, String)> {
    super::eventually("the top bar naming who is signed in", || async {
        match client.find(Locator::Css(".whoami")).await {
            Ok(who) => {
                let title = who.attr("title").await?.unwrap_or_default();
                Ok(Some((who.text().await?, title)))
            }
            Err(_) => Ok(None),
        }
    })
    .await
}
