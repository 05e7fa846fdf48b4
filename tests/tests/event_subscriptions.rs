//! Flow 6: event subscriptions: create with two sources (picker and free entry) and a webhook
//! destination; edit only the description and see sources and destinations unchanged; delete.
//! A subscription without sources is created as it is, with a note that nothing is delivered;
//! the catalogue picker, walked with the keyboard, adds only what Enter picks.

use fantoccini::key::Key;
use serde_json::json;
use tunnel_e2e::api::id;
use tunnel_e2e::harness::Stack;
use tunnel_e2e::pages::{self, event_subscriptions};

/// The label of the field for a new webhook destination's URL.
const WEBHOOK_URL: &str = "New webhook destination URL";

#[tokio::test]
async fn create_edit_description_only_and_delete() -> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);

    event_subscriptions::start_new(client).await?;
    pages::fill(client, "Description", "e2e subscription").await?;
    event_subscriptions::pick_source(client, "tls_edge_created.v0").await?;
    event_subscriptions::type_source(client, "credential_created.v0").await?;
    pages::click_button(client, "Add").await?;
    event_subscriptions::add_webhook(client, "https://hooks.example.com/e2e").await?;
    browser.screenshot("event-subscription-new").await?;
    pages::click_button(client, "Create subscription").await?;
    pages::wait_for_text(client, "Only the fields you change are sent").await?;

    let (_, list) = api.get("/event_subscriptions").await?;
    let created = list["event_subscriptions"][0].clone();
    let id = id(&created);
    let types: Vec<_> = created["sources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| s["type"].clone())
        .collect();
    assert_eq!(
        types,
        [json!("tls_edge_created.v0"), json!("credential_created.v0")]
    );
    assert_eq!(created["destinations"].as_array().map(Vec::len), Some(1));

    pages::fill(client, "Description", "e2e subscription (renamed)").await?;
    pages::click_button(client, "Save changes").await?;
    pages::wait_for_text(client, "Event subscription saved.").await?;
    browser.screenshot("event-subscription-detail").await?;
    let (_, fetched) = api.get(&format!("/event_subscriptions/{id}")).await?;
    assert_eq!(fetched["description"], "e2e subscription (renamed)");
    assert_eq!(fetched["sources"], created["sources"], "sources unchanged");
    assert_eq!(
        fetched["destinations"], created["destinations"],
        "destinations unchanged"
    );

    pages::click_button(client, "Delete").await?;
    pages::click_in_dialog(client, "Delete subscription").await?;
    pages::wait_for_text(client, "No event subscriptions yet").await?;
    let (status, _) = api.get(&format!("/event_subscriptions/{id}")).await?;
    assert_eq!(status, 404);
    browser.close().await?;
    Ok(())
}

#[tokio::test]
async fn enter_in_the_webhook_field_adds_the_webhook_and_nothing_typed_is_dropped()
-> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);
    event_subscriptions::start_new(client).await?;
    pages::fill(client, "Description", "enter test").await?;
    event_subscriptions::pick_source(client, "credential_created.v0").await?;

    // Enter in the URL field adds the destination; the subscription is not submitted.
    pages::fill(client, WEBHOOK_URL, "https://hooks.example.com/enter").await?;
    pages::press(client, fantoccini::key::Key::Enter).await?;
    pages::wait_for_text(client, "created and selected").await?;
    event_subscriptions::close_secret_dialog(client).await?;
    let subscriptions = api.count("/event_subscriptions", "event_subscriptions");
    assert_eq!(subscriptions.await?, Some(0), "nothing was submitted");
    assert_eq!(pages::value_of(client, WEBHOOK_URL).await?, "");

    // A URL typed but not added holds the save, with a message on that field. Typed straight
    // into the field the secret's dialog gave focus back to, as a keyboard user does.
    pages::fill(client, WEBHOOK_URL, "https://hooks.example.com/typed").await?;
    pages::click_button(client, "Create subscription").await?;
    pages::wait_for_text(client, "or clear the field, before saving").await?;
    assert!(pages::focused(client).await?.contains("#webhook-url"));
    let subscriptions = api.count("/event_subscriptions", "event_subscriptions");
    assert_eq!(subscriptions.await?, Some(0), "nothing was submitted");
    assert_eq!(
        pages::value_of(client, WEBHOOK_URL).await?,
        "https://hooks.example.com/typed",
        "what was typed is still there"
    );

    // Cleared (as a user does: select all, delete), the subscription is created with the
    // destination added by Enter.
    pages::field(client, WEBHOOK_URL).await?.click().await?;
    pages::press(client, fantoccini::key::Key::Control + "a").await?;
    pages::press(client, fantoccini::key::Key::Backspace).await?;
    pages::click_button(client, "Create subscription").await?;
    pages::wait_for_text(client, "Only the fields you change are sent").await?;
    let (_, subs) = api.get("/event_subscriptions").await?;
    assert_eq!(
        subs["event_subscriptions"][0]["destinations"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    browser.close().await?;
    Ok(())
}

/// How many event types the form's sources list holds.
async fn chips(client: &fantoccini::Client) -> anyhow::Result<usize> {
    let n = client
        .execute(
            "return document.querySelectorAll('.sources .chip').length;",
            vec![],
        )
        .await?;
    Ok(n.as_u64().unwrap_or(0) as usize)
}

#[tokio::test]
async fn a_subscription_without_sources_is_created_with_a_note() -> anyhow::Result<()> {
    const NOTE: &str = "No event types yet: nothing is delivered until you add one.";
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);
    event_subscriptions::start_new(client).await?;
    // The keyboard walks the catalogue without adding what it passes; Enter adds the one chosen,
    // and removing it (the last chip) leaves the focus on the picker.
    client
        .execute("document.getElementById('source-picker').focus();", vec![])
        .await?;
    pages::press(client, Key::Down).await?;
    pages::press(client, Key::Down).await?;
    assert_eq!(chips(client).await?, 0, "nothing added by walking");
    pages::press(client, Key::Enter).await?;
    assert_eq!(chips(client).await?, 1, "Enter adds the type chosen");
    pages::click_button(client, "×").await?;
    assert_eq!(chips(client).await?, 0);
    pages::wait_for_focus(client, "select#source-picker").await?;
    pages::fill(client, "Description", "no sources yet").await?;
    // The form says so calmly and does not hold the save.
    pages::wait_for_text(client, NOTE).await?;
    pages::click_button(client, "Create subscription").await?;
    pages::wait_for_text(client, "Only the fields you change are sent").await?;
    let (_, list) = api.get("/event_subscriptions").await?;
    let created = &list["event_subscriptions"][0];
    assert_eq!(created["description"], "no sources yet");
    assert_eq!(created["sources"], json!([]));
    // The detail page says it too (once in the properties, once in the edit form).
    let text = pages::page_text(client).await?;
    assert_eq!(text.matches(NOTE).count(), 2, "{text}");
    browser.screenshot("event-subscription-no-sources").await?;
    browser.close().await?;
    Ok(())
}
