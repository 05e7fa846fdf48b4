//! Signing secrets: shown by create and rotate only (never on reads, lists or in events); after
//! a rotation both secrets sign, each verifiable on its own; PATCH of a destination.

use crate::receiver::Receiver;
use crate::{credential, hook, quick_app, subscribed};
use serde_json::json;
use std::time::Duration;
use tunnel_core::resources::event_destination::{EventDestination, EventDestinationList};

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn the_signing_secret_is_shown_only_by_create_and_rotate() {
    let app = quick_app().await;
    let created: EventDestination = app
        .created(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://example.com/h"}}}),
        )
        .await;
    let first = created.signing_secret.clone().unwrap();
    assert!(first.starts_with("whsec_"));
    let read: EventDestination = app.fetch(&created.uri).await;
    assert_eq!(read.signing_secret, None);
    let list: EventDestinationList = app.fetch("/event_destinations").await;
    assert_eq!(list.event_destinations[0].signing_secret, None);

    let rotate = format!("/event_destinations/{}/rotate_secret", created.id);
    // An empty body and `{}` are both accepted; anything else is not.
    let resp = app.call(axum::http::Method::POST, &rotate).send(&app).await;
    assert_eq!(resp.status, 200, "{}", resp.text);
    let rotated: EventDestination = resp.body();
    let second = rotated.signing_secret.clone().unwrap();
    assert!(second.starts_with("whsec_") && second != first);
    let again: EventDestination = app.post(&rotate, json!({})).send(&app).await.body();
    let third = again.signing_secret.unwrap();
    app.post(&rotate, json!({"secret": "mine"}))
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_111");
    app.post("/event_destinations/ed_missing/rotate_secret", json!({}))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    let read: EventDestination = app.fetch(&created.uri).await;
    assert_eq!(read.signing_secret, None);

    let events = app.get("/events").send(&app).await;
    let types: Vec<&str> = events.json["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "event_destination_secret_rotated.v0",
            "event_destination_secret_rotated.v0",
            "event_destination_created.v0"
        ]
    );
    for secret in [&first, &second, &third] {
        let key = secret.trim_start_matches("whsec_");
        assert!(!events.text.contains(key), "a secret in the events");
    }
    assert_eq!(
        events.json["events"][0]["object"]["signing_secret"],
        serde_json::Value::Null
    );
    assert_eq!(events.json["events"][0]["object_id"], created.id.as_str());
}

#[tokio::test]
async fn after_a_rotation_both_secrets_sign_each_on_its_own() {
    let app = quick_app().await;
    let (receiver, d) = subscribed(&app, &[]).await;
    let old = d.signing_secret.unwrap();
    let rotated: EventDestination = app
        .post(
            &format!("/event_destinations/{}/rotate_secret", d.id),
            json!({}),
        )
        .send(&app)
        .await
        .body();
    let new = rotated.signing_secret.unwrap();
    credential(&app, &app.admin_key).await;
    let got = receiver.next(WAIT).await;
    let signatures: Vec<&str> = got.header("webhook-signature").split(' ').collect();
    assert_eq!(signatures.len(), 2, "{signatures:?}");
    assert!(got.verifies_with(&old));
    assert!(got.verifies_with(&new));
    // Each signature is one secret's: with only one of them, the other secret fails.
    for (keep, secret) in [(0, &new), (1, &old)] {
        let mut only = got.clone();
        only.headers
            .insert("webhook-signature", signatures[keep].parse().unwrap());
        assert!(only.verifies_with(secret));
        let other = if keep == 0 { &old } else { &new };
        assert!(!only.verifies_with(other));
    }
}

