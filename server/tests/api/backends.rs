//! Tunnel-group backends (`docs/api/backends.md`): create, get, list, update and delete on their
//! own. A backend used by a TLS edge's backend module (in use, of the wrong kind, another
//! account's) is tested with the module, in `tls_edges` and `accounts`. A backend's `tunnels`
//! are the live sessions of the registry carrying its labels, also right after an update
//! replaced them.

use crate::common::{BASE, TestApp};
use crate::support::{session, updates};
use serde_json::json;
use std::collections::BTreeMap;
use tunnel_core::acl::Bind;
use tunnel_core::errors::ErrorCode;
use tunnel_core::ids::{IdKind, make_id};
use tunnel_core::resources::Ref;
use tunnel_core::resources::backend::{TunnelGroupBackend, TunnelGroupBackendList};
use tunnel_core::resources::event::{ActorKind, EventList};
use tunnel_server::store::Cause;

#[tokio::test]
async fn backend_create_get_list_delete() {
    let app = TestApp::new().await;
    let body = json!({"description": "pool", "labels": {"env": "prod", "team": "web"}});
    let backend: TunnelGroupBackend = app.created("/backends/tunnel_group", body).await;
    assert!(backend.id.starts_with("bkdtg_"), "{}", backend.id);
    assert_eq!(
        backend.uri,
        format!("{BASE}/backends/tunnel_group/{}", backend.id)
    );
    assert_eq!(backend.description, "pool");
    assert_eq!(
        backend.labels,
        BTreeMap::from([
            ("env".to_owned(), "prod".to_owned()),
            ("team".to_owned(), "web".to_owned())
        ])
    );
    let path = format!("/backends/tunnel_group/{}", backend.id);
    assert_eq!(app.fetch::<TunnelGroupBackend>(&path).await, backend);
    let list: TunnelGroupBackendList = app.fetch("/backends/tunnel_group").await;
    assert_eq!(list.backends, std::slice::from_ref(&backend));
    assert_eq!(list.uri, format!("{BASE}/backends/tunnel_group"));
    assert!(backend.tunnels.is_empty());
    app.deleted(&path).await;
    app.gone(&path).await;
}

/// Registers session `n` of `account`, whose agent bound `binds`; its id.
async fn connect(app: &TestApp, n: u64, account: &str, binds: &[&str]) -> String {
    let mut live = session(app, n, account, "cr_x");
    live.binds = binds.iter().map(|b| Bind::parse(b).unwrap()).collect();
    let id = live.session.id.clone();
    app.state.sessions().register(live).await.unwrap();
    id
}

fn refs(ids: &[&String]) -> Vec<Ref> {
    ids.iter()
        .map(|id| Ref {
            id: (*id).clone(),
            uri: format!("{BASE}/tunnel_sessions/{id}"),
        })
        .collect()
}

#[tokio::test]
async fn backend_tunnels_are_the_live_sessions_with_all_its_labels() {
    let app = TestApp::new().await;
    let account = app.account_id.clone();
    let both = ["env=prod", "team=web"];
    let first = connect(
        &app,
        1,
        &account,
        &["env=prod", "team=web", "app.example.com"],
    )
    .await;
    connect(&app, 2, &account, &["env=prod"]).await;
    let third = connect(&app, 3, &account, &["env=PROD", "team=web"]).await;
    let fourth = connect(&app, 4, &account, &["team=web", "env=prod", "zone=a"]).await;
    connect(&app, 5, &app.other_account_id.clone(), &both).await;
    connect(&app, 6, &account, &[]).await;

    let body = json!({"labels": {"env": "prod", "team": "web"}});
    let backend: TunnelGroupBackend = app.created("/backends/tunnel_group", body).await;
    // Newest first, only the caller's account, labels compared exactly.
    assert_eq!(backend.tunnels, refs(&[&fourth, &first]));
    let path = format!("/backends/tunnel_group/{}", backend.id);
    assert_eq!(app.fetch::<TunnelGroupBackend>(&path).await, backend);
    let list: TunnelGroupBackendList = app.fetch("/backends/tunnel_group").await;
    assert_eq!(list.backends, std::slice::from_ref(&backend));
    // Every `uri` answers a GET: the session's.
    let session: tunnel_core::resources::tunnel_session::TunnelSession =
        app.fetch(&format!("/tunnel_sessions/{first}")).await;
    assert_eq!(session.uri, backend.tunnels[1].uri);

    // Live: a session that leaves is no longer listed, a new one is.
    let (code, cause) = (ErrorCode::CredentialDeleted, Cause::system());
    let sessions = app.state.sessions();
    let gone = sessions.close_here(&account, &fourth, code, "gone".into(), &cause);
    assert!(gone.await);
    let seventh = connect(&app, 7, &account, &both).await;
    let now: TunnelGroupBackend = app.fetch(&path).await;
    assert_eq!(now.tunnels, refs(&[&seventh, &first]));

    // No labels select nothing; one label selects every session carrying it.
    let none: TunnelGroupBackend = app.created("/backends/tunnel_group", json!({})).await;
    assert!(none.tunnels.is_empty());
    let web: TunnelGroupBackend = app
        .created("/backends/tunnel_group", json!({"labels": {"team": "web"}}))
        .await;
    assert_eq!(web.tunnels, refs(&[&seventh, &third, &first]));

    // Another account's backends see only that account's sessions.
    let theirs: TunnelGroupBackend = app
        .created_by(&app.other_key, "/backends/tunnel_group", body_of(&both))
        .await;
    assert_eq!(theirs.tunnels.len(), 1);
}

