//! The credentials pages: list, create (with the ACL editor and the token dialog), detail, edit,
//! the ACL tester and delete.

use super::{click_button, field, fill, open_from_navigation, wait_for_text};
use anyhow::{Context, Result};
use fantoccini::{Client, Locator};

/// Opens the list from the main navigation.
pub async fn open_list(client: &Client) -> Result<()> {
    open_from_navigation(client, "Credentials", "Authtokens that tunnel agents use").await
}

/// Types `rule` into ACL rule number `n` (1-based), adding rows as needed.
pub async fn set_rule(client: &Client, n: usize, rule: &str) -> Result<()> {
    let label = format!("Rule {n}");
    if client
        .find(Locator::Id(&format!("acl-rule-{}", n - 1)))
        .await
        .is_err()
    {
        click_button(client, "+ Add rule").await?;
    }
    fill(client, &label, rule).await
}

/// The value shown in the token dialog.
pub async fn token_in_dialog(client: &Client) -> Result<String> {
    wait_for_text(client, "you will not see it again").await?;
    let input = field(client, "Authtoken").await?;
    input
        .prop("value")
        .await?
        .context("the token field has no value")
}
