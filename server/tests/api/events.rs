//! The audit log (`docs/api/events.md`): every change through the API records exactly one event,
//! in the change's transaction, with who made it, the request's operation id, the object in its
//! wire form (never a secret) and, for updates, the fields that changed; a rejected request
//! records nothing; `GET /events` pages and filters them, account by account. Sessions and agent
//! commands are recorded by the agent channel: `agent/tests/server_channel/events.rs`.

use crate::common::{Resp, TestApp};
use serde_json::{Value, json};
use tunnel_core::event_types::CATALOGUE;
use tunnel_core::resources::credential::Credential;
use tunnel_core::resources::event::{ActorKind, Event, EventList};
use tunnel_core::resources::event_destination::EventDestination;
use tunnel_core::resources::event_subscription::EventSubscription;

/// The account's events, oldest first (the list is newest first).
async fn events(app: &TestApp) -> Vec<Event> {
    let mut list: EventList = app.fetch("/events").await;
    list.events.reverse();
    list.events
}

fn types(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.event_type.as_str()).collect()
}

fn operation_id(resp: &Resp) -> String {
    resp.headers["operation-id"].to_str().unwrap().to_owned()
}

/// Whether `value` holds `needle` anywhere, as a key or a string.
fn mentions(value: &Value, needle: &str) -> bool {
    match value {
        Value::String(s) => s.contains(needle),
        Value::Array(items) => items.iter().any(|v| mentions(v, needle)),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.contains(needle) || mentions(v, needle)),
        _ => false,
    }
}

#[tokio::test]
async fn every_change_records_one_event_with_its_actor_request_and_object() {
    let app = TestApp::new().await;
    let created = app
        .post(
            "/credentials",
            json!({"description": "ci", "acl": ["bind:a.example.com"]}),
        )
        .send(&app)
        .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let credential: Credential = created.body();
    let token = credential.token.clone().unwrap();
    let path = format!("/credentials/{}", credential.id);
    let updated = app
        .patch(&path, json!({"description": "ci runners"}))
        .send(&app)
        .await;
    assert_eq!(updated.status, 200);
    // Nothing changes: nothing is recorded.
    app.patched::<Credential>(&path, json!({"description": "ci runners"}))
        .await;
    app.deleted(&path).await;

    let log = events(&app).await;
    assert_eq!(
        types(&log),
        [
            "credential_created.v0",
            "credential_updated.v0",
            "credential_deleted.v0"
        ]
    );
    for event in &log {
        assert!(event.id.starts_with("ev_"), "{}", event.id);
        assert_eq!(event.object_id, credential.id);
        assert_eq!(event.actor.kind, ActorKind::User);
        assert_eq!(event.actor.id.as_deref(), Some(app.admin_id.as_str()));
        assert!(
            event
                .actor
                .api_key_id
                .as_deref()
                .unwrap()
                .starts_with("ak_")
        );
        // Never the secret, not even under another name.
        let whole = serde_json::to_value(event).unwrap();
        assert!(!mentions(&whole, &token), "token in {whole}");
        assert_eq!(event.object["token"], Value::Null);
    }
    assert_eq!(log[0].operation_id, Some(operation_id(&created)));
    assert_eq!(log[1].operation_id, Some(operation_id(&updated)));
    assert_eq!(log[0].object["description"], "ci");
    assert_eq!(log[1].object["description"], "ci runners");
    assert_eq!(log[1].changed_fields, ["description"]);
    assert!(log[0].changed_fields.is_empty() && log[2].changed_fields.is_empty());
    // The delete records the object as it was.
    assert_eq!(log[2].object["acl"], json!(["bind:a.example.com"]));
    // Each event answers at its uri.
    let one: Event = app.fetch(&format!("/events/{}", log[1].id)).await;
    assert_eq!(one, log[1]);
    assert!(one.uri.ends_with(&format!("/api/events/{}", one.id)));
}

