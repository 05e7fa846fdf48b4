//! Event destinations (`docs/api/event_destinations.md`): the minimal endpoints (create, get,
//! list) of webhook destinations, and bad targets and formats.

use crate::common::TestApp;
use serde_json::json;
use tunnel_core::resources::event_destination::{EventDestination, EventDestinationList};

#[tokio::test]
async fn event_destinations_minimal_endpoints() {
    let app = TestApp::new().await;
    let webhook = json!({"target": {"webhook": {"url": "https://example.com/h"}}});
    let d: EventDestination = app.created("/event_destinations", webhook).await;
    assert_eq!(d.format, "json");
    assert!(d.id.starts_with("ed_"));
    // The signing secret is in the create answer only (tests/webhooks covers it in full).
    assert!(d.signing_secret.as_deref().unwrap().starts_with("whsec_"));
    let d = EventDestination {
        signing_secret: None,
        ..d
    };
    assert_eq!(
        app.get(&d.uri).send(&app).await.body::<EventDestination>(),
        d
    );
    let list: EventDestinationList = app.get("/event_destinations").send(&app).await.body();
    assert_eq!(list.event_destinations[0], d);
    let r = app
        .post(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "ftp://x"}}}),
        )
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_114", "target.webhook.url");
    let r = app
        .post(
            "/event_destinations",
            json!({"format": "xml", "target": {}}),
        )
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_114");
}

/// The official Python client's `EventTarget` sends every kind of target it knows, `null` but the
/// one set, and its documentation writes the format `JSON`: both are accepted, on create and
/// update, and answered in this API's own form; a value for another kind is refused by name.
#[tokio::test]
async fn event_destinations_take_the_official_clients_shapes() {
    let app = TestApp::new().await;
    let target = |url: &str| {
        json!({"webhook": {"url": url}, "firehose": null, "kinesis": null,
               "cloudwatch_logs": null, "datadog": null, "azure_logs_ingestion": null})
    };
    let d: EventDestination = app
        .created(
            "/event_destinations",
            json!({"format": "JSON", "target": target("https://example.com/a")}),
        )
        .await;
    assert_eq!(d.format, "json");
    let raw: serde_json::Value = app.get(&d.uri).send(&app).await.body();
    assert_eq!(
        raw["target"],
        json!({"webhook": {"url": "https://example.com/a"}})
    );
    let updated: EventDestination = app
        .patched(&d.uri, json!({"target": target("https://example.com/b")}))
        .await;
    assert_eq!(updated.target.webhook.unwrap().url, "https://example.com/b");
    let r = app
        .post(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://example.com/c"},
                              "datadog": {"api_key": "k"}}}),
        )
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_114", "target.datadog");
}

/// A missing required part, absent, `null` or `{}`, is reported by validation under its name
/// (docs/api/README.md, "Bodies"), never as a body of the wrong shape.
#[tokio::test]
async fn missing_parts_are_named_by_validation() {
    let app = TestApp::new().await;
    for (body, field) in [
        (json!({}), "target"),
        (json!({"target": null}), "target"),
        (json!({"target": {}}), "target"),
        (json!({"target": {"webhook": null}}), "target"),
        (json!({"target": {"webhook": {}}}), "target.webhook.url"),
        (
            json!({"target": {"webhook": {"url": null}}}),
            "target.webhook.url",
        ),
    ] {
        let r = app
            .post("/event_destinations", body.clone())
            .send(&app)
            .await;
        let error = r.error(400, "ERR_TUNNEL_114");
        assert_eq!(
            error.details.field.as_deref(),
            Some(field),
            "{body}: {}",
            r.text
        );
    }
    let sub: serde_json::Value = app.created("/event_subscriptions", json!({})).await;
    let sources = format!(
        "/event_subscriptions/{}/sources",
        sub["id"].as_str().unwrap()
    );
    let r = app.post(&sources, json!({})).send(&app).await;
    let error = r.error(400, "ERR_TUNNEL_114");
    assert_eq!(error.details.field.as_deref(), Some("type"), "{}", r.text);
    assert!(
        error.msg.contains("the event type is missing"),
        "{}",
        r.text
    );
    let r = app
        .post("/event_subscriptions", json!({"sources": [{}]}))
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_114", "sources[0].type");
}
