//! TLS edges (`docs/api/tls_edges.md`) and their backend module: set, read, disable, the
//! errors of a backend in use, missing or of the wrong kind, an unknown edge, delete; bad
//! host:ports; the body `id` of the module's PUT (its own accepted, another refused); the
//! shapes of the official client library: the PUT wrapped in `module` answered exactly as the
//! flat one, and a create carrying every module it knows (`null`, or `backend` set). The update
//! of an edge: what is given changes, `hostports` replaced, the module untouched and refused in
//! the body, the errors, another account's edge.

use crate::common::{BASE, TestApp};
use crate::support::updates;
use serde_json::{Value, json};
use tunnel_core::ids::{IdKind, make_id};
use tunnel_core::resources::Ref;
use tunnel_core::resources::backend::TunnelGroupBackend;
use tunnel_core::resources::event::{ActorKind, EventList};
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

    // Errors: backend in use (the answer names the edge), missing backend, wrong kind,
    // unknown edge.
    let refused = app
        .delete(&format!("/backends/tunnel_group/{bid}"))
        .fails(&app, 409, "ERR_TUNNEL_122")
        .await;
    assert_eq!(
        refused.json["details"]["used_by"],
        json!([eid]),
        "{}",
        refused.text
    );
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
    let none = app
        .delete(&module_path)
        .fails(&app, 404, "ERR_TUNNEL_120")
        .await;
    // Named like every 404: the edge's id in `details.id`.
    assert_eq!(none.json["details"]["id"], json!(eid), "{}", none.text);
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

/// Every answer of the module's PUT, for one body `shape` (flat or wrapped): status, code, the
/// field named (with `module.` dropped) and the message (likewise), or the module answered.
async fn put_answers(app: &TestApp, shape: fn(Value) -> Value) -> Vec<(u16, String)> {
    let backend: TunnelGroupBackend = app.created("/backends/tunnel_group", json!({})).await;
    let edge: TlsEdge = app.created("/edges/tls", json!({})).await;
    let (bid, eid) = (backend.id, edge.id);
    let path = format!("/edges/tls/{eid}/backend");
    let missing = make_id(IdKind::TunnelGroupBackend, 1, [1; 14]);
    let unknown_edge = make_id(IdKind::TlsEdge, 1, [1; 14]);
    let cases = [
        (
            path.clone(),
            json!({"id": eid, "backend_id": bid, "enabled": false}),
        ),
        (path.clone(), json!({"backend_id": bid, "enabled": null})),
        (path.clone(), json!({"backend_id": missing})),
        (path.clone(), json!({"backend_id": "ed_x"})),
        (path.clone(), json!({"backend_id": ""})),
        (path.clone(), json!({"id": unknown_edge, "backend_id": bid})),
        (
            format!("/edges/tls/{unknown_edge}/backend"),
            json!({"backend_id": bid}),
        ),
    ];
    let mut answers = Vec::new();
    for (path, body) in cases {
        let r = app.put(&path, shape(body)).send(app).await;
        let answer = if r.status == 200 {
            let module: TlsEdgeBackend = r.body();
            assert_eq!(module.backend.id, bid);
            // The stored module is the one answered.
            assert_eq!(app.fetch::<TlsEdgeBackend>(&path).await, module);
            format!("enabled={}", module.enabled)
        } else {
            let body = r.error_body();
            let unwrap = |s: &str| s.replace("module.", "");
            let field = unwrap(&body.details.field.unwrap_or_default());
            format!("{} {field}: {}", body.error_code, unwrap(&body.msg))
        };
        answers.push((r.status, answer));
    }
    answers
}

fn flat(body: Value) -> Value {
    body
}

/// `{"id", "enabled", "backend_id"}` as the official client sends it: `{"id", "module":
/// {"enabled", "backend_id"}}`.
fn wrapped(mut body: Value) -> Value {
    let map = body.as_object_mut().unwrap();
    let mut module = serde_json::Map::new();
    for field in ["enabled", "backend_id"] {
        if let Some(value) = map.remove(field) {
            module.insert(field.into(), value);
        }
    }
    map.insert("module".into(), Value::Object(module));
    body
}

