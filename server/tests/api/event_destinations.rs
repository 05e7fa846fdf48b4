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
