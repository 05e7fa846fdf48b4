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
