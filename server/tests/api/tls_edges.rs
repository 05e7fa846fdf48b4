//! TLS edges (`docs/api/tls_edges.md`) and their backend module: set, read, disable, the
//! errors of a backend in use, missing or of the wrong kind, an unknown edge, delete; bad
//! host:ports; the body `id` of the module's PUT (its own accepted, another refused).

use crate::common::{BASE, TestApp};
use serde_json::json;
use tunnel_core::ids::{IdKind, make_id};
use tunnel_core::resources::Ref;
use tunnel_core::resources::backend::TunnelGroupBackend;
use tunnel_core::resources::tls_edge::{TlsEdge, TlsEdgeBackend, TlsEdgeList};

#[tokio::test]
async fn tls_edge_backend_module() {
    let app = TestApp::new().await;
    let backend: TunnelGroupBackend = app
        .created("/backends/tunnel_group", json!({"labels": {"env": "prod"}}))
        .await;
    let bid = backend.id.clone();
    assert!(bid.starts_with("bkdtg_"));
    assert_eq!(backend.uri, format!("{BASE}/backends/tunnel_group/{bid}"));
    let edge: TlsEdge = app
        .created("/edges/tls", json!({"hostports": ["app.example.com:443"]}))
        .await;
    let eid = edge.id.clone();
    assert!(eid.starts_with("edgtls_"));
    assert_eq!(edge.backend, None);
    let module_path = format!("/edges/tls/{eid}/backend");
    app.gone(&module_path).await;

    let r = app
        .put(&module_path, json!({"backend_id": bid}))
        .send(&app)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let module: TlsEdgeBackend = r.body();
    assert_eq!(
        module,
        TlsEdgeBackend {
            enabled: true,
            backend: Ref {
                id: bid.clone(),
                uri: format!("{BASE}/backends/tunnel_group/{bid}")
            }
        }
    );
    assert_eq!(
        app.get(&module_path)
            .send(&app)
            .await
            .body::<TlsEdgeBackend>(),
        module
    );
    assert_eq!(
        app.get(&format!("/edges/tls/{eid}"))
            .send(&app)
            .await
            .body::<TlsEdge>()
            .backend,
        Some(module)
    );
    let r = app
        .put(&module_path, json!({"backend_id": bid, "enabled": false}))
        .send(&app)
        .await;
    assert!(!r.body::<TlsEdgeBackend>().enabled);
    let r = app
        .put(&module_path, json!({"backend_id": bid, "enabled": null}))
        .send(&app)
        .await;
    assert!(r.body::<TlsEdgeBackend>().enabled);

    // Errors: backend in use, missing backend, wrong kind, unknown edge.
    app.delete(&format!("/backends/tunnel_group/{bid}"))
        .fails(&app, 409, "ERR_TUNNEL_122")
        .await;
    let r = app
        .put(
            &module_path,
            json!({"backend_id": make_id(IdKind::TunnelGroupBackend, 1, [1; 14])}),
        )
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_121", "backend_id");
    let r = app
        .put(&module_path, json!({"backend_id": "ed_x"}))
        .send(&app)
        .await;
    r.error(400, "ERR_TUNNEL_114");
    let r = app.put(&module_path, json!({})).send(&app).await;
    assert_eq!(r.field(), "backend_id");
    let unknown_edge = make_id(IdKind::TlsEdge, 1, [1; 14]);
    app.put(
        &format!("/edges/tls/{unknown_edge}/backend"),
        json!({"backend_id": bid}),
    )
    .fails(&app, 404, "ERR_TUNNEL_120")
    .await;

    app.deleted(&module_path).await;
    app.gone(&module_path).await;
    app.delete(&module_path)
        .fails(&app, 404, "ERR_TUNNEL_120")
        .await;
    app.deleted(&format!("/backends/tunnel_group/{bid}")).await;
    let list: TlsEdgeList = app.get("/edges/tls").send(&app).await.body();
    assert_eq!(list.tls_edges[0].id, eid);
    app.deleted(&format!("/edges/tls/{eid}")).await;
    app.gone(&format!("/edges/tls/{eid}")).await;
    let r = app
        .post("/edges/tls", json!({"hostports": ["nope"]}))
        .send(&app)
        .await;
    assert_eq!(r.field(), "hostports[0]");
}

#[tokio::test]
async fn tls_edge_backend_put_accepts_its_own_id_and_refuses_another() {
    let app = TestApp::new().await;
    let backend: TunnelGroupBackend = app.created("/backends/tunnel_group", json!({})).await;
    let edge: TlsEdge = app
        .created("/edges/tls", json!({"hostports": ["app.example.com:443"]}))
        .await;
    let (bid, eid) = (backend.id, edge.id);
    let path = format!("/edges/tls/{eid}/backend");
    let r = app
        .put(&path, json!({"id": eid, "backend_id": bid}))
        .send(&app)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body::<TlsEdgeBackend>().backend.id, bid);
    let other = make_id(IdKind::TlsEdge, 1, [1; 14]);
    let r = app
        .put(&path, json!({"id": other, "backend_id": bid}))
        .send(&app)
        .await;
    r.error_at(400, "ERR_TUNNEL_114", "id");
}