#[tokio::test]
async fn every_resource_records_its_types_and_only_catalogued_ones() {
    let app = TestApp::new().await;
    let ssh: Value = app
        .create(
            "/ssh_certificate_authorities",
            json!({"private_key_type": "ed25519"}),
        )
        .await;
    let ssh_path = format!(
        "/ssh_certificate_authorities/{}",
        ssh["id"].as_str().unwrap()
    );
    app.patched::<Value>(&ssh_path, json!({"metadata": "m"}))
        .await;
    let backend: Value = app
        .create("/backends/tunnel_group", json!({"labels": {"app": "web"}}))
        .await;
    let other: Value = app.create("/backends/tunnel_group", json!({})).await;
    let edge: Value = app
        .create("/edges/tls", json!({"hostports": ["a.example.com:443"]}))
        .await;
    let backend_path = format!("/backends/tunnel_group/{}", backend["id"].as_str().unwrap());
    app.patched::<Value>(&backend_path, json!({"labels": {"app": "api"}}))
        .await;
    let edge_path = format!("/edges/tls/{}", edge["id"].as_str().unwrap());
    app.patched::<Value>(&edge_path, json!({"hostports": ["b.example.com:443"]}))
        .await;
    let module = format!("/edges/tls/{}/backend", edge["id"].as_str().unwrap());
    for id in [&backend["id"], &other["id"]] {
        let r = app.put(&module, json!({"backend_id": id})).send(&app).await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
    app.deleted(&module).await;
    app.deleted(&edge_path).await;
    app.deleted(&backend_path).await;
    app.deleted(&ssh_path).await;
    let destination: EventDestination = app
        .created(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://hooks.example.com/a"}}}),
        )
        .await;
    let subscription: EventSubscription = app
        .created(
            "/event_subscriptions",
            json!({"sources": [{"type": "credential_created.v0"}], "destination_ids": [destination.id]}),
        )
        .await;
    let sub_path = format!("/event_subscriptions/{}", subscription.id);
    app.patched::<Value>(&sub_path, json!({"description": "audit"}))
        .await;
    app.deleted(&sub_path).await;
    app.deleted(&format!("/event_destinations/{}", destination.id))
        .await;

    let log = events(&app).await;
    assert_eq!(
        types(&log),
        [
            "ssh_certificate_authority_created.v0",
            "ssh_certificate_authority_updated.v0",
            "tunnel_group_backend_created.v0",
            "tunnel_group_backend_created.v0",
            "tls_edge_created.v0",
            "tunnel_group_backend_updated.v0",
            "tls_edge_updated.v0",
            "tls_edge_backend_created.v0",
            "tls_edge_backend_updated.v0",
            "tls_edge_backend_deleted.v0",
            "tls_edge_deleted.v0",
            "tunnel_group_backend_deleted.v0",
            "ssh_certificate_authority_deleted.v0",
            "event_destination_created.v0",
            "event_subscription_created.v0",
            "event_subscription_updated.v0",
            "event_subscription_deleted.v0",
            "event_destination_deleted.v0",
        ]
    );
    for event in &log {
        assert!(
            CATALOGUE.contains(&event.event_type.as_str()),
            "{} is not in the catalogue",
            event.event_type
        );
        // No private key in any event.
        assert!(!mentions(&event.object, "PRIVATE KEY"));
    }
    // Updates carry the object as it is after the change, and what changed.
    assert_eq!(log[5].object["labels"], json!({"app": "api"}));
    assert_eq!(log[5].changed_fields, ["labels"]);
    assert_eq!(log[6].object["hostports"], json!(["b.example.com:443"]));
    assert_eq!(log[6].changed_fields, ["hostports"]);
    // The module's events carry the edge as it is after the change.
    assert_eq!(log[7].object["backend"]["backend"]["id"], backend["id"]);
    assert_eq!(log[8].object["backend"]["backend"]["id"], other["id"]);
    assert_eq!(log[8].changed_fields, ["backend"]);
    assert_eq!(log[9].object["backend"], Value::Null);
    assert_eq!(log[15].changed_fields, ["description"]);

    // Every catalogued type is emitted: here, or by the test named for it.
    let elsewhere = [
        // `every_change_records_one_event_with_its_actor_request_and_object`, above.
        "credential_created.v0",
        "credential_deleted.v0",
        "credential_updated.v0",
        // `api_keys::a_key_is_shown_once_works_at_once_and_is_revoked_by_its_delete`.
        "api_key_created.v0",
        "api_key_deleted.v0",
        "api_key_updated.v0",
        // `server/tests/webhooks/secrets.rs`: rotations, and the PATCH recording what changed.
        "event_destination_secret_rotated.v0",
        "event_destination_updated.v0",
        // `agent/tests/server_channel/events.rs`: sessions and agent commands.
        "tunnel_session_ended.v0",
        "tunnel_session_restart_requested.v0",
        "tunnel_session_started.v0",
        "tunnel_session_stop_requested.v0",
        "tunnel_session_update_requested.v0",
    ];
    let mut emitted: Vec<&str> = types(&log).into_iter().chain(elsewhere).collect();
    emitted.sort_unstable();
    emitted.dedup();
    assert_eq!(emitted, CATALOGUE);
}

#[tokio::test]
async fn sources_added_and_removed_are_updates_of_the_subscription() {
    let app = TestApp::new().await;
    let sub: EventSubscription = app.created("/event_subscriptions", json!({})).await;
    let sources = format!("/event_subscriptions/{}/sources", sub.id);
    let added = app
        .post(
            &sources,
            json!({"type": "credential_created.v0", "subscription_id": sub.id}),
        )
        .send(&app)
        .await;
    assert_eq!(added.status, 201, "{}", added.text);
    assert_eq!(added.json["type"], "credential_created.v0");
    assert_eq!(
        added.json["uri"].as_str().unwrap(),
        format!("http://127.0.0.1:8080/api{sources}/credential_created.v0")
    );
    // Twice is a 400 on `type`; an unknown type too; another subscription's id in the body too.
    app.post(&sources, json!({"type": "credential_created.v0"}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "type");
    app.post(&sources, json!({"type": "nope.v0"}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "type");
    app.post(
        &sources,
        json!({"type": "tls_edge_created.v0", "subscription_id": "esb_other"}),
    )
    .send(&app)
    .await
    .error_at(400, "ERR_TUNNEL_114", "subscription_id");
    app.post(&sources, json!({"type": "tls_edge_created.v0"}))
        .send(&app)
        .await;
    let list = app.get(&sources).send(&app).await;
    assert_eq!(list.status, 200);
    let listed: Vec<&str> = list.json["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["type"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["credential_created.v0", "tls_edge_created.v0"]);
    // PATCH of a source changes nothing and answers it; another type in the body is a 400.
    let one = format!("{sources}/tls_edge_created.v0");
    let patched = app
        .patch(&one, json!({"type": "tls_edge_created.v0"}))
        .send(&app)
        .await;
    assert_eq!(
        (patched.status, &patched.json["type"]),
        (200, &json!("tls_edge_created.v0"))
    );
    app.patch(&one, json!({"type": "credential_created.v0"}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "type");
    // Another subscription's id is a mistake of its own, said as such.
    let other = app
        .patch(&one, json!({"subscription_id": "esb_other"}))
        .send(&app)
        .await;
    other.error_at(400, "ERR_TUNNEL_114", "subscription_id");
    let msg = other.error_body().msg;
    assert!(!msg.contains("type cannot change"), "{msg}");
    app.deleted(&one).await;
    app.delete(&one)
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    app.gone(&one).await;
    // Another account sees no such subscription.
    app.get(&sources)
        .key(&app.other_key)
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");

    let log = events(&app).await;
    assert_eq!(
        types(&log),
        [
            "event_subscription_created.v0",
            "event_subscription_updated.v0",
            "event_subscription_updated.v0",
            "event_subscription_updated.v0"
        ]
    );
    assert!(log[1..].iter().all(|e| e.changed_fields == ["sources"]));
    assert_eq!(log[3].object["sources"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_rejected_request_records_nothing() {
    let app = TestApp::new().await;
    let destination: EventDestination = app
        .created(
            "/event_destinations",
            json!({"target": {"webhook": {"url": "https://hooks.example.com/a"}}}),
        )
        .await;
    app.created::<EventSubscription>(
        "/event_subscriptions",
        json!({"destination_ids": [destination.id]}),
    )
    .await;
    let before = events(&app).await.len();
    // Invalid, unknown reference, not found, in use, wrong owner: each refused, none recorded.
    app.post("/credentials", json!({"acl": ["nonsense"]}))
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_114");
    app.post(
        "/edges/tls",
        json!({"backend": {"backend_id": "bkdtg_2ZZZZZZZZZZZZZZZZZZZZZZZZZZ"}}),
    )
    .send(&app)
    .await;
    app.delete("/credentials/cr_2ZZZZZZZZZZZZZZZZZZZZZZZZZZ")
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    app.delete(&format!("/event_destinations/{}", destination.id))
        .send(&app)
        .await
        .error(409, "ERR_TUNNEL_122");
    app.post("/credentials", json!({"owner_id": app.admin_id}))
        .key(&app.user_key)
        .send(&app)
        .await
        .error(403, "ERR_TUNNEL_123");
    assert_eq!(events(&app).await.len(), before);
}

#[tokio::test]
async fn the_log_is_per_account_paged_and_filtered() {
    let app = TestApp::new().await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let c: Credential = app
            .created("/credentials", json!({"description": format!("c{i}")}))
            .await;
        ids.push(c.id);
    }
    app.patched::<Credential>(
        &format!("/credentials/{}", ids[0]),
        json!({"metadata": "x"}),
    )
    .await;
    let theirs: Credential = app
        .created_by(&app.other_key, "/credentials", json!({}))
        .await;

    // Another account sees only its own, and none of ours by id.
    let their_log: EventList = app
        .get("/events")
        .key(&app.other_key)
        .send(&app)
        .await
        .body();
    assert_eq!(their_log.events.len(), 1);
    assert_eq!(their_log.events[0].object_id, theirs.id);
    let ours = events(&app).await;
    app.get(&format!("/events/{}", ours[0].id))
        .key(&app.other_key)
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");

    // Paging newest first, keeping the filter in next_page_uri.
    let first: EventList = app
        .fetch("/events?type=credential_created.v0&limit=2")
        .await;
    assert_eq!(first.events.len(), 2);
    assert_eq!(first.events[0].object_id, ids[4]);
    let next = first.next_page_uri.clone().unwrap();
    assert!(next.contains("type=credential_created.v0"), "{next}");
    assert!(
        next.contains("limit=2") && next.contains("before_id="),
        "{next}"
    );
    let mut seen: Vec<String> = first.events.iter().map(|e| e.object_id.clone()).collect();
    let mut uri = Some(next);
    while let Some(next) = uri {
        let page: EventList = app
            .fetch(next.strip_prefix("http://127.0.0.1:8080/api").unwrap())
            .await;
        seen.extend(page.events.iter().map(|e| e.object_id.clone()));
        uri = page.next_page_uri;
    }
    let mut expected = ids.clone();
    expected.reverse();
    assert_eq!(seen, expected);

    // By object, by actor, by time.
    let of_first: EventList = app.fetch(&format!("/events?object_id={}", ids[0])).await;
    assert_eq!(
        types(&of_first.events),
        ["credential_updated.v0", "credential_created.v0"]
    );
    let by_user: EventList = app
        .fetch(&format!("/events?actor_id={}", app.user_id))
        .await;
    assert!(by_user.events.is_empty());
    let by_admin: EventList = app
        .fetch(&format!("/events?actor_id={}", app.admin_id))
        .await;
    assert_eq!(by_admin.events.len(), 6);
    // Two filters at once (on SQLite read through the pool rather than on the request's
    // thread): both must match.
    let both: EventList = app
        .fetch(&format!(
            "/events?type=credential_updated.v0&object_id={}",
            ids[0]
        ))
        .await;
    assert_eq!(types(&both.events), ["credential_updated.v0"]);
    let neither: EventList = app
        .fetch(&format!(
            "/events?type=credential_updated.v0&object_id={}",
            ids[1]
        ))
        .await;
    assert!(neither.events.is_empty());
    let future: EventList = app.fetch("/events?after=2999-01-01T00:00:00Z").await;
    assert!(future.events.is_empty());
    let past: EventList = app.fetch("/events?before=2000-01-01T00:00:00Z").await;
    assert!(past.events.is_empty());
    let all: EventList = app
        .fetch("/events?after=2000-01-01T00:00:00Z&before=2999-01-01T00:00:00Z")
        .await;
    assert_eq!(all.events.len(), 6);

    // Bad filters are 400s naming the parameter; unknown parameters too.
    app.get("/events?after=yesterday")
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_116", "after");
    app.get("/events?type=Nope")
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_116", "type");
    app.get("/events?colour=red")
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_115");
}

#[tokio::test]
async fn retention_prunes_old_events() {
    let app = TestApp::new().await;
    app.created::<Credential>("/credentials", json!({})).await;
    assert_eq!(events(&app).await.len(), 1);
    // Times are kept to the second: a second later the event is older than "now".
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let kept =
        tunnel_server::retention::prune(&app.state.store, std::time::Duration::from_secs(3600))
            .await;
    assert_eq!(kept, 0);
    let pruned = tunnel_server::retention::prune(&app.state.store, std::time::Duration::ZERO).await;
    assert_eq!(pruned, 1);
    assert!(events(&app).await.is_empty());
}