fn body_of(labels: &[&str]) -> serde_json::Value {
    let labels: serde_json::Map<String, serde_json::Value> = labels
        .iter()
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.to_owned(), json!(v))
        })
        .collect();
    json!({ "labels": labels })
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[tokio::test]
async fn backend_update_changes_what_is_given_and_replaces_the_labels() {
    let app = TestApp::new().await;
    let account = app.account_id.clone();
    let prod = connect(&app, 1, &account, &["env=prod", "zone=a"]).await;
    let body =
        json!({"description": "pool", "metadata": "m", "labels": {"env": "prod", "team": "web"}});
    let backend: TunnelGroupBackend = app.created("/backends/tunnel_group", body).await;
    assert!(backend.tunnels.is_empty());
    let path = format!("/backends/tunnel_group/{}", backend.id);

    // Only what is given changes.
    let renamed: TunnelGroupBackend = app
        .patched(&path, json!({"description": "blue pool"}))
        .await;
    assert_eq!(
        renamed,
        TunnelGroupBackend {
            description: "blue pool".into(),
            ..backend.clone()
        }
    );
    // Labels replace the whole set (`team` goes), and the answer lists the tunnels the new set
    // selects, as a GET does.
    let relabelled: TunnelGroupBackend = app
        .patched(&path, json!({"id": backend.id, "labels": {"env": "prod"}}))
        .await;
    assert_eq!(relabelled.labels, labels(&[("env", "prod")]));
    assert_eq!(
        (
            relabelled.description.as_str(),
            relabelled.metadata.as_str()
        ),
        ("blue pool", "m")
    );
    assert_eq!(relabelled.tunnels, refs(&[&prod]));
    assert_eq!(app.fetch::<TunnelGroupBackend>(&path).await, relabelled);
    // The official client's body: every field, `null` when not set, labels always (`{}`).
    let cleared: TunnelGroupBackend = app
        .patched(
            &path,
            json!({"id": backend.id, "description": null, "metadata": null, "labels": {}}),
        )
        .await;
    assert!(cleared.labels.is_empty() && cleared.tunnels.is_empty());
    assert_eq!(cleared.description, "blue pool");
    // A member changes the account's backends like an admin.
    let r = app
        .patch(
            &path,
            json!({"metadata": "by member", "labels": {"zone": "a"}}),
        )
        .key(&app.user_key)
        .send(&app)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let by_member: TunnelGroupBackend = r.body();
    assert_eq!(by_member.metadata, "by member");
    assert_eq!(by_member.tunnels, refs(&[&prod]));

    // Each change is recorded with the fields it changed and who made it; `tunnels`, live state,
    // is not part of the event.
    let (log, changed) = updates(&app, "tunnel_group_backend_updated.v0", &backend.id).await;
    assert_eq!(
        changed,
        [
            vec!["description"],
            vec!["labels"],
            vec!["labels"],
            vec!["labels", "metadata"],
        ]
    );
    let last = &log.events[0];
    assert_eq!(last.object["labels"], json!({"zone": "a"}));
    assert_eq!(last.object["tunnels"], json!([]));
    assert_eq!(last.actor.kind, ActorKind::User);
    assert_eq!(last.actor.id.as_deref(), Some(app.user_id.as_str()));
    // Repeating the stored values changes nothing and records nothing.
    app.patched::<TunnelGroupBackend>(&path, json!({"labels": {"zone": "a"}}))
        .await;
    let again: EventList = app
        .fetch("/events?type=tunnel_group_backend_updated.v0")
        .await;
    assert_eq!(again.events.len(), 4);
}

#[tokio::test]
async fn backend_update_refuses_bad_values_and_unknown_backends() {
    let app = TestApp::new().await;
    let body = json!({"description": "pool", "labels": {"env": "prod"}});
    let backend: TunnelGroupBackend = app.created("/backends/tunnel_group", body).await;
    let path = format!("/backends/tunnel_group/{}", backend.id);

    // Every bad label is named by its key, with the other bad fields, in one answer.
    let error = app
        .patch(
            &path,
            json!({"description": "x".repeat(256), "labels": {"env": "*", "ok": "yes", "a": "b=c"}}),
        )
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_114");
    let fields: Vec<&str> = error
        .details
        .errors
        .iter()
        .map(|e| e.field.as_str())
        .collect();
    assert_eq!(fields, ["description", "labels.a", "labels.env"]);
    app.patch(&path, json!({"labels": {"env": ""}}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "labels.env");
    app.patch(&path, json!({"labels": ["env=prod"]}))
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_110");
    app.patch(&path, json!({"tunnels": []}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_111", "tunnels");
    let other = make_id(IdKind::TunnelGroupBackend, 1, [1; 14]);
    app.patch(&path, json!({"id": other, "description": "x"}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "id");
    // Refused changes changed nothing.
    assert_eq!(app.fetch::<TunnelGroupBackend>(&path).await, backend);

    // An unknown backend, and another account's, are not found; theirs stays as it was.
    app.patch(
        &format!("/backends/tunnel_group/{other}"),
        json!({"description": "x"}),
    )
    .fails(&app, 404, "ERR_TUNNEL_120")
    .await;
    let theirs: TunnelGroupBackend = app
        .created_by(
            &app.other_key,
            "/backends/tunnel_group",
            json!({"labels": {"env": "prod"}}),
        )
        .await;
    let their_path = format!("/backends/tunnel_group/{}", theirs.id);
    app.patch(&their_path, json!({"labels": {}}))
        .fails(&app, 404, "ERR_TUNNEL_120")
        .await;
    let r = app.get(&their_path).key(&app.other_key).send(&app).await;
    assert_eq!(r.body::<TunnelGroupBackend>(), theirs);
    let log: EventList = app
        .fetch("/events?type=tunnel_group_backend_updated.v0")
        .await;
    assert!(log.events.is_empty(), "{:?}", log.events);
}
