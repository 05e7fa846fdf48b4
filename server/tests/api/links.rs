//! Links and the API's description: every URI the API returns answers GET, and the OpenAPI
//! document (`docs/api/README.md`) lists exactly the routes the server has.

use crate::common::{BASE, TestApp, contract};
use crate::support::{destination, session};
use serde_json::{Value, json};
use std::collections::HashSet;
use tunnel_core::resources::backend::TunnelGroupBackend;
use tunnel_core::resources::credential::Credential;
use tunnel_core::resources::tls_edge::TlsEdge;

/// Resources that refer to others by `{id, uri}`: a backend (with `labels`), a TLS edge whose
/// module uses it, and a subscription to a webhook destination.
async fn referring(app: &TestApp, labels: Value) {
    let ed = destination(app).await;
    let backend: TunnelGroupBackend = app
        .created("/backends/tunnel_group", json!({"labels": labels}))
        .await;
    let edge: TlsEdge = app.created("/edges/tls", json!({})).await;
    app.put(
        &format!("/edges/tls/{}/backend", edge.id),
        json!({"backend_id": backend.id}),
    )
    .send(app)
    .await;
    app.create(
        "/event_subscriptions",
        json!({"sources": [{"type": "credential_created.v0"}], "destination_ids": [ed]}),
    )
    .await;
}

#[tokio::test]
async fn every_uri_the_api_returns_answers_get() {
    let app = TestApp::new().await;
    referring(&app, json!({})).await;
    let cred: Credential = app.created("/credentials", json!({})).await;
    let live = session(&app, 1, &app.account_id, &cred.id);
    app.state.sessions().register(live).await.unwrap();
    app.create("/ssh_certificate_authorities", json!({})).await;
    let mut uris = HashSet::new();
    for list in [
        "/credentials",
        "/ssh_certificate_authorities",
        "/tunnel_sessions",
        "/edges/tls",
        "/backends/tunnel_group",
        "/event_destinations",
        "/event_subscriptions",
    ] {
        // Raw JSON on purpose: every `uri` anywhere in the lists, whatever the type.
        collect_uris(&app.get(list).send(&app).await.json, &mut uris);
    }
    assert!(uris.len() >= 15, "{uris:?}");
    for uri in &uris {
        assert!(uri.starts_with(BASE), "absolute: {uri}");
        let r = app.get(uri).send(&app).await;
        assert_eq!(r.status, 200, "GET {uri}: {}", r.text);
    }
}

/// An event keeps its object as the API answered it, but its `uri`s follow the server's base
/// URL of today: one moved since (another `--public-url`) does not send clients to the old one.
#[tokio::test]
async fn an_events_object_links_to_the_base_url_of_today() {
    let app = TestApp::new().await;
    // A label named `uri` is the user's data, left as it is.
    let label = "https://wiki.example.com/users/alice";
    referring(&app, json!({"uri": label})).await;
    app.create("/credentials", json!({})).await;

    // The same data served under another base URL, as after a restart with `--public-url`.
    // It ends in a collection's name, which the API path after it must not be confused with.
    const MOVED: &str = "https://tunnels.example.com/credentials";
    let state = app.state.clone().with(|parts| {
        let mut config = (*parts.config).clone();
        config.public_url = MOVED.to_owned();
        parts.config = std::sync::Arc::new(config);
    });
    let moved = TestApp {
        router: tunnel_server::app(state.clone()),
        state,
        ..app.clone()
    };
    let events = moved.get("/events").send(&moved).await;
    assert_eq!(events.status, 200, "{}", events.text);
    let mut uris = HashSet::new();
    let mut labelled = 0;
    for event in events.json["events"].as_array().unwrap() {
        if event["type"] == "tunnel_group_backend_created.v0" {
            assert_eq!(event["object"]["labels"]["uri"], label);
            labelled += 1;
        }
        collect_uris(&event["object"], &mut uris);
    }
    assert_eq!(labelled, 1);
    // The destination's, the subscription's and its source's, the backend's (also the edge
    // module's), the edge's, the credential's.
    assert!(uris.len() >= 6, "{uris:?}");
    for uri in &uris {
        let path = uri
            .strip_prefix(MOVED)
            .unwrap_or_else(|| panic!("{uri} not on {MOVED}"));
        let r = app.get(&format!("{BASE}{path}")).send(&app).await;
        assert_eq!(r.status, 200, "GET {path}: {}", r.text);
    }
}

