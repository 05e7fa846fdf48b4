//! Tunnel-group backends (`docs/api/backends.md`): create, get, list and delete on their own.
//! A backend used by a TLS edge's backend module (in use, of the wrong kind, another
//! account's) is tested with the module, in `tls_edges` and `accounts`.

use crate::common::{BASE, TestApp};
use serde_json::json;
use std::collections::BTreeMap;
use tunnel_core::resources::backend::{TunnelGroupBackend, TunnelGroupBackendList};

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
    app.deleted(&path).await;
    app.gone(&path).await;
}
