//! Flow 1: sign in with the admin key; a wrong key shows the error and stays on sign-in.

use tunnel_e2e::harness::{ADMIN_KEY, Browser, Server};
use tunnel_e2e::pages::{self, sign_in::sign_in};

#[tokio::test]
async fn admin_key_signs_in_and_wrong_key_is_refused() -> anyhow::Result<()> {
    let server = Server::start(&[])?;
    let browser = Browser::start().await?;
    let client = &browser.client;

    let wrong = "wrongKey0000000000000000000_notTheSecretAtAllNotIt0000";
    sign_in(client, &server.url(), wrong).await?;
    pages::wait_for_text(client, "API key is unknown").await?;
    browser.screenshot("sign-in-refused").await?;
    // Still on sign-in: the key field is there and no navigation appeared.
    pages::field(client, "API key").await?;
    assert!(!pages::has_button(client, "Sign out").await?);
    let url = client.current_url().await?;
    assert!(
        !url.as_str().contains(wrong),
        "the key must never be in the URL: {url}"
    );

    sign_in(client, &server.url(), ADMIN_KEY).await?;
    pages::click_button(client, "Sign out").await?;
    pages::wait_for_text(client, "Sign in").await?;
    sign_in(client, &server.url(), ADMIN_KEY).await?;
    pages::eventually("the Sign out button", || async {
        Ok(pages::has_button(client, "Sign out").await?.then_some(()))
    })
    .await?;
    browser.screenshot("signed-in").await?;
    let url = client.current_url().await?;
    assert!(
        !url.as_str().contains(ADMIN_KEY),
        "the key must never be in the URL: {url}"
    );
    browser.client.clone().close().await?;
    Ok(())
}