#[tokio::test]
async fn patch_changes_a_destination_and_records_what_changed() {
    let app = quick_app().await;
    let receiver = Receiver::start(&[]).await;
    let d = hook(
        &app,
        &app.admin_key,
        "https://example.com/old",
        &["credential_created.v0"],
    )
    .await;
    let path = format!("/event_destinations/{}", d.id);
    let patched: EventDestination = app
        .patched(
            &path,
            json!({"id": d.id, "description": "moved", "target": {"webhook": {"url": receiver.url}}}),
        )
        .await;
    assert_eq!(patched.description, "moved");
    assert_eq!(patched.target.webhook.as_ref().unwrap().url, receiver.url);
    assert_eq!(patched.signing_secret, None);
    let events = app
        .get("/events?type=event_destination_updated.v0")
        .send(&app)
        .await;
    assert_eq!(
        events.json["events"][0]["changed_fields"],
        json!(["description", "target"])
    );
    // Repeating the values changes nothing and records nothing.
    let _: EventDestination = app.patched(&path, json!({"description": "moved"})).await;
    let again = app
        .get("/events?type=event_destination_updated.v0")
        .send(&app)
        .await;
    assert_eq!(again.json["events"].as_array().unwrap().len(), 1);
    app.patch(&path, json!({"format": "xml"}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "format");
    app.patch(&path, json!({"target": {"webhook": {"url": "ftp://x"}}}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "target.webhook.url");
    app.patch(&path, json!({"id": "ed_other"}))
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_114");
    app.patch("/event_destinations/ed_missing", json!({}))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    // Deliveries go to the new URL, signed with the same secret.
    credential(&app, &app.admin_key).await;
    let got = receiver.next(WAIT).await;
    assert!(got.verifies_with(d.signing_secret.as_deref().unwrap()));
}

#[tokio::test]
async fn signing_secrets_are_never_stored_in_clear() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let mut config = tunnel_server::config::Config::in_memory();
    config.database = tunnel_server::store::DatabaseUrl::SqliteFile(dir.path().join("tunnel.db"));
    let app = crate::started(config).await;
    let d: EventDestination = app
        .created(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://example.com/h"}}}),
        )
        .await;
    let rotated: EventDestination = app
        .post(
            &format!("/event_destinations/{}/rotate_secret", d.id),
            json!({}),
        )
        .send(&app)
        .await
        .body();
    app.state.store.close().await;
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().contains("tunnel.db") {
            files.extend(std::fs::read(&path).unwrap());
        }
    }
    for secret in [d.signing_secret.unwrap(), rotated.signing_secret.unwrap()] {
        let text = secret.trim_start_matches("whsec_");
        let raw = base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap();
        assert!(!files.windows(text.len()).any(|w| w == text.as_bytes()));
        assert!(!files.windows(raw.len()).any(|w| w == raw.as_slice()));
    }
}

#[tokio::test]
async fn a_destination_without_a_secret_gets_one_at_its_first_delivery() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tunnel.db");
    let mut config = tunnel_server::config::Config::in_memory();
    config.database = tunnel_server::store::DatabaseUrl::SqliteFile(path.clone());
    config.webhooks.allow_private = true;
    let app = crate::started(config).await;
    let (receiver, d) = subscribed(&app, &[]).await;
    // As a database written before destinations had secrets: the column is empty. (The test
    // stands in for that older server, so it writes the database directly.)
    let old = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    sqlx::query("UPDATE event_destinations SET secret_sealed = NULL")
        .execute(&old)
        .await
        .unwrap();
    old.close().await;

    credential(&app, &app.admin_key).await;
    let got = receiver.next(WAIT).await;
    let signature = got.header("webhook-signature");
    assert!(
        signature.starts_with("v1,") && !signature.contains(' '),
        "{signature}"
    );
    assert!(!got.verifies_with(d.signing_secret.as_deref().unwrap()));
    // Nobody has seen the generated secret: a rotation gives one to verify with.
    let rotated: EventDestination = app
        .post(
            &format!("/event_destinations/{}/rotate_secret", d.id),
            json!({}),
        )
        .send(&app)
        .await
        .body();
    credential(&app, &app.admin_key).await;
    let got = receiver.next(WAIT).await;
    assert!(got.verifies_with(rotated.signing_secret.as_deref().unwrap()));
    assert_eq!(got.header("webhook-signature").split(' ').count(), 2);
}
