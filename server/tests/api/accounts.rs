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
    let theirs = app
        .post("/credentials", json!({}))
        .key(&app.other_key)
        .send(&app)
        .await;
    let id = theirs.body::<Credential>().id;
    let path = format!("/credentials/{id}");
    app.get(&path).send(&app).await.error(404, "ERR_TUNNEL_120");
    app.patch(&path, json!({"description": "mine now"}))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    app.delete(&path)
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    let mine: CredentialList = app.fetch("/credentials").await;
    assert!(mine.credentials.is_empty());
    // Still there for its owner, unchanged.
    let r = app.get(&path).key(&app.other_key).send(&app).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body::<Credential>().description, "");
    // Same for the other kinds.
    let ca = app
        .post("/ssh_certificate_authorities", json!({}))
        .key(&app.other_key)
        .send(&app)
        .await;
    app.get(&format!(
        "/ssh_certificate_authorities/{}",
        ca.body::<SshCertificateAuthority>().id
    ))
    .send(&app)
    .await
    .error(404, "ERR_TUNNEL_120");
    let edge = app
        .post("/edges/tls", json!({}))
        .key(&app.other_key)
        .send(&app)
        .await;
    let eid = edge.body::<TlsEdge>().id;
    app.get(&format!("/edges/tls/{eid}/backend"))
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
    let bk: TunnelGroupBackend = app.created("/backends/tunnel_group", json!({})).await;
    app.put(
        &format!("/edges/tls/{eid}/backend"),
        json!({"backend_id": bk.id}),
    )
    .send(&app)
    .await
    .error(404, "ERR_TUNNEL_120");
    // And a backend of another account cannot be used by my edge.
    let my_edge: TlsEdge = app.created("/edges/tls", json!({})).await;
    let their_backend = app
        .post("/backends/tunnel_group", json!({}))
        .key(&app.other_key)
        .send(&app)
        .await;
    app.put(
        &format!("/edges/tls/{}/backend", my_edge.id),
        json!({"backend_id": their_backend.body::<TunnelGroupBackend>().id}),
    )
    .send(&app)
    .await
    .error(400, "ERR_TUNNEL_121");
    app.get(&format!(
        "/credentials/{}",
        make_id(IdKind::Credential, 3, [3; 14])
    ))
    .send(&app)
    .await
    .error(404, "ERR_TUNNEL_120");
    app.get("/credentials/garbage")
        .send(&app)
        .await
        .error(404, "ERR_TUNNEL_120");
}
