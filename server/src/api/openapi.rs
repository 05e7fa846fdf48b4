//! The OpenAPI 3.1 document of the API, served at `/api/openapi.json` without authentication.
//!
//! Built from the code rather than written by hand: the paths come from `tunnel_core::paths`
//! (the same constants the routers use), and every schema is derived from a sample value of the
//! real wire type of `tunnel-core` (built with struct literals, so a field added to a wire type
//! fails to compile here until the sample has it, and serde names the properties). The
//! `openapi_covers_every_route` test checks, against the router, that every documented
//! operation exists and that every method a documented path answers is documented.

use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use tunnel_core::ErrorCode;
use tunnel_core::paths;
use tunnel_core::resources::Ref;
use tunnel_core::resources::backend::{
    TunnelGroupBackend, TunnelGroupBackendCreate, TunnelGroupBackendList,
};
use tunnel_core::resources::credential::{
    Credential, CredentialCreate, CredentialList, CredentialUpdate,
};
use tunnel_core::resources::event_destination::{
    EventDestination, EventDestinationCreate, EventDestinationList, EventTarget, WebhookTarget,
};
use tunnel_core::resources::event_subscription::{
    EventSource, EventSourceReplace, EventSubscription, EventSubscriptionCreate,
    EventSubscriptionList, EventSubscriptionUpdate,
};
use tunnel_core::resources::ssh_ca::{
    SshCertificateAuthority, SshCertificateAuthorityCreate, SshCertificateAuthorityList,
    SshCertificateAuthorityUpdate,
};
use tunnel_core::resources::tls_edge::{
    TlsEdge, TlsEdgeBackend, TlsEdgeBackendReplace, TlsEdgeCreate, TlsEdgeList,
};
use tunnel_core::resources::tunnel_session::{
    AgentCommandRequest, TunnelSession, TunnelSessionList,
};

pub fn router() -> Router<AppState> {
    Router::new().route("/openapi.json", get(document))
}

async fn document(State(state): State<AppState>) -> Json<Value> {
    Json(build(&state.config.public_url))
}

/// One operation of the API.
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    pub method: &'static str,
    /// Path under `{base_url}`, with `{id}`-style parameters.
    pub path: &'static str,
    pub operation_id: &'static str,
    pub summary: &'static str,
    pub tag: &'static str,
    pub request: Option<&'static str>,
    pub status: u16,
    pub response: Option<&'static str>,
}

// One row of the table below: positional on purpose, so the table reads as a table.
#[allow(clippy::too_many_arguments)]
const fn op(
    method: &'static str,
    path: &'static str,
    operation_id: &'static str,
    summary: &'static str,
    tag: &'static str,
    request: Option<&'static str>,
    status: u16,
    response: Option<&'static str>,
) -> Operation {
    Operation {
        method,
        path,
        operation_id,
        summary,
        tag,
        request,
        status,
        response,
    }
}

const CRED: &str = "/credentials/{id}";
const SSHCA: &str = "/ssh_certificate_authorities/{id}";
const TS: &str = "/tunnel_sessions/{id}";
const TS_RESTART: &str = "/tunnel_sessions/{id}/restart";
const TS_STOP: &str = "/tunnel_sessions/{id}/stop";
const TS_UPDATE: &str = "/tunnel_sessions/{id}/update";
const EDGE: &str = "/edges/tls/{id}";
const EDGE_BACKEND: &str = "/edges/tls/{id}/backend";
const BACKEND: &str = "/backends/tunnel_group/{id}";
const DEST: &str = "/event_destinations/{id}";
const SUB: &str = "/event_subscriptions/{id}";
const SOURCE: &str = "/event_subscriptions/{id}/sources/{event_type}";

