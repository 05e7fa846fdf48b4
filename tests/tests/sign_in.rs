//! Flow 1: sign in with the admin key; a wrong key shows the error and stays on sign-in; the
//! focus lands on the page's heading after signing in and on the key field after signing out.

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
    // Still on sign-in: the key field is there and no navigation appeared; the tab says so.
    pages::field(client, "API key").await?;
    assert_eq!(client.title().await?, "Sign in · Tunnel Console");
    assert!(!pages::has_button(client, "Sign out").await?);
    let url = client.current_url().await?;
    assert!(
        !url.as_str().contains(wrong),
        "the key must never be in the URL: {url}"
    );

    sign_in(client, &server.url(), ADMIN_KEY).await?;
    pages::click_button(client, "Sign out").await?;
    pages::wait_for_text(client, "Sign in").await?;
    // The screen changed under the focus: it goes to the key field, not to nothing.
    pages::wait_for_focus(client, "input#signin-key").await?;
    // Signed in on a page's own address: that page, its heading focused.
    sign_in(client, &format!("{}/tls-edges", server.url()), ADMIN_KEY).await?;
    pages::wait_for_text(client, "Pick an edge").await?;
    pages::wait_for_focus(client, "h1").await?;
    assert_eq!(client.title().await?, "TLS edges · Tunnel Console");
    pages::click_button(client, "Sign out").await?;
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
    browser.close().await?;
    Ok(())
}

#[tokio::test]
async fn sign_in_says_what_is_wrong_and_on_which_field() -> anyhow::Result<()> {
    let server = Server::start(&[])?;
    let browser = Browser::start().await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    pages::wait_for_text(client, "Sign in").await?;
    pages::fill(client, "API key", ADMIN_KEY).await?;

    // Not a URL the console can call: refused before any request, focus on the base URL.
    let cases = [
        ("javascript:alert(1)", "http://"),
        (
            &*format!("http://127.0.0.1:{}/api", tunnel_e2e::harness::free_port()?),
            "Cannot reach the server",
        ),
        // The console's own pages answer there, not the API.
        (&*server.url(), "not as the Tunnel Management API"),
    ];
    for (base, expected) in cases {
        pages::fill(client, "API base URL", base).await?;
        pages::click_button(client, "Sign in").await?;
        pages::wait_for_text(client, expected).await?;
        assert!(
            pages::focused(client).await?.contains("#signin-base"),
            "focus on the base URL field for {base}: {}",
            pages::focused(client).await?
        );
        assert!(!pages::has_button(client, "Sign out").await?, "{base}");
        assert!(!pages::page_text(client).await?.contains("TypeError"));
    }
    browser.screenshot("sign-in-not-the-api").await?;

    // A refused key: said on the key field, which gets focus.
    pages::fill(client, "API base URL", "/api").await?;
    pages::fill(
        client,
        "API key",
        "wrongKey0000000000000000000_notTheSecretAtAllNotIt0000",
    )
    .await?;
    pages::click_button(client, "Sign in").await?;
    pages::wait_for_text(client, "The API refused this key").await?;
    assert!(pages::focused(client).await?.contains("#signin-key"));
    assert!(!pages::has_button(client, "Sign out").await?);
    browser.close().await?;
    Ok(())
}

/// "Sign out" leaves the browser, not one tab: another tab of the console, signed in with its
/// own copy of the key, signs out too and says why.
#[tokio::test]
async fn signing_out_in_one_tab_signs_out_the_others() -> anyhow::Result<()> {
    let server = Server::start(&[])?;
    let browser = Browser::start().await?;
    let client = &browser.client;
    sign_in(client, &server.url(), ADMIN_KEY).await?;
    pages::wait_for_text(client, "Sign out").await?;
    let first = client.window().await?;
    // A second tab, signed in with its own copy of the key (a tab's sessionStorage).
    let second = client.new_window(true).await?;
    client.switch_to_window(second.handle.clone()).await?;
    sign_in(client, &format!("{}/ssh-cas", server.url()), ADMIN_KEY).await?;
    pages::wait_for_text(client, "Sign out").await?;

    client.switch_to_window(first).await?;
    pages::click_button(client, "Sign out").await?;
    pages::wait_for_text(client, "removed from this browser").await?;
    client.switch_to_window(second.handle.clone()).await?;
    pages::wait_for_text(client, "Signed out in another tab").await?;
    pages::field(client, "API key").await?;
    // A reload of that tab does not bring the key back either.
    client.refresh().await?;
    pages::wait_for_text(client, "Sign in").await?;
    assert!(!pages::has_button(client, "Sign out").await?);
    browser.close().await?;
    Ok(())
}
