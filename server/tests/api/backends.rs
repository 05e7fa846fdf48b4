//! Tunnel-group backends (`docs/api/backends.md`): create, get, list and delete on their own.
//! A backend used by a TLS edge's backend module (in use, of the wrong kind, another
//! account's) is tested with the module, in `tls_edges` and `accounts`. A backend's `tunnels`
//! are the live sessions of the registry carrying its labels.

use crate::common::{BASE, TestApp};
use crate::support::session;
use serde_json::json;
use std::collections::BTreeMap;
use tunnel_core::acl::Bind;
use tunnel_core::errors::ErrorCode;
use tunnel_core::resources::Ref;
use tunnel_core::resources::backend::{TunnelGroupBackend, TunnelGroupBackendList};
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