/// Every operation of the API. One row each, so kept out of rustfmt's reach.
#[rustfmt::skip]
pub const OPERATIONS: &[Operation] = &[
    op("post", paths::CREDENTIALS, "createCredential", "Create Tunnel Credential (the only response with the token)", "Credentials", Some("CredentialCreate"), 201, Some("Credential")),
    op("get", paths::CREDENTIALS, "listCredentials", "List Tunnel Credentials", "Credentials", None, 200, Some("CredentialList")),
    op("get", CRED, "getCredential", "Get Tunnel Credential", "Credentials", None, 200, Some("Credential")),
    op("patch", CRED, "updateCredential", "Update Tunnel Credential", "Credentials", Some("CredentialUpdate"), 200, Some("Credential")),
    op("delete", CRED, "deleteCredential", "Delete Tunnel Credential (disconnects its sessions)", "Credentials", None, 204, None),
    op("post", paths::SSH_CERTIFICATE_AUTHORITIES, "createSshCertificateAuthority", "Create SSH Certificate Authority", "SSH certificate authorities", Some("SshCertificateAuthorityCreate"), 201, Some("SshCertificateAuthority")),
    op("get", paths::SSH_CERTIFICATE_AUTHORITIES, "listSshCertificateAuthorities", "List SSH Certificate Authorities", "SSH certificate authorities", None, 200, Some("SshCertificateAuthorityList")),
    op("get", SSHCA, "getSshCertificateAuthority", "Get SSH Certificate Authority", "SSH certificate authorities", None, 200, Some("SshCertificateAuthority")),
    op("patch", SSHCA, "updateSshCertificateAuthority", "Update SSH Certificate Authority", "SSH certificate authorities", Some("SshCertificateAuthorityUpdate"), 200, Some("SshCertificateAuthority")),
    op("delete", SSHCA, "deleteSshCertificateAuthority", "Delete SSH Certificate Authority", "SSH certificate authorities", None, 204, None),
    op("get", paths::TUNNEL_SESSIONS, "listTunnelSessions", "List Tunnel Sessions (online only)", "Tunnel sessions", None, 200, Some("TunnelSessionList")),
    op("get", TS, "getTunnelSession", "Get Tunnel Session", "Tunnel sessions", None, 200, Some("TunnelSession")),
    op("post", TS_RESTART, "restartTunnelAgent", "Restart Tunnel Agent (409 on Windows; it reconnects under a new session id)", "Tunnel sessions", Some("AgentCommandRequest"), 204, None),
    op("post", TS_STOP, "stopTunnelAgent", "Stop Tunnel Agent", "Tunnel sessions", Some("AgentCommandRequest"), 204, None),
    op("post", TS_UPDATE, "updateTunnelAgent", "Update Tunnel Agent (never across a major version; 409 with a distinct code per refusal)", "Tunnel sessions", Some("AgentCommandRequest"), 204, None),
    op("post", paths::TLS_EDGES, "createTlsEdge", "Create TLS Edge", "TLS edges", Some("TlsEdgeCreate"), 201, Some("TlsEdge")),
    op("get", paths::TLS_EDGES, "listTlsEdges", "List TLS Edges", "TLS edges", None, 200, Some("TlsEdgeList")),
    op("get", EDGE, "getTlsEdge", "Get TLS Edge", "TLS edges", None, 200, Some("TlsEdge")),
    op("delete", EDGE, "deleteTlsEdge", "Delete TLS Edge", "TLS edges", None, 204, None),
    op("put", EDGE_BACKEND, "replaceTlsEdgeBackend", "Replace TLS Edge Backend Module", "TLS edges", Some("TlsEdgeBackendReplace"), 200, Some("TlsEdgeBackend")),
    op("get", EDGE_BACKEND, "getTlsEdgeBackend", "Get TLS Edge Backend Module", "TLS edges", None, 200, Some("TlsEdgeBackend")),
    op("delete", EDGE_BACKEND, "deleteTlsEdgeBackend", "Delete TLS Edge Backend Module", "TLS edges", None, 204, None),
    op("post", paths::TUNNEL_GROUP_BACKENDS, "createTunnelGroupBackend", "Create Tunnel-Group Backend", "Backends", Some("TunnelGroupBackendCreate"), 201, Some("TunnelGroupBackend")),
    op("get", paths::TUNNEL_GROUP_BACKENDS, "listTunnelGroupBackends", "List Tunnel-Group Backends", "Backends", None, 200, Some("TunnelGroupBackendList")),
    op("get", BACKEND, "getTunnelGroupBackend", "Get Tunnel-Group Backend", "Backends", None, 200, Some("TunnelGroupBackend")),
    op("delete", BACKEND, "deleteTunnelGroupBackend", "Delete Tunnel-Group Backend (409 while a TLS edge uses it)", "Backends", None, 204, None),
    op("post", paths::EVENT_DESTINATIONS, "createEventDestination", "Create Event Destination", "Event destinations", Some("EventDestinationCreate"), 201, Some("EventDestination")),
    op("get", paths::EVENT_DESTINATIONS, "listEventDestinations", "List Event Destinations", "Event destinations", None, 200, Some("EventDestinationList")),
    op("get", DEST, "getEventDestination", "Get Event Destination", "Event destinations", None, 200, Some("EventDestination")),
    op("delete", DEST, "deleteEventDestination", "Delete Event Destination (409 while a subscription uses it)", "Event destinations", None, 204, None),
    op("post", paths::EVENT_SUBSCRIPTIONS, "createEventSubscription", "Create Event Subscription", "Event subscriptions", Some("EventSubscriptionCreate"), 201, Some("EventSubscription")),
    op("get", paths::EVENT_SUBSCRIPTIONS, "listEventSubscriptions", "List Event Subscriptions", "Event subscriptions", None, 200, Some("EventSubscriptionList")),
    op("get", SUB, "getEventSubscription", "Get Event Subscription", "Event subscriptions", None, 200, Some("EventSubscription")),
    op("patch", SUB, "updateEventSubscription", "Update Event Subscription", "Event subscriptions", Some("EventSubscriptionUpdate"), 200, Some("EventSubscription")),
    op("delete", SUB, "deleteEventSubscription", "Delete Event Subscription", "Event subscriptions", None, 204, None),
    op("get", SOURCE, "getEventSource", "Get Event Subscription Source", "Event subscriptions", None, 200, Some("EventSource")),
];