#[tokio::test]
async fn tls_edge_backend_put_wrapped_in_module_is_answered_like_the_flat_one() {
    let app = TestApp::new().await;
    let flat_answers = put_answers(&app, flat).await;
    let statuses: Vec<u16> = flat_answers.iter().map(|a| a.0).collect();
    assert_eq!(statuses, [200, 200, 400, 400, 400, 400, 404]);
    assert_eq!(flat_answers[0].1, "enabled=false");
    assert_eq!(flat_answers[1].1, "enabled=true");
    assert!(flat_answers[2].1.starts_with("ERR_TUNNEL_121 backend_id:"));
    assert!(flat_answers[3].1.starts_with("ERR_TUNNEL_114 backend_id:"));
    assert!(flat_answers[4].1.starts_with("ERR_TUNNEL_114 backend_id:"));
    assert!(flat_answers[5].1.starts_with("ERR_TUNNEL_114 id:"));
    assert!(flat_answers[6].1.starts_with("ERR_TUNNEL_120"));
    assert_eq!(put_answers(&app, wrapped).await, flat_answers);

    // The wrapped form names its own fields; both forms at once, or an unknown field inside
    // `module`, are refused by name.
    let backend: TunnelGroupBackend = app.created("/backends/tunnel_group", json!({})).await;
    let edge: TlsEdge = app.created("/edges/tls", json!({})).await;
    let path = format!("/edges/tls/{}/backend", edge.id);
    app.put(
        &path,
        json!({"id": edge.id, "module": {"enabled": null, "backend_id": "ed_x"}}),
    )
    .send(&app)
    .await
    .error_at(400, "ERR_TUNNEL_114", "module.backend_id");
    let missing = make_id(IdKind::TunnelGroupBackend, 1, [1; 14]);
    app.put(&path, json!({"module": {"backend_id": missing}}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_121", "module.backend_id");
    let both = json!({"backend_id": backend.id, "module": {"backend_id": backend.id}});
    app.put(&path, both)
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "module");
    let both = json!({"enabled": true, "module": {"backend_id": backend.id}});
    app.put(&path, both)
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "module");
    app.put(&path, json!({"module": {"backend_id": backend.id, "x": 1}}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_111", "module.x");
    app.put(
        &path,
        json!({"module": null, "backend_id": backend.id, "x": 1}),
    )
    .send(&app)
    .await
    .error_at(400, "ERR_TUNNEL_111", "x");
    app.gone(&path).await;
}

/// The create body of the official client library when only description, metadata and
/// hostports are set: every edge module it knows is sent, `null`.
fn official_create(backend: Value) -> Value {
    json!({
        "description": "",
        "metadata": "",
        "hostports": ["app.example.com:443"],
        "backend": backend,
        "ip_restriction": null,
        "mutual_tls": null,
        "tls_termination": null,
        "traffic_policy": null,
    })
}

#[tokio::test]
async fn tls_edge_create_accepts_the_official_clients_modules() {
    let app = TestApp::new().await;
    let edge: TlsEdge = app
        .created("/edges/tls", official_create(Value::Null))
        .await;
    assert_eq!(edge.backend, None);
    assert_eq!(edge.hostports, ["app.example.com:443"]);
    let edge: TlsEdge = app
        .created("/edges/tls", json!({"hostports": null, "backend": null}))
        .await;
    assert!(edge.hostports.is_empty());

    // A module this server does not implement, given a value: 400 naming it (each of them).
    for module in [
        "ip_restriction",
        "mutual_tls",
        "tls_termination",
        "traffic_policy",
    ] {
        let mut body = official_create(Value::Null);
        body[module] = json!({"enabled": true});
        let error =
            app.post("/edges/tls", body)
                .send(&app)
                .await
                .error_at(400, "ERR_TUNNEL_114", module);
        assert!(error.msg.contains("not supported"), "{}", error.msg);
    }
    // A field the official client does not send either stays unknown.
    app.post("/edges/tls", json!({"policy": null}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_111", "policy");

    // `backend`, which this server implements, is applied with the rules of the module's PUT.
    let backend: TunnelGroupBackend = app.created("/backends/tunnel_group", json!({})).await;
    let bid = backend.id.clone();
    let module = json!({"enabled": null, "backend_id": bid});
    let edge: TlsEdge = app.created("/edges/tls", official_create(module)).await;
    let expected = TlsEdgeBackend {
        enabled: true,
        backend: Ref {
            uri: format!("{BASE}/backends/tunnel_group/{bid}"),
            id: bid.clone(),
        },
    };
    assert_eq!(edge.backend.as_ref(), Some(&expected));
    let path = format!("/edges/tls/{}/backend", edge.id);
    assert_eq!(app.fetch::<TlsEdgeBackend>(&path).await, expected);
    app.delete(&format!("/backends/tunnel_group/{bid}"))
        .fails(&app, 409, "ERR_TUNNEL_122")
        .await;
    let edge: TlsEdge = app
        .created(
            "/edges/tls",
            official_create(json!({"enabled": false, "backend_id": bid})),
        )
        .await;
    assert_eq!(edge.backend.map(|m| m.enabled), Some(false));

    // Refused backends create no edge.
    let before = app.fetch::<TlsEdgeList>("/edges/tls").await.tls_edges.len();
    let missing = make_id(IdKind::TunnelGroupBackend, 1, [1; 14]);
    let refused = [
        (json!({"backend_id": missing}), "ERR_TUNNEL_121"),
        (json!({"backend_id": "ed_x"}), "ERR_TUNNEL_114"),
        (json!({"enabled": true}), "ERR_TUNNEL_114"),
    ];
    for (module, code) in refused {
        app.post("/edges/tls", official_create(module))
            .send(&app)
            .await
            .error_at(400, code, "backend.backend_id");
    }
    app.post(
        "/edges/tls",
        official_create(json!({"backend_id": bid, "x": 1})),
    )
    .send(&app)
    .await
    .error_at(400, "ERR_TUNNEL_111", "backend.x");
    let after = app.fetch::<TlsEdgeList>("/edges/tls").await.tls_edges.len();
    assert_eq!(after, before);
}

#[tokio::test]
async fn tls_edge_update_changes_what_is_given_and_replaces_the_hostports() {
    let app = TestApp::new().await;
    let backend: TunnelGroupBackend = app.created("/backends/tunnel_group", json!({})).await;
    let body = json!({
        "description": "shop",
        "metadata": "m",
        "hostports": ["shop.example.com:443", "www.example.com:443"],
        "backend": {"backend_id": backend.id},
    });
    let edge: TlsEdge = app.created("/edges/tls", body).await;
    let path = format!("/edges/tls/{}", edge.id);

    // Only what is given changes; the backend module stays as it is.
    let renamed: TlsEdge = app.patched(&path, json!({"metadata": "m2"})).await;
    assert_eq!(
        renamed,
        TlsEdge {
            metadata: "m2".into(),
            ..edge.clone()
        }
    );
    // Hostports replace the whole list.
    let moved: TlsEdge = app
        .patched(&path, json!({"id": edge.id, "hostports": ["[::1]:8443"]}))
        .await;
    assert_eq!(moved.hostports, ["[::1]:8443"]);
    assert_eq!(
        (moved.description.as_str(), moved.metadata.as_str()),
        ("shop", "m2")
    );
    assert_eq!(moved.backend, edge.backend);
    assert_eq!(app.fetch::<TlsEdge>(&path).await, moved);
    // The official client's body: every field and module, `null` when not set.
    let official = json!({
        "id": edge.id,
        "description": "shop front",
        "metadata": null,
        "hostports": null,
        "backend": null,
        "ip_restriction": null,
        "mutual_tls": null,
        "tls_termination": null,
        "traffic_policy": null,
    });
    let described: TlsEdge = app.patched(&path, official).await;
    assert_eq!(
        described,
        TlsEdge {
            description: "shop front".into(),
            ..moved.clone()
        }
    );
    // A member changes the account's edges like an admin; an empty list is a list.
    let r = app
        .patch(&path, json!({"hostports": []}))
        .key(&app.user_key)
        .send(&app)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.body::<TlsEdge>().hostports.is_empty());

    let (log, changed) = updates(&app, "tls_edge_updated.v0", &edge.id).await;
    assert_eq!(
        changed,
        [
            vec!["metadata"],
            vec!["hostports"],
            vec!["description"],
            vec!["hostports"],
        ]
    );
    let (first, last) = (&log.events[3], &log.events[0]);
    assert_eq!(first.object["metadata"], "m2");
    assert_eq!(first.object["backend"]["backend"]["id"], json!(backend.id));
    assert_eq!(last.object["hostports"], json!([]));
    assert_eq!(last.actor.kind, ActorKind::User);
    assert_eq!(last.actor.id.as_deref(), Some(app.user_id.as_str()));
}

#[tokio::test]
async fn tls_edge_update_refuses_bad_values_modules_and_unknown_edges() {
    let app = TestApp::new().await;
    let edge: TlsEdge = app
        .created("/edges/tls", json!({"hostports": ["app.example.com:443"]}))
        .await;
    let path = format!("/edges/tls/{}", edge.id);

    let error = app
        .patch(
            &path,
            json!({"hostports": ["ok.example.com:443", "nope", "x.example.com:0"]}),
        )
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "hostports[1]");
    let fields: Vec<&str> = error
        .details
        .errors
        .iter()
        .map(|e| e.field.as_str())
        .collect();
    assert_eq!(fields, ["hostports[1]", "hostports[2]"]);
    // The backend module has its own routes: any `backend` but `null` is refused by name,
    // whatever its shape, and so is a module this server does not implement.
    let backend: TunnelGroupBackend = app.created("/backends/tunnel_group", json!({})).await;
    for module in [json!({"backend_id": backend.id}), json!({}), json!(false)] {
        let error = app
            .patch(&path, json!({"backend": module}))
            .send(&app)
            .await
            .error_at(400, "ERR_TUNNEL_114", "backend");
        assert!(error.msg.contains("/backend"), "{}", error.msg);
    }
    for module in [
        "ip_restriction",
        "mutual_tls",
        "tls_termination",
        "traffic_policy",
    ] {
        let error = app
            .patch(
                &path,
                json!({"description": "x", module: {"enabled": true}}),
            )
            .send(&app)
            .await
            .error_at(400, "ERR_TUNNEL_114", module);
        assert!(error.msg.contains("not supported"), "{}", error.msg);
    }
    app.patch(&path, json!({"metadata": "x".repeat(4097)}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "metadata");
    app.patch(&path, json!({"hostports": "app.example.com:443"}))
        .send(&app)
        .await
        .error(400, "ERR_TUNNEL_110");
    app.patch(&path, json!({"policy": null}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_111", "policy");
    let other = make_id(IdKind::TlsEdge, 1, [1; 14]);
    app.patch(&path, json!({"id": other, "metadata": "x"}))
        .send(&app)
        .await
        .error_at(400, "ERR_TUNNEL_114", "id");
    // Refused changes changed nothing, and nothing was recorded.
    assert_eq!(app.fetch::<TlsEdge>(&path).await, edge);

    // An unknown edge, and another account's, are not found; theirs stays as it was.
    app.patch(&format!("/edges/tls/{other}"), json!({"description": "x"}))
        .fails(&app, 404, "ERR_TUNNEL_120")
        .await;
    let theirs: TlsEdge = app
        .created_by(
            &app.other_key,
            "/edges/tls",
            json!({"hostports": ["a.example.com:443"]}),
        )
        .await;
    let their_path = format!("/edges/tls/{}", theirs.id);
    app.patch(&their_path, json!({"hostports": []}))
        .fails(&app, 404, "ERR_TUNNEL_120")
        .await;
    let r = app.get(&their_path).key(&app.other_key).send(&app).await;
    assert_eq!(r.body::<TlsEdge>(), theirs);
    let log: EventList = app.fetch("/events?type=tls_edge_updated.v0").await;
    assert!(log.events.is_empty(), "{:?}", log.events);
}
