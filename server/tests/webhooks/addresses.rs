//! The address rule (SSRF): without `--allow-private-webhooks`, destinations to loopback,
//! private, link-local and metadata addresses are refused when stored, and a host that resolves
//! to loopback when a delivery is sent gets no request (the attempt says why).

use crate::common::test_config;
use crate::receiver::Receiver;
use crate::{credential, deliveries_until, started};
use serde_json::json;
use std::time::Duration;
use tunnel_core::ids::IdKind;
use tunnel_core::resources::event_destination::EventTarget;
use tunnel_server::store::{Audit, Cause, DestinationRow};

#[tokio::test]
async fn private_targets_are_refused_without_the_flag() {
    let app = started(test_config()).await;
    for url in [
        "http://127.0.0.1/h",
        "http://169.254.169.254/latest/meta-data",
        "http://[::ffff:127.0.0.1]/h",
        "http://[::1]:8080/h",
        "http://10.0.0.8/h",
        "http://192.168.1.1/h",
        "http://[fd00:ec2::254]/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://localhost:9/h",
    ] {
        let resp = app
            .post(
                "/event_destinations",
                json!({"target": {"webhook": {"url": url}}}),
            )
            .send(&app)
            .await;
        let body = resp.error_at(400, "ERR_TUNNEL_117", "target.webhook.url");
        assert!(
            body.msg.contains("--allow-private-webhooks"),
            "{}",
            body.msg
        );
    }
    let ok: serde_json::Value = app
        .create(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://example.com/h"}}}),
        )
        .await;
    let path = format!("/event_destinations/{}", ok["id"].as_str().unwrap());
    app.patch(
        &path,
        json!({"target": {"webhook": {"url": "http://127.0.0.1:1/"}}}),
    )
    .send(&app)
    .await
    .error_at(400, "ERR_TUNNEL_117", "target.webhook.url");
}

/// A URL that is no URL is a validation error (114, with the body's other problems), with or
/// without the flag: the address rule's 117 is for hosts it refuses.
#[tokio::test]
async fn a_malformed_url_is_a_validation_error_with_or_without_the_flag() {
    for allow_private in [false, true] {
        let mut config = test_config();
        config.webhooks.allow_private = allow_private;
        let app = started(config).await;
        let resp = app
            .post(
                "/event_destinations",
                json!({"format": "xml", "target": {"webhook": {"url": "https://example.com:99999/"}}}),
            )
            .send(&app)
            .await;
        let body = resp.error(400, "ERR_TUNNEL_114");
        let fields: Vec<&str> = body
            .details
            .errors
            .iter()
            .map(|e| e.field.as_str())
            .collect();
        assert_eq!(fields, ["format", "target.webhook.url"], "{}", resp.text);
        // One the shared check lets through, which the full parse refuses.
        let resp = app
            .post(
                "/event_destinations",
                json!({"target": {"webhook": {"url": "http://256.1.1.1/h"}}}),
            )
            .send(&app)
            .await;
        let body = resp.error_at(400, "ERR_TUNNEL_114", "target.webhook.url");
        assert!(body.msg.contains("is invalid"), "{}", body.msg);
        let list: serde_json::Value = app.get("/event_destinations").send(&app).await.body();
        assert_eq!(list["event_destinations"], json!([]), "nothing stored");
    }
}

#[tokio::test]
async fn a_host_resolving_to_loopback_at_send_time_gets_nothing() {
    let mut config = test_config();
    config.webhooks.retry_base = Duration::from_millis(50);
    let app = started(config).await;
    let receiver = Receiver::start(&[]).await;
    // Stored past the API's check, as if the name had resolved elsewhere when it was stored.
    let url = receiver.url.replace("127.0.0.1", "localhost");
    let store = &app.state.store;
    let minted = store.mint(IdKind::EventDestination);
    let sealed = app
        .state
        .keys
        .seal(
            tunnel_server::webhooks::sign::new_secret().as_bytes(),
            &minted.0,
        )
        .unwrap();
    let row = DestinationRow::new(minted, "", "", "json".into(), EventTarget::webhook(url));
    let cause = Cause::system();
    let audit = Audit::new(&cause, |_: &DestinationRow| json!({}));
    let row = store
        .insert_destination(&app.account_id, row, &sealed, &audit)
        .await
        .unwrap();
    let resp = app
        .post(
            "/event_subscriptions",
            json!({"sources": [{"type": "credential_created.v0"}], "destination_ids": [row.id]}),
        )
        .send(&app)
        .await;
    assert_eq!(resp.status, 201, "{}", resp.text);
    credential(&app, &app.admin_key).await;
    let list = deliveries_until(&app, &row.id, |l| {
        l.deliveries.first().is_some_and(|d| d.attempts.len() >= 2)
    })
    .await;
    let attempt = list.deliveries[0].attempts.last().unwrap();
    assert_eq!(attempt.status_code, None);
    let error = attempt.error.as_deref().unwrap();
    assert!(
        error.contains("refused") && error.contains("loopback"),
        "{error}"
    );
    receiver.nothing_for(Duration::from_millis(200)).await;
}
