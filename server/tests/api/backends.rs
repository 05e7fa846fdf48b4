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
    let backend: TunnelGroupBackend = app
        .created(
            "/backends/tunnel_group",
            json!({"description": "pool", "labels": {"env": "prod", "team": "web"}}),
        )
        .await;
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
    assert_eq!(app.delete(&path).send(&app).await.status, 204);
    app.get(&path).send(&app).await.error(404, "ERR_TUNNEL_120");
}
