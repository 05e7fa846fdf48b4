//! Accounts (`docs/accounts.md`): another account's resources are not found, whatever the
//! operation and the kind, and cannot be referenced; they stay unchanged for their owner.

use crate::common::TestApp;
use serde_json::json;
use tunnel_core::ids::{IdKind, make_id};
use tunnel_core::resources::backend::TunnelGroupBackend;
use tunnel_core::resources::credential::{Credential, CredentialList};
use tunnel_core::resources::ssh_ca::SshCertificateAuthority;
use tunnel_core::resources::tls_edge::TlsEdge;

#[tokio::test]
async fn other_accounts_resources_are_not_found() {
    let app = TestApp::new().await;
    let theirs: Credential = app
        .created_by(&app.other_key, "/credentials", json!({}))
        .await;
    let id = theirs.id;
    let path = format!("/credentials/{id}");
    app.gone(&path).await;
    app.patch(&path, json!({"description": "mine now"}))
        .fails(&app, 404, "ERR_TUNNEL_120")
        .await;
    app.delete(&path).fails(&app, 404, "ERR_TUNNEL_120").await;
    let mine: CredentialList = app.fetch("/credentials").await;
    assert!(mine.credentials.is_empty());
    // Still there for its owner, unchanged.
    let r = app.get(&path).key(&app.other_key).send(&app).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body::<Credential>().description, "");
    // Same for the other kinds.
    let ca: SshCertificateAuthority = app
        .created_by(&app.other_key, "/ssh_certificate_authorities", json!({}))
        .await;
    app.gone(&format!("/ssh_certificate_authorities/{}", ca.id))
        .await;
    let edge: TlsEdge = app
        .created_by(&app.other_key, "/edges/tls", json!({}))
        .await;
    let eid = edge.id;
    app.gone(&format!("/edges/tls/{eid}/backend")).await;
    let bk: TunnelGroupBackend = app.created("/backends/tunnel_group", json!({})).await;
    app.put(
        &format!("/edges/tls/{eid}/backend"),
        json!({"backend_id": bk.id}),
    )
    .fails(&app, 404, "ERR_TUNNEL_120")
    .await;
    // And a backend of another account cannot be used by my edge.
    let my_edge: TlsEdge = app.created("/edges/tls", json!({})).await;
    let their_backend: TunnelGroupBackend = app
        .created_by(&app.other_key, "/backends/tunnel_group", json!({}))
        .await;
    app.put(
        &format!("/edges/tls/{}/backend", my_edge.id),
        json!({"backend_id": their_backend.id}),
    )
    .fails(&app, 400, "ERR_TUNNEL_121")
    .await;
    app.gone(&format!(
        "/credentials/{}",
        make_id(IdKind::Credential, 3, [3; 14])
    ))
    .await;
    app.gone("/credentials/garbage").await;
}

/// A user removed by the operator while a server still trusts their key (its cache keeps a
/// checked key up to 10 s): what they create then is refused as having no owner, a 400 on
/// `owner_id`, not a 500, and nothing is written.
#[tokio::test]
async fn a_removed_users_cached_key_creates_nothing() {
    let app = TestApp::new().await;
    let me = app.get("/me").key(&app.user_key).send(&app).await;
    assert_eq!(me.status, 200, "{}", me.text);
    let removed = app
        .state
        .store
        .remove_principal(&app.user_id, None)
        .await
        .unwrap();
    assert!(
        matches!(removed, tunnel_server::store::Removal::Done { .. }),
        "{removed:?}"
    );
    for path in ["/credentials", "/api_keys"] {
        let r = app
            .post(path, json!({}))
            .key(&app.user_key)
            .send(&app)
            .await;
        if r.status == 401 {
            // The cache let the key go already: refused as unknown, which is as good.
            continue;
        }
        r.error_at(400, "ERR_TUNNEL_124", "owner_id");
    }
    let list: CredentialList = app.fetch("/credentials").await;
    assert!(list.credentials.is_empty());
}
