//! Event subscriptions (`docs/api/event_subscriptions.md`): create with sources and
//! destinations, each source's own URI, partial updates that leave the rest unchanged, a
//! destination in use refusing deletion, unknown event types and destinations that are not the
//! account's, and subscriptions without sources (valid: they deliver nothing).

use crate::common::{BASE, TestApp};
use crate::support::destination;
use serde_json::json;
use tunnel_core::ids::{IdKind, make_id};
use tunnel_core::resources::Ref;
use tunnel_core::resources::event_destination::EventDestination;
use tunnel_core::resources::event_subscription::{
    EventSource, EventSubscription, EventSubscriptionList,
};

#[tokio::test]
async fn event_subscription_crud_and_partial_updates() {
    let app = TestApp::new().await;
    let d1 = destination(&app).await;
    let d2 = destination(&app).await;
    let sub: EventSubscription = app
        .created(
            "/event_subscriptions",
            json!({"description": "audit", "metadata": "x", "sources": [{"type": "ssh_certificate_authority_created.v0"}, {"type": "credential_created.v0"}], "destination_ids": [d1]}),
        )
        .await;
    let id = sub.id.clone();
    assert!(id.starts_with("esb_"));
    assert_eq!(sub.uri, format!("{BASE}/event_subscriptions/{id}"));
    let source = |event_type: &str| EventSource {
        event_type: event_type.to_owned(),
        uri: format!("{BASE}/event_subscriptions/{id}/sources/{event_type}"),
    };
    assert_eq!(
        sub.sources,
        [
            source("ssh_certificate_authority_created.v0"),
            source("credential_created.v0")
        ]
    );
    assert_eq!(
        sub.destinations,
        [Ref {
            id: d1.clone(),
            uri: format!("{BASE}/event_destinations/{d1}")
        }]
    );

    // Each source uri answers.
    let src = app.get(&sub.sources[0].uri).send(&app).await;
    assert_eq!(src.status, 200);
    assert_eq!(src.body::<EventSource>(), sub.sources[0]);
    app.gone(&format!(
        "/event_subscriptions/{id}/sources/tls_edge_created.v0"
    ))
    .await;

    let path = format!("/event_subscriptions/{id}");
    let r: EventSubscription = app
        .patched(&path, json!({"description": "only this"}))
        .await;
    assert_eq!(r.description, "only this");
    assert_eq!(r.metadata, "x");
    assert_eq!(r.sources, sub.sources);
    assert_eq!(r.destinations, sub.destinations);
    let r: EventSubscription = app
        .patched(
            &path,
            json!({"sources": [{"type": "tls_edge_created.v0"}], "destination_ids": [d2, d1]}),
        )
        .await;
    assert_eq!(r.sources[0].event_type, "tls_edge_created.v0");
    assert_eq!(r.destinations[0].id, d2);
    assert_eq!(r.destinations[1].id, d1);
    assert_eq!(r.description, "only this");
    assert_eq!(
        app.get(&path).send(&app).await.body::<EventSubscription>(),
        r
    );
    let list: EventSubscriptionList = app.get("/event_subscriptions").send(&app).await.body();
    assert_eq!(list.event_subscriptions[0], r);

    // A destination in use cannot be deleted; the answer names what uses it.
    let refused = app
        .delete(&format!("/event_destinations/{d1}"))
        .fails(&app, 409, "ERR_TUNNEL_122")
        .await;
    assert_eq!(
        refused.json["details"]["used_by"],
        json!([r.id]),
        "{}",
        refused.text
    );
    assert!(refused.text.contains(&r.id), "{}", refused.text);
    let r = app
        .patch(&path, json!({"destination_ids": []}))
        .send(&app)
        .await;
    assert!(r.body::<EventSubscription>().destinations.is_empty());
    app.deleted(&format!("/event_destinations/{d1}")).await;
    app.deleted(&path).await;
    app.gone(&path).await;
    app.deleted(&format!("/event_destinations/{d2}")).await;
}