fn collect_uris(value: &Value, out: &mut HashSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                // A backend's labels are the user's strings, not links.
                if k == "labels" {
                    continue;
                }
                if (k == "uri" || k == "next_page_uri") && v.is_string() {
                    out.insert(v.as_str().unwrap().to_owned());
                }
                collect_uris(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_uris(v, out)),
        _ => {}
    }
}

/// The OpenAPI document, as anyone fetches it (no key, no version header); raw JSON, as it is
/// not one of the API's wire types.
async fn openapi(app: &TestApp) -> crate::common::Resp {
    app.get("/openapi.json")
        .without("authorization")
        .without("service-version")
        .send(app)
        .await
}

#[tokio::test]
async fn openapi_covers_every_route() {
    let app = TestApp::new().await;
    let r = openapi(&app).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["openapi"], "3.1.0");
    assert_eq!(r.json["servers"][0]["url"], BASE);
    let documented = r.json["paths"].as_object().unwrap();
    assert!(documented.len() >= 14);
    let methods = ["get", "post", "put", "patch", "delete"];
    for (path, ops) in documented {
        let concrete = path.replace("{id}", "x").replace("{event_type}", "y.v0");
        for method in methods {
            let resp = app
                .call(method.to_uppercase().parse().unwrap(), &concrete)
                .json(json!({}))
                .send(&app)
                .await;
            // Raw JSON: a documented route may answer anything but these two errors.
            let code = resp.json["error_code"].as_str().unwrap_or_default();
            if ops.get(method).is_some() {
                assert!(
                    code != "ERR_TUNNEL_130" && code != "ERR_TUNNEL_131",
                    "{method} {path} is documented but not routed: {}",
                    resp.text
                );
            } else {
                assert_eq!(
                    code, "ERR_TUNNEL_131",
                    "{method} {path} is routed but not documented: {}",
                    resp.text
                );
            }
        }
    }
}

/// The document's schemas are valid JSON Schema, and the check every test's API responses go
/// through (`common::contract`) catches a body or a status that breaks the document.
#[test]
fn the_document_is_valid_and_every_response_is_held_to_it() {
    contract::schemas_are_valid();
    let check = |method: &str, status: u16, body: Value, text: &str| {
        let body = body.clone();
        let text = text.to_owned();
        let method = method.to_owned();
        std::panic::catch_unwind(move || {
            contract::check(&method, "/api/credentials/cr_x", status, &body, &text)
        })
        .is_ok()
    };
    let error =
        json!({"error_code": "ERR_TUNNEL_120", "status_code": 404, "msg": "gone", "details": {}});
    assert!(check("GET", 404, error, "…"));
    // A number where the document says string; a status the operation does not answer; a
    // body on a 204.
    let bad = json!({"error_code": 120, "status_code": 404, "msg": "gone", "details": {}});
    assert!(!check("GET", 404, bad, "…"));
    assert!(!check("GET", 418, Value::Null, ""));
    assert!(!check("DELETE", 204, json!({}), "{}"));
}

/// The events list's `type` filter is described as the server checks it: a document-driven
/// client (or fuzzer) sends only types the server accepts.
#[tokio::test]
async fn the_event_type_filter_is_described_as_checked() {
    let app = TestApp::new().await;
    let doc = openapi(&app).await.json;
    let schema = doc["paths"]["/events"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "type")
        .unwrap()["schema"]
        .clone();
    let schema = jsonschema::draft202012::new(&schema).unwrap();
    for (value, accepted) in [
        ("credential_created.v0", true),
        ("x1_y.v123456789", true),
        ("", false),
        ("bogus", false),
        ("Credential_created.v0", false),
        ("credential_created.v", false),
        ("credential_created.v1234567890", false),
    ] {
        assert_eq!(schema.is_valid(&json!(value)), accepted, "{value:?}");
        let status = app
            .get(&format!("/events?type={value}"))
            .send(&app)
            .await
            .status;
        assert_eq!(status == 200, accepted, "{value:?}: {status}");
    }
}