fn to_value<T: Serialize>(v: T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn s(text: &str) -> Option<String> {
    Some(text.to_owned())
}

/// A sample of every wire type, keyed by schema name. Struct literals on purpose (see above).
fn samples() -> BTreeMap<&'static str, Value> {
    let r = || Ref {
        id: "id".into(),
        uri: "uri".into(),
    };
    let credential = Credential {
        id: "cr_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        token: s("token"),
        acl: vec!["bind:example.com".into()],
        owner_id: "usr_".into(),
    };
    let ssh_ca = SshCertificateAuthority {
        id: "sshca_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        public_key: "ssh-ed25519 AAAA".into(),
        key_type: "ed25519".into(),
    };
    let session = TunnelSession {
        id: "ts_".into(),
        uri: "uri".into(),
        agent_version: "3.4.1".into(),
        credential: r(),
        ip: "127.0.0.1".into(),
        metadata: "m".into(),
        os: "linux".into(),
        region: "local".into(),
        started_at: "t".into(),
        transport: "tunnel/v2".into(),
        agent_update_target: s("3.4.2"),
        agent_update_checks: true,
    };
    let module = TlsEdgeBackend {
        enabled: true,
        backend: r(),
    };
    let edge = TlsEdge {
        id: "edgtls_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        hostports: vec!["example.com:443".into()],
        backend: Some(module.clone()),
    };
    let backend = TunnelGroupBackend {
        id: "bkdtg_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        labels: BTreeMap::from([("k".into(), "v".into())]),
    };
    let target = EventTarget {
        webhook: Some(WebhookTarget {
            url: "https://".into(),
        }),
    };
    let destination = EventDestination {
        id: "ed_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        format: "json".into(),
        target: target.clone(),
    };
    let source = EventSource {
        event_type: "ip_policy_created.v0".into(),
        uri: "uri".into(),
    };
    let subscription = EventSubscription {
        id: "esb_".into(),
        uri: "uri".into(),
        created_at: "t".into(),
        description: "d".into(),
        metadata: "m".into(),
        sources: vec![source.clone()],
        destinations: vec![r()],
    };
    let replace = || {
        Some(vec![EventSourceReplace {
            event_type: "ip_policy_created.v0".into(),
        }])
    };
    let next = s("uri");
    BTreeMap::from([
        ("Credential", to_value(&credential)),
        (
            "CredentialList",
            to_value(CredentialList {
                credentials: vec![credential],
                uri: "u".into(),
                next_page_uri: next.clone(),
            }),
        ),
        (
            "CredentialCreate",
            to_value(CredentialCreate {
                description: s("d"),
                metadata: s("m"),
                acl: Some(vec!["*".into()]),
                owner_id: s("usr_"),
            }),
        ),
        (
            "CredentialUpdate",
            to_value(CredentialUpdate {
                id: s("cr_"),
                description: s("d"),
                metadata: s("m"),
                acl: Some(vec!["*".into()]),
            }),
        ),
        ("SshCertificateAuthority", to_value(&ssh_ca)),
        (
            "SshCertificateAuthorityList",
            to_value(SshCertificateAuthorityList {
                ssh_certificate_authorities: vec![ssh_ca],
                uri: "u".into(),
                next_page_uri: next.clone(),
            }),
        ),
        (
            "SshCertificateAuthorityCreate",
            to_value(SshCertificateAuthorityCreate {
                description: s("d"),
                metadata: s("m"),
                private_key_type: s("ecdsa"),
                elliptic_curve: s("p256"),
                key_size: Some(4096),
            }),
        ),
        (
            "SshCertificateAuthorityUpdate",
            to_value(SshCertificateAuthorityUpdate {
                id: s("sshca_"),
                description: s("d"),
                metadata: s("m"),
            }),
        ),
        ("TunnelSession", to_value(&session)),
        (
            "TunnelSessionList",
            to_value(TunnelSessionList {
                tunnel_sessions: vec![session],
                uri: "u".into(),
                next_page_uri: next.clone(),
            }),
        ),
        (
            "AgentCommandRequest",
            to_value(AgentCommandRequest::default()),
        ),
        ("TlsEdge", to_value(&edge)),
        (
            "TlsEdgeList",
            to_value(TlsEdgeList {
                tls_edges: vec![edge],
                uri: "u".into(),
                next_page_uri: next.clone(),
            }),
        ),
        (
            "TlsEdgeCreate",
            to_value(TlsEdgeCreate {
                description: s("d"),
                metadata: s("m"),
                hostports: Some(vec!["example.com:443".into()]),
            }),
        ),
        ("TlsEdgeBackend", to_value(&module)),
        (
            "TlsEdgeBackendReplace",
            to_value(TlsEdgeBackendReplace {
                id: s("edgtls_"),
                enabled: Some(true),
                backend_id: "bkdtg_".into(),
            }),
        ),
        ("TunnelGroupBackend", to_value(&backend)),
        (
            "TunnelGroupBackendList",
            to_value(TunnelGroupBackendList {
                backends: vec![backend],
                uri: "u".into(),
                next_page_uri: next.clone(),
            }),
        ),
        (
            "TunnelGroupBackendCreate",
            to_value(TunnelGroupBackendCreate {
                description: s("d"),
                metadata: s("m"),
                labels: Some(BTreeMap::from([("k".into(), "v".into())])),
            }),
        ),
        ("EventDestination", to_value(&destination)),
        (
            "EventDestinationList",
            to_value(EventDestinationList {
                event_destinations: vec![destination],
                uri: "u".into(),
                next_page_uri: next.clone(),
            }),
        ),
        (
            "EventDestinationCreate",
            to_value(EventDestinationCreate {
                description: s("d"),
                metadata: s("m"),
                format: s("json"),
                target,
            }),
        ),
        ("EventSource", to_value(&source)),
        ("EventSubscription", to_value(&subscription)),
        (
            "EventSubscriptionList",
            to_value(EventSubscriptionList {
                event_subscriptions: vec![subscription],
                uri: "u".into(),
                next_page_uri: next,
            }),
        ),
        (
            "EventSubscriptionCreate",
            to_value(EventSubscriptionCreate {
                metadata: s("m"),
                description: s("d"),
                sources: replace(),
                destination_ids: Some(vec!["ed_".into()]),
            }),
        ),
        (
            "EventSubscriptionUpdate",
            to_value(EventSubscriptionUpdate {
                id: s("esb_"),
                metadata: s("m"),
                description: s("d"),
                sources: replace(),
                destination_ids: Some(vec!["ed_".into()]),
            }),
        ),
        ("ErrorBody", {
            let mut body = tunnel_core::ErrorBody::new(ErrorCode::InvalidField, "msg");
            body.details.operation_id = "op_".into();
            body.details.field = s("field");
            body.details.errors = vec![tunnel_core::FieldError::new("field", "message")];
            to_value(body)
        }),
    ])
}

