//! Flow 6: event subscriptions: create with two sources (picker and free entry) and a webhook
//! destination; edit only the description and see sources and destinations unchanged; delete.

use hyper::Method;
use serde_json::json;
use tunnel_e2e::api::Api;
use tunnel_e2e::harness::{ADMIN_KEY, Browser, Server};
use tunnel_e2e::pages::{self, events, sign_in::sign_in};

#[tokio::test]
async fn create_edit_description_only_and_delete() -> anyhow::Result<()> {
    let server = Server::start(&[])?;
    let api = Api::new(&server.api_url(), ADMIN_KEY);
    let browser = Browser::start().await?;
    let client = &browser.client;
    sign_in(client, &server.url(), ADMIN_KEY).await?;

    events::start_new(client).await?;
    pages::fill(client, "Description", "e2e subscription").await?;
    events::pick_source(client, "ip_policy_created.v0").await?;
    events::type_source(client, "credential_created.v0").await?;
    pages::click_button(client, "Add").await?;
    events::add_webhook(client, "https://hooks.example.com/e2e").await?;
    browser.screenshot("event-subscription-new").await?;
    pages::click_button(client, "Create subscription").await?;
    pages::wait_for_text(client, "Only the fields you change are sent").await?;

    let (_, list) = api.call(Method::GET, "/event_subscriptions", None).await?;
    let created = list["event_subscriptions"][0].clone();
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let types: Vec<_> = created["sources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| s["type"].clone())
        .collect();
    assert_eq!(
        types,
        [
            json!("ip_policy_created.v0"),
            json!("credential_created.v0")
        ]
    );
    assert_eq!(created["destinations"].as_array().map(Vec::len), Some(1));

    pages::fill(client, "Description", "e2e subscription (renamed)").await?;
    pages::click_button(client, "Save changes").await?;
    pages::wait_for_text(client, "Event subscription saved.").await?;
    browser.screenshot("event-subscription-detail").await?;
    let (_, fetched) = api
        .call(Method::GET, &format!("/event_subscriptions/{id}"), None)
        .await?;
    assert_eq!(fetched["description"], "e2e subscription (renamed)");
    assert_eq!(fetched["sources"], created["sources"], "sources unchanged");
    assert_eq!(
        fetched["destinations"], created["destinations"],
        "destinations unchanged"
    );

    pages::click_button(client, "Delete").await?;
    pages::click_in_dialog(client, "Delete subscription").await?;
    pages::wait_for_text(client, "No event subscriptions yet").await?;
    let (status, _) = api
        .call(Method::GET, &format!("/event_subscriptions/{id}"), None)
        .await?;
    assert_eq!(status, 404);
    browser.client.clone().close().await?;
    Ok(())
}
