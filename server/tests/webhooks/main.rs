//! Webhook delivery end to end (docs/api/event_destinations.md): a real HTTP receiver on
//! loopback (`receiver`) that verifies every signature with the `standardwebhooks` crate, an
//! implementation other than the server's. Deliveries, retries and attempts (`delivery`),
//! signing secrets, rotation and PATCH (`secrets`), the address rule (`addresses`), and a
//! delivery surviving a killed server process (`crash`).

#[path = "../common/mod.rs"]
mod common;

mod addresses;
mod crash;
mod delivery;
mod receiver;
mod secrets;

use common::TestApp;
use serde_json::json;
use std::time::Duration;
use tunnel_core::resources::event_destination::{EventDeliveryList, EventDestination};
use tunnel_server::config::Config;

/// An app on the run's database (`common::test_config`) with its delivery worker running: private addresses allowed (the
/// receiver is on loopback), requests timing out after `timeout`, retries `retry_base` apart.
pub async fn app(timeout: Duration, retry_base: Duration) -> TestApp {
    let mut config = common::test_config();
    config.webhooks.allow_private = true;
    config.webhooks.timeout = timeout;
    config.webhooks.retry_base = retry_base;
    started(config).await
}

/// An app of `config` with its delivery worker running.
pub async fn started(config: Config) -> TestApp {
    let app = TestApp::with_config(config).await;
    // Never stopped: the sender is dropped at once.
    let (_, stop) = tokio::sync::watch::channel(false);
    tunnel_server::api::event_destinations::spawn_deliveries(&app.state, stop);
    app
}

/// The quick app most tests use.
pub async fn quick_app() -> TestApp {
    app(Duration::from_secs(5), Duration::from_millis(50)).await
}

/// A destination of the holder of `key` sending to `url`, subscribed to `types`: the
/// destination as created (with its signing secret).
pub async fn hook(app: &TestApp, key: &str, url: &str, types: &[&str]) -> EventDestination {
    let destination: EventDestination = app
        .created_by(
            key,
            "/event_destinations",
            json!({"target": {"webhook": {"url": url}}}),
        )
        .await;
    let sources: Vec<_> = types.iter().map(|t| json!({"type": t})).collect();
    let resp = app
        .post(
            "/event_subscriptions",
            json!({"sources": sources, "destination_ids": [destination.id]}),
        )
        .key(key)
        .send(app)
        .await;
    assert_eq!(resp.status, 201, "{}", resp.text);
    destination
}

/// A receiver answering with `replies` (then 200s), and a destination of the first account's
/// admin sending it `credential_created.v0`: the setup of most tests here.
pub async fn subscribed(
    app: &TestApp,
    replies: &[receiver::Reply],
) -> (receiver::Receiver, EventDestination) {
    let receiver = receiver::Receiver::start(replies).await;
    let url = receiver.url.clone();
    let destination = hook(app, &app.admin_key, &url, &["credential_created.v0"]).await;
    (receiver, destination)
}

/// The deliveries of a destination, as the admin of the first account sees them.
pub async fn deliveries(app: &TestApp, destination_id: &str) -> EventDeliveryList {
    app.fetch(&format!("/event_destinations/{destination_id}/deliveries"))
        .await
}

/// Waits (up to 10 s) until `check` of the destination's deliveries holds; the last list.
pub async fn deliveries_until(
    app: &TestApp,
    destination_id: &str,
    check: impl Fn(&EventDeliveryList) -> bool,
) -> EventDeliveryList {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let list = deliveries(app, destination_id).await;
        if check(&list) {
            return list;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "deliveries never got there: {list:#?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Creates a credential as the holder of `key`: its token.
pub async fn credential(app: &TestApp, key: &str) -> (String, String) {
    let created = app
        .post("/credentials", json!({"description": "hooked"}))
        .key(key)
        .send(app)
        .await;
    assert_eq!(created.status, 201, "{}", created.text);
    (
        created.json["id"].as_str().unwrap().to_owned(),
        created.json["token"].as_str().unwrap().to_owned(),
    )
}
