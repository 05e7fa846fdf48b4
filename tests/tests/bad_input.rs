//! Flow 7: bad input and safety: over-long descriptions in bytes (credentials) and in characters
//! (event subscriptions), an unknown event type, and markup in a description shown as text with
//! no script run; a destination sent without its URL says so at the field.

use serde_json::json;
use tunnel_e2e::api::id;
use tunnel_e2e::harness::Stack;
use tunnel_e2e::pages::{self, credentials, event_subscriptions, lists};

const MARKUP: &str = "<img src=x onerror=alert(1)>";

#[tokio::test]
async fn limits_unknown_types_and_markup() -> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);

    // 128 two-byte characters are 256 bytes: over the credential's byte limit.
    credentials::open_list(client).await?;
    pages::click_button(client, "New credential").await?;
    pages::fill(client, "Description", &"é".repeat(128)).await?;
    pages::wait_for_text(
        client,
        "Description must be at most 255 bytes; it is 256 bytes.",
    )
    .await?;
    browser.screenshot("bad-input-bytes").await?;
    // 127 of them (254 bytes) are fine: the message goes away.
    pages::fill(client, "Description", &"é".repeat(127)).await?;
    pages::eventually("the byte-limit message to go", || async {
        Ok((!pages::page_text(client)
            .await?
            .contains("at most 255 bytes"))
        .then_some(()))
    })
    .await?;

    // Event subscriptions count characters: 256 are too many, 255 two-byte ones are fine.
    event_subscriptions::start_new(client).await?;
    pages::fill(client, "Description", &"é".repeat(256)).await?;
    pages::wait_for_text(
        client,
        "Description must be at most 255 characters; it is 256 characters.",
    )
    .await?;
    // The free entry checks the form as it is typed…
    event_subscriptions::type_source(client, "not an event").await?;
    pages::wait_for_text(client, "is not an event type").await?;
    // …and a well-formed but unknown type is flagged on its chip once added.
    event_subscriptions::type_source(client, "bogus_event.v1").await?;
    pages::click_button(client, "Add").await?;
    pages::wait_for_text(client, "is not a known event type").await?;
    browser.screenshot("bad-input-events").await?;
    pages::fill(client, "Description", &"é".repeat(255)).await?;
    client
        .find(fantoccini::Locator::Css(
            "button[aria-label='Remove bogus_event.v1']",
        ))
        .await?
        .click()
        .await?;
    event_subscriptions::pick_source(client, "tunnel_session_started.v0").await?;
    pages::click_button(client, "Create subscription").await?;
    pages::wait_for_text(client, "Only the fields you change are sent").await?;
    let (_, list) = api.get("/event_subscriptions").await?;
    assert_eq!(
        list["event_subscriptions"][0]["description"],
        "é".repeat(255)
    );

    // Markup in user text is shown as text and never run.
    let created = api
        .create("/credentials", json!({"description": MARKUP}))
        .await?;
    let id = id(&created);
    credentials::open_list(client).await?;
    pages::wait_for_text(client, MARKUP).await?;
    lists::open_row(client, &id).await?;
    pages::wait_for_text(client, "ACL tester").await?;
    assert!(
        pages::page_text(client).await?.contains(MARKUP),
        "the description is shown as text"
    );
    assert!(
        client
            .find(fantoccini::Locator::Css("img[src=x]"))
            .await
            .is_err(),
        "no element was injected"
    );
    assert!(
        client.get_alert_text().await.is_err(),
        "no dialog was raised"
    );
    browser.screenshot("bad-input-markup").await?;
    let (status, _) = api.get(&format!("/credentials/{id}")).await?;
    assert_eq!(status, 200);
    browser.close().await?;
    Ok(())
}

/// A destination sent without its URL says so at the URL field, which takes the focus: Enter in
/// another field is not ignored by a disabled button, and nothing is created.
#[tokio::test]
async fn a_destination_without_its_url_says_so_at_the_field() -> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);
    client
        .goto(&format!("{}/event-destinations/new", stack.server.url()))
        .await?;
    pages::fill(client, "Description", "no url yet").await?;
    // Nothing said before the user tries to send it.
    assert!(
        !pages::page_text(client)
            .await?
            .contains("The webhook url is missing")
    );
    pages::press(client, fantoccini::key::Key::Enter).await?;
    pages::wait_for_text(client, "The webhook url is missing").await?;
    pages::wait_for_focus(client, "input#field-url").await?;
    let (_, list) = api.get("/event_destinations").await?;
    assert_eq!(list["event_destinations"], json!([]));
    Ok(())
}

/// A long value typed into a field is quoted in its message as the server quotes it, 64
/// characters and `…`: a pasted 10 000-character rule once made an error block taller than
/// the screen, pushing the form's button out of sight. A right-to-left override in the value
/// stays inside its quote (the sentence around it reads the right way; checked by the
/// screenshot).
#[tokio::test]
async fn a_long_bad_value_is_quoted_short() -> anyhow::Result<()> {
    let (_stack, browser) = Stack::signed_in(&[]).await?;
    let client = &browser.client;
    credentials::open_list(client).await?;
    pages::click_button(client, "New credential").await?;
    let rule = format!("bind:{} y", "a".repeat(300));
    credentials::set_rule(client, 1, &rule).await?;
    credentials::set_rule(client, 2, "bind:rtl\u{202e}.example.com x").await?;
    pages::wait_for_text(client, "contains whitespace").await?;
    let text = pages::page_text(client).await?;
    assert!(!text.contains(&"a".repeat(100)), "{text}");
    assert!(
        text.contains(&format!("bind:{}…", "a".repeat(59))),
        "{text}"
    );
    browser.screenshot("bad-input-long-rule").await?;
    Ok(())
}