/// A destination used by more subscriptions than the refusal names says how many there are.
#[tokio::test]
async fn a_refusal_names_ten_users_and_counts_them_all() {
    let app = TestApp::new().await;
    let ed = destination(&app).await;
    for _ in 0..12 {
        app.create(
            "/event_subscriptions",
            json!({"sources": [{"type": "credential_created.v0"}], "destination_ids": [ed]}),
        )
        .await;
    }
    let refused = app
        .delete(&format!("/event_destinations/{ed}"))
        .fails(&app, 409, "ERR_TUNNEL_122")
        .await;
    let details = &refused.json["details"];
    assert_eq!(
        details["used_by"].as_array().unwrap().len(),
        10,
        "{}",
        refused.text
    );
    assert_eq!(details["used_by_count"], 12, "{}", refused.text);
    assert!(
        refused.text.contains("12 in all; the first 10"),
        "{}",
        refused.text
    );
}

#[tokio::test]
async fn unknown_event_type_and_bad_destinations() {
    let app = TestApp::new().await;
    let r = app
        .post(
            "/event_subscriptions",
            json!({"sources": [{"type": "made_up.v0"}]}),
        )
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_114", "sources[0].type");
    let r = app
        .post(
            "/event_subscriptions",
            json!({"sources": [{"type": "no version"}]}),
        )
        .send(&app)
        .await;
    assert_eq!(r.field(), "sources[0].type");
    // No sources is not a refusal (it was once "add at least one event type"): see
    // `subscriptions_without_sources_are_valid_everywhere`.
    let r = app.post("/event_subscriptions", json!({})).send(&app).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(r.body::<EventSubscription>().sources.is_empty());
    // A well-formed destination id that does not exist in the account: 400 naming it.
    let missing = make_id(IdKind::EventDestination, 5, [5; 14]);
    let r = app
        .post(
            "/event_subscriptions",
            json!({"sources": [{"type": "credential_created.v0"}], "destination_ids": [missing]}),
        )
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_121", "destination_ids[0]");
    // Another account's destination is as good as missing.
    let theirs: EventDestination = app
        .post(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://other.example/h"}}}),
        )
        .key(&app.other_key)
        .send(&app)
        .await
        .body();
    let r = app
        .post(
            "/event_subscriptions",
            json!({"sources": [{"type": "credential_created.v0"}], "destination_ids": [theirs.id]}),
        )
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_121");
    let r = app
        .post(
            "/event_subscriptions",
            json!({"sources": [{"type": "credential_created.v0", "extra": 1}]}),
        )
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_111", "sources[0].extra");
}

#[tokio::test]
async fn subscriptions_without_sources_are_valid_everywhere() {
    let app = TestApp::new().await;
    let d = destination(&app).await;
    // `sources: []` (what official clients send by default) and no `sources` at all.
    let empty: EventSubscription = app
        .created(
            "/event_subscriptions",
            json!({"description": "later", "sources": [], "destination_ids": [d]}),
        )
        .await;
    assert!(empty.sources.is_empty());
    assert_eq!(empty.destinations[0].id, d);
    let absent: EventSubscription = app
        .created("/event_subscriptions", json!({"description": "bare"}))
        .await;
    assert!(absent.sources.is_empty());
    assert!(absent.destinations.is_empty());

    // A subscription with sources can be emptied, and filled again.
    let full: EventSubscription = app
        .created(
            "/event_subscriptions",
            json!({"sources": [{"type": "credential_created.v0"}]}),
        )
        .await;
    let path = format!("/event_subscriptions/{}", full.id);
    let emptied: EventSubscription = app.patched(&path, json!({"sources": []})).await;
    assert!(emptied.sources.is_empty());
    assert_eq!(app.fetch::<EventSubscription>(&path).await, emptied);
    let none = app
        .get(&format!("{path}/sources/credential_created.v0"))
        .fails(&app, 404, "ERR_TUNNEL_120")
        .await;
    assert_eq!(none.json["details"]["id"], json!(full.id), "{}", none.text);
    assert_eq!(none.json["details"]["type"], "credential_created.v0");

    // The list shows them as they are, newest first.
    let list: EventSubscriptionList = app.fetch("/event_subscriptions").await;
    assert_eq!(list.event_subscriptions, [emptied, absent, empty]);

    let refilled: EventSubscription = app
        .patched(&path, json!({"sources": [{"type": "tls_edge_created.v0"}]}))
        .await;
    assert_eq!(refilled.sources[0].event_type, "tls_edge_created.v0");
}
