//! Text limits (`docs/limits.md`): descriptions and metadata at their bound and one past it,
//! in bytes for credentials and SSH CAs, in characters for event subscriptions, on create and
//! on update.

use crate::common::TestApp;
use serde_json::{Value, json};

/// The text of `field` in a created resource. Raw JSON: the same loop covers credentials and
/// SSH CAs, whose wire types differ.
fn text<'a>(resource: &'a Value, field: &str) -> &'a str {
    resource[field].as_str().unwrap_or_default()
}

#[tokio::test]
async fn limits_at_their_bound_and_one_past_in_bytes() {
    let app = TestApp::new().await;
    for path in ["/credentials", "/ssh_certificate_authorities"] {
        for (field, max) in [("description", 255usize), ("metadata", 4096)] {
            let ok = app
                .post(path, json!({field: "a".repeat(max)}))
                .send(&app)
                .await;
            assert_eq!(ok.status, 201, "{path} {field} at {max} bytes: {}", ok.text);
            assert_eq!(text(&ok.json, field).len(), max);
            let r = app
                .post(path, json!({field: "a".repeat(max + 1)}))
                .send(&app)
                .await;
            let error = r.error(400, "ERR_TUNNEL_114");
            assert_eq!(r.field(), field);
            assert!(error.msg.contains("bytes"), "{}", r.text);
            // Counted in bytes: two-byte characters reach the bound at half the count.
            let r = app
                .post(path, json!({field: "é".repeat(max / 2 + 1)}))
                .send(&app)
                .await;
            r.error(400, "ERR_TUNNEL_114");
            // And in PATCH too.
            let id = text(&ok.json, "id");
            let r = app
                .patch(&format!("{path}/{id}"), json!({field: "a".repeat(max + 1)}))
                .send(&app)
                .await;
            r.error(400, "ERR_TUNNEL_114");
            assert_eq!(r.field(), field);
        }
    }
}

#[tokio::test]
async fn limits_at_their_bound_and_one_past_in_characters() {
    let app = TestApp::new().await;
    let sources = json!([{"type": "credential_created.v0"}]);
    for (field, max, ch) in [("description", 255usize, "é"), ("metadata", 4096, "😀")] {
        let ok = app
            .post(
                "/event_subscriptions",
                json!({field: ch.repeat(max), "sources": sources}),
            )
            .send(&app)
            .await;
        assert_eq!(ok.status, 201, "{field} at {max} characters: {}", ok.text);
        assert_eq!(text(&ok.json, field).chars().count(), max);
        let r = app
            .post(
                "/event_subscriptions",
                json!({field: ch.repeat(max + 1), "sources": sources}),
            )
            .send(&app)
            .await;
        let error = r.error(400, "ERR_TUNNEL_114");
        assert_eq!(r.field(), field);
        assert!(error.msg.contains("characters"), "{}", r.text);
        let id = text(&ok.json, "id");
        let r = app
            .patch(
                &format!("/event_subscriptions/{id}"),
                json!({field: ch.repeat(max + 1)}),
            )
            .send(&app)
            .await;
        r.error(400, "ERR_TUNNEL_114");
    }
}