/// Fields that are `null` in some responses.
const NULLABLE: &[&str] = &["token", "next_page_uri", "backend", "agent_update_target"];

/// Properties beyond the spec (DESIGN §8b): (schema, property, description). Each is marked
/// with `x-extension: true` and described, so a client can tell them from the spec's fields.
const EXTENSIONS: &[(&str, &str, &str)] = &[
    (
        "TunnelSession",
        "agent_update_target",
        "Extension. The version an update of this session would move the agent to: the newest \
         release of its major version known to the server, if newer than agent_version. null when \
         there is none (up to date) or when the agent disabled update checks.",
    ),
    (
        "TunnelSession",
        "agent_update_checks",
        "Extension. Whether the agent accepts updates (false for an agent started with \
         --no-update-check, which refuses every update).",
    ),
];

/// A JSON schema describing `value`'s shape. Responses list every property as required.
fn schema_of(value: &Value, required: bool) -> Value {
    match value {
        Value::Null => json!({}),
        Value::Bool(_) => json!({"type": "boolean"}),
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            json!({"type": "integer", "format": "int64"})
        }
        Value::Number(_) => json!({"type": "number"}),
        Value::String(_) => json!({"type": "string"}),
        Value::Array(items) => {
            json!({"type": "array", "items": items.first().map(|v| schema_of(v, required)).unwrap_or(json!({}))})
        }
        Value::Object(map) => {
            let mut properties = Map::new();
            for (name, v) in map {
                let mut schema = schema_of(v, required);
                if NULLABLE.contains(&name.as_str())
                    && let Some(t) = schema.get("type").cloned()
                {
                    schema["type"] = json!([t, "null"]);
                }
                properties.insert(name.clone(), schema);
            }
            let mut schema = json!({"type": "object", "properties": properties});
            if required {
                schema["required"] = json!(map.keys().collect::<Vec<_>>());
            } else {
                schema["additionalProperties"] = json!(false);
            }
            schema
        }
    }
}

