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
