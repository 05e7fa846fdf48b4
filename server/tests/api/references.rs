//! References between resources (`docs/api/README.md`), re-checked by the store inside its
//! write transaction: a destination or backend deleted after the handler's check, or another
//! account's, is a 400 naming the field, never a 500, and nothing is half-written.

use crate::common::TestApp;
use axum::response::IntoResponse as _;
use http_body_util::BodyExt as _;
use serde_json::json;
use tunnel_core::errors::ErrorBody;
use tunnel_core::ids::{IdKind, make_id};
use tunnel_core::resources::backend::TunnelGroupBackend;
use tunnel_core::resources::event_destination::EventDestination;
use tunnel_core::resources::event_subscription::{EventSubscription, EventSubscriptionList};
use tunnel_core::resources::tls_edge::TlsEdge;
use tunnel_server::error::ApiError;
use tunnel_server::store::{Audit, Cause, Record, ReferenceError};

/// How these direct store calls are recorded: by the system, with an empty object.
fn audit<R: Record>() -> Audit<'static, R> {
    let cause: &'static Cause = Box::leak(Box::new(Cause::system()));
    Audit::new(cause, |_| json!({}))
}

/// The wire form of an error, as a handler would answer it.
async fn wire(error: impl Into<ApiError>) -> (u16, ErrorBody) {
    let response = error.into().into_response();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test]
async fn a_destination_deleted_after_the_check_is_a_400_not_a_500() {
    let app = TestApp::new().await;
    let store = &app.state.store;
    // The handler's check passed, then the destination went away: the store's own check, in
    // its write transaction, must still catch it (the foreign key alone made it a 500).
    let gone = make_id(IdKind::EventDestination, 1, [1; 14]);
    let ed: EventDestination = app
        .created(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://e.example/h"}}}),
        )
        .await;
    let kept = ed.id;
    let err = store
        .create_subscription(
            &app.account_id,
            "",
            "",
            &[],
            &[kept.clone(), gone.clone()],
            &audit(),
        )
        .await
        .expect_err("missing destination");
    assert!(
        matches!(&err, ReferenceError::Missing { field, .. } if field == "destination_ids[1]"),
        "{err:?}"
    );
    let (status, body) = wire(err).await;
    assert_eq!(status, 400);
    assert_eq!(body.error_code, "ERR_TUNNEL_121");
    assert_eq!(body.details.field.as_deref(), Some("destination_ids[1]"));
    // Nothing half-written: no subscription was created.
    let list: EventSubscriptionList = app.get("/event_subscriptions").send(&app).await.body();
    assert!(list.event_subscriptions.is_empty());

    let sub = store
        .create_subscription(
            &app.account_id,
            "",
            "",
            &[],
            std::slice::from_ref(&kept),
            &audit(),
        )
        .await
        .unwrap();
    let err = store
        .update_subscription(
            &app.account_id,
            &sub.id,
            tunnel_server::store::SubscriptionChanges {
                description: Some("changed".into()),
                metadata: None,
                sources: None,
                destination_ids: Some(vec![gone.clone()]),
            },
            &audit(),
        )
        .await
        .expect_err("missing destination");
    let (status, body) = wire(err).await;
    assert_eq!(
        (status, body.details.field.as_deref()),
        (400, Some("destination_ids[0]"))
    );
    // Rolled back: the old destinations and description stay.
    let read: EventSubscription = app
        .get(&format!("/event_subscriptions/{}", sub.id))
        .send(&app)
        .await
        .body();
    assert_eq!(read.destinations[0].id, kept);
    assert_eq!(read.description, "");
    // Another account's destination is not a reference either.
    let err = store
        .create_subscription(&app.other_account_id, "", "", &[], &[kept], &audit())
        .await
        .expect_err("another account's destination");
    assert_eq!(wire(err).await.0, 400);
}

#[tokio::test]
async fn a_backend_deleted_after_the_check_is_a_400_not_a_500() {
    let app = TestApp::new().await;
    let edge: TlsEdge = app
        .created("/edges/tls", json!({"hostports": ["app.example.com:443"]}))
        .await;
    let eid = edge.id.as_str();
    let gone = make_id(IdKind::TunnelGroupBackend, 1, [1; 14]);
    let err = app
        .state
        .store
        .set_tls_edge_backend(
            &app.account_id,
            eid,
            Some((&gone, true)),
            "backend_id",
            &audit(),
        )
        .await
        .expect_err("missing backend");
    let (status, body) = wire(err).await;
    assert_eq!(status, 400);
    assert_eq!(body.error_code, "ERR_TUNNEL_121");
    assert_eq!(body.details.field.as_deref(), Some("backend_id"));
    // A backend of another account passes the foreign key, but is no reference of this one.
    let ours: TunnelGroupBackend = app.created("/backends/tunnel_group", json!({})).await;
    let their_edge = app
        .post("/edges/tls", json!({"hostports": ["b.example.com:443"]}))
        .key(&app.other_key)
        .send(&app)
        .await;
    assert_eq!(their_edge.status, 201, "{}", their_edge.text);
    let r = app
        .put(
            &format!("/edges/tls/{}/backend", their_edge.body::<TlsEdge>().id),
            json!({"backend_id": ours.id}),
        )
        .key(&app.other_key)
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_121", "backend_id");
}