fn is_list(op: &Operation) -> bool {
    op.method == "get" && op.response.is_some_and(|r| r.ends_with("List"))
}

/// The whole document, with `servers` set to `{base_url}`.
pub fn build(base_url: &str) -> Value {
    let samples = samples();
    let mut schemas: Map<String, Value> = samples
        .iter()
        .map(|(name, v)| {
            let request = ["Create", "Update", "Replace", "Request"]
                .iter()
                .any(|suffix| name.ends_with(suffix));
            (name.to_string(), schema_of(v, !request))
        })
        .collect();
    for (schema, property, description) in EXTENSIONS {
        if let Some(p) = schemas
            .get_mut(*schema)
            .and_then(|found| found["properties"].get_mut(*property))
        {
            p["description"] = json!(description);
            p["x-extension"] = json!(true);
        }
    }
    let mut paths_obj = Map::new();
    for op in OPERATIONS {
        let mut parameters = vec![
            json!({"name": "Service-Version", "in": "header", "required": true, "schema": {"type": "string", "enum": ["2"]}}),
        ];
        for name in ["id", "event_type"] {
            if op.path.contains(&format!("{{{name}}}")) {
                parameters.push(json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}));
            }
        }
        if is_list(op) {
            parameters.push(json!({"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": tunnel_core::limits::MAX_PAGE_SIZE, "default": tunnel_core::limits::DEFAULT_PAGE_SIZE}}));
            parameters.push(json!({"name": "before_id", "in": "query", "description": "Id of the last item of the previous page (from next_page_uri).", "schema": {"type": "string"}}));
        }
        let mut responses = Map::new();
        let success = match op.response {
            Some(name) => {
                json!({"description": op.summary, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}}}})
            }
            None => json!({"description": "No content"}),
        };
        responses.insert(op.status.to_string(), success);
        responses.insert(
            "default".into(),
            json!({"description": "Error (see the error codes in info.description)", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}}),
        );
        let mut operation = json!({
            "operationId": op.operation_id,
            "summary": op.summary,
            "tags": [op.tag],
            "parameters": parameters,
            "responses": responses,
        });
        if let Some(name) = op.request {
            operation["requestBody"] = json!({"required": false, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}}}});
        }
        let entry = paths_obj
            .entry(op.path.to_owned())
            .or_insert_with(|| json!({}));
        entry[op.method] = operation;
    }
    let codes: Vec<String> = ErrorCode::ALL
        .iter()
        .map(|c| format!("- `{}` ({}): {}", c.as_str(), c.status(), c.title()))
        .collect();
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Tunnel Management API",
            "version": tunnel_core::paths::SUPPORTED_VERSION,
            "description": format!("Every request carries `Service-Version: 2` and `Authorization: Bearer <API key>`.\n\nError codes:\n{}", codes.join("\n")),
        },
        "servers": [{"url": base_url}],
        "security": [{"bearer": []}],
        "paths": paths_obj,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_are_marked_and_the_update_target_is_nullable() {
        let doc = build("http://x/api");
        let session = &doc["components"]["schemas"]["TunnelSession"]["properties"];
        for (_, property, _) in EXTENSIONS {
            assert_eq!(session[property]["x-extension"], true, "{property}");
        }
        assert_eq!(
            session["agent_update_target"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(session["agent_update_checks"]["type"], "boolean");
        assert!(session["agent_version"].get("x-extension").is_none());
    }

    #[test]
    fn every_referenced_schema_exists_and_operations_are_unique() {
        let doc = build("http://x/api");
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let mut seen = std::collections::HashSet::new();
        for op in OPERATIONS {
            assert!(
                seen.insert((op.method, op.path)),
                "{} {} twice",
                op.method,
                op.path
            );
            for name in op.request.iter().chain(op.response.iter()) {
                assert!(schemas.contains_key(*name), "{name}");
            }
        }
        assert_eq!(
            schemas["Credential"]["properties"]["token"]["type"],
            json!(["string", "null"])
        );
        assert!(
            schemas["CredentialCreate"]["properties"]
                .get("owner_id")
                .is_some()
        );
        assert!(
            schemas["CredentialUpdate"]["properties"]
                .get("owner_id")
                .is_none()
        );
    }
}
