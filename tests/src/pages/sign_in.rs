//! The sign-in page.

use super::{click_button, eventually, fill, wait_for_text};
use anyhow::Result;
use fantoccini::Client;

/// Opens the console and signs in with `key`, waiting until the console checked it: either the
/// console is shown, or the sign-in screen says what is wrong.
pub async fn sign_in(client: &Client, console_url: &str, key: &str) -> Result<()> {
    client.goto(console_url).await?;
    wait_for_text(client, "Sign in").await?;
    fill(client, "API key", key).await?;
    click_button(client, "Sign in").await?;
    eventually("the sign-in checked", || async {
        let done = client
            .execute(
                "return !!document.querySelector('button.signout') || \
                 [...document.querySelectorAll('.signin .error')].some(e => e.textContent.trim());",
                vec![],
            )
            .await?;
        Ok(done.as_bool().unwrap_or(false).then_some(()))
    })
    .await
}
