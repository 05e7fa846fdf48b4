//! The sign-in page.

use super::{click_button, fill, wait_for_text};
use anyhow::Result;
use fantoccini::Client;

/// Opens the console and signs in with `key`.
pub async fn sign_in(client: &Client, console_url: &str, key: &str) -> Result<()> {
    client.goto(console_url).await?;
    wait_for_text(client, "Sign in").await?;
    fill(client, "API key", key).await?;
    click_button(client, "Sign in").await
}
