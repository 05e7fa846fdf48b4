//! The OpenAPI 3.1 document of the API, served at `/api/openapi.json` without authentication.
//!
//! Built from the code rather than written by hand: the paths come from `tunnel_core::paths`
//! (the same constants the routers use), and every schema is derived from a sample value of the
//! real wire type of `tunnel-core` (built with struct literals, so a field added to a wire type
//! fails to compile here until the sample has it, and serde names the properties). The
//! `openapi_covers_every_route` test checks, against the router, that every documented
//! operation exists and that every method a documented path answers is documented.
//!
//! Files: this one serves the document and turns the data into it; `operations` is the table of
//! operations and the extension properties (docs/api/README.md, extensions); `samples` the
//! sample value of every wire type.

use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Map, Value, json};
use tunnel_core::ErrorCode;

mod operations;
mod samples;

pub use operations::{EXTENSIONS, NULLABLE, OPERATIONS, Operation};
use samples::samples;

pub fn router() -> Router<AppState> {
    Router::new().route("/openapi.json", get(document))
}

async fn document(State(state): State<AppState>) -> Json<Value> {
    Json(build(&state.config.public_url))
}

/// A JSON schema describing `value`'s shape. Responses list every property as required.
/// A `null` sample is a property accepted only as `null` (the TLS edge modules this server does
/// not implement).
fn schema_of(value: &Value, required: bool) -> Value {
    match value {
        Value::Null => json!({"type": "null"}),
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
                // A property accepted only as `null` stays so, nullable or not.
                if NULLABLE.contains(&name.as_str())
                    && let Some(t) = schema.get("type").cloned()
                    && t != "null"
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
            if crate::paging::takes_search(op.path) {
                parameters.push(json!({"name": crate::paging::SEARCH_PARAM, "in": "query", "description": "An extension: only items whose text holds this, case-insensitively (docs/api/README.md, searching).", "x-extension": true, "schema": {"type": "string", "maxLength": crate::paging::MAX_SEARCH_CHARS}}));
            }
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
        assert_eq!(
            session["agent_update_state"]["type"],
            json!(["object", "null"])
        );
        assert!(session["agent_version"].get("x-extension").is_none());
    }

    #[test]
    fn the_official_clients_shapes_are_documented() {
        let doc = build("http://x/api");
        let schemas = &doc["components"]["schemas"];
        let create = &schemas["TlsEdgeCreate"]["properties"];
        for module in tunnel_core::resources::tls_edge::UNSUPPORTED_EDGE_MODULES {
            assert_eq!(create[module], json!({"type": "null"}), "{module}");
        }
        assert_eq!(create["backend"]["type"], json!(["object", "null"]));
        // An update takes every module only as `null`, `backend` included (it has its own routes).
        let update = &schemas["TlsEdgeUpdate"]["properties"];
        for module in tunnel_core::resources::tls_edge::UNSUPPORTED_EDGE_MODULES {
            assert_eq!(update[module], json!({"type": "null"}), "{module}");
        }
        assert_eq!(update["backend"], json!({"type": "null"}));
        assert_eq!(update["hostports"]["type"], "array");
        let labels = &schemas["TunnelGroupBackendUpdate"]["properties"]["labels"];
        assert_eq!(labels["type"], "object");
        let replace = &schemas["TlsEdgeBackendReplace"]["properties"];
        assert_eq!(replace["module"]["additionalProperties"], false);
        assert!(replace["module"]["properties"].get("backend_id").is_some());
        let tunnels = &schemas["TunnelGroupBackend"]["properties"]["tunnels"];
        assert_eq!(tunnels["items"]["required"], json!(["id", "uri"]));
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
