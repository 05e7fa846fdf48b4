//! The OpenAPI 3.1 document of the API, served at `/api/openapi.json` without authentication.
//!
//! Built from the code rather than written by hand: the paths come from `tunnel_core::paths`
//! (the same constants the routers use); every schema is derived from the real wire type of
//! `tunnel-core` by its `utoipa::ToSchema` derive (core's `openapi` feature, which the console's
//! build leaves off), so required, optional and nullable fields, types, enums and serde's names
//! are those of the code. What a derive cannot see (text limits and their unit, list bounds,
//! closed sets of strings) is written on by `constraints` from core's own constants. Every
//! operation lists its success and each error status it can answer, with the error body and the
//! codes behind each status. The `openapi_covers_every_route` test checks, against the router,
//! that every documented operation exists and that every method a documented path answers is
//! documented; the tests below validate the document itself.
//!
//! Files: this one serves the document and assembles it; `operations` is the table of
//! operations, their own error codes and the extension properties (docs/api/README.md,
//! extensions); `schemas` collects the derived schemas; `constraints` the limits.

use crate::response::Json;
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use tunnel_core::ErrorCode;
use tunnel_core::ids::{IdKind, SUFFIX_LEN};

mod constraints;
mod operations;
mod schemas;

pub use operations::{EXTENSIONS, OPERATIONS, Operation};

pub fn router() -> Router<AppState> {
    Router::new().route("/openapi.json", get(document))
}

async fn document(State(state): State<AppState>) -> Json<Value> {
    Json(build(&state.config.public_url))
}

/// A list that pages (`limit`, `before_id`). A subscription's sources are one page: a
/// subscription has at most 100, and that list takes no query.
fn is_list(op: &Operation) -> bool {
    op.method == "get"
        && op.response.is_some_and(|r| r.ends_with("List"))
        && !op.path.ends_with("/sources")
}

/// The pattern of an id of one of `kinds`: what `tunnel_core::ids::parse_id` accepts.
fn id_pattern(kinds: &[IdKind]) -> String {
    let prefixes: Vec<&str> = kinds.iter().map(|k| k.prefix()).collect();
    let prefix = match prefixes.as_slice() {
        [one] => (*one).to_owned(),
        several => format!("({})", several.join("|")),
    };
    format!("^{prefix}[0-9A-Za-z]{{{SUFFIX_LEN}}}$")
}

/// The kinds of id a path's `{id}` names (one, but the users' two), from the path's first
/// segment.
fn id_kinds(path: &str) -> Option<&'static [IdKind]> {
    let first = path.trim_start_matches('/').split('/').next()?;
    Some(match first {
        "credentials" => &[IdKind::Credential],
        "api_keys" => &[IdKind::ApiKey],
        "users" => &[IdKind::User, IdKind::Bot],
        "ssh_certificate_authorities" => &[IdKind::SshCertificateAuthority],
        "tunnel_sessions" => &[IdKind::TunnelSession],
        "edges" => &[IdKind::TlsEdge],
        "backends" => &[IdKind::TunnelGroupBackend],
        "event_destinations" => &[IdKind::EventDestination],
        "event_subscriptions" => &[IdKind::EventSubscription],
        "events" => &[IdKind::Event],
        _ => return None,
    })
}

/// A query parameter of a list.
fn query(name: &str, description: &str, schema: Value) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": schema})
}

/// The parameters of `op`: the version header, path ids, and a list's query.
fn parameters(op: &Operation) -> Vec<Value> {
    let mut parameters = vec![json!({
        "name": "Service-Version", "in": "header", "required": true,
        "schema": {"type": "string", "enum": [tunnel_core::paths::SUPPORTED_VERSION]},
    })];
    if op.path.contains("{id}") {
        let kinds = id_kinds(op.path).expect("a documented path with an id names its kind");
        let pattern = id_pattern(kinds);
        let nouns: Vec<&str> = kinds.iter().map(|k| k.noun()).collect();
        parameters.push(json!({
            "name": "id", "in": "path", "required": true,
            "description": format!("The {}'s id.", nouns.join("'s or ")),
            "schema": {"type": "string", "pattern": pattern},
        }));
    }
    if op.path.contains("{event_type}") {
        parameters.push(json!({
            "name": "event_type", "in": "path", "required": true,
            "description": "The source's event type, `<object>_<verb>.v0`.",
            "schema": {"type": "string"},
        }));
    }
    if is_list(op) {
        use tunnel_core::limits::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
        parameters.push(query(
            "limit",
            "Items per page.",
            json!({"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE, "default": DEFAULT_PAGE_SIZE}),
        ));
        // The items' kind: a destination's deliveries are deliveries, not destinations.
        let items = if op.path.ends_with("/deliveries") {
            &[IdKind::EventDelivery]
        } else {
            id_kinds(op.path).expect("a documented list names its kind")
        };
        parameters.push(query(
            "before_id",
            "Id of the last item of the previous page (from next_page_uri).",
            json!({"type": "string", "pattern": id_pattern(items)}),
        ));
        if crate::paging::takes_search(op.path) {
            let mut q = query(
                crate::paging::SEARCH_PARAM,
                "An extension: only items whose text holds this, case-insensitively \
                 (docs/api/README.md, searching).",
                json!({"type": "string", "maxLength": crate::paging::MAX_SEARCH_CHARS}),
            );
            q["x-extension"] = json!(true);
            parameters.push(q);
            let mut order = query(
                crate::paging::ORDER_PARAM,
                "An extension: `newest` first (the default) or `oldest` first; `before_id` is \
                 then the last item of the previous page in that order (docs/api/README.md).",
                json!({"type": "string", "enum": crate::paging::ORDERS, "default": "newest"}),
            );
            order["x-extension"] = json!(true);
            parameters.push(order);
        }
        if op.path == tunnel_core::paths::EVENTS {
            // An id of any kind: what `tunnel_core::ids::check_id_form` accepts.
            let id = json!({"type": "string", "pattern": id_pattern(&IdKind::ALL)});
            let time = json!({"type": "string", "format": "date-time"});
            parameters.extend([
                query(
                    "type",
                    "Only events of this type (`<object>_<verb>.v0`).",
                    json!({"type": "string", "pattern": tunnel_core::event_types::FORM_PATTERN}),
                ),
                query("object_id", "Only events about this object.", id.clone()),
                query(
                    "actor_id",
                    "Only events caused by this user, bot or credential.",
                    id,
                ),
                query(
                    "after",
                    "Only events that occurred at or after this time (RFC 3339).",
                    time.clone(),
                ),
                query(
                    "before",
                    "Only events that occurred before this time (RFC 3339).",
                    time,
                ),
            ]);
        }
    }
    parameters
}

/// Every error code `op` can answer: those of every operation, of its shape (an id, a body,
/// a query), and its own (`operations::OWN_ERRORS`).
fn error_codes(op: &Operation) -> Vec<ErrorCode> {
    use ErrorCode::*;
    let mut codes = vec![
        MissingVersion,
        UnsupportedVersion,
        MissingAuthorization,
        MalformedAuthorization,
        InvalidApiKey,
        // Every operation refuses a query parameter it does not take.
        UnknownQueryParameter,
        RateLimited,
        AuthFailuresLimited,
        Internal,
    ];
    if op.path.contains('{') {
        codes.push(NotFound);
    }
    if op.request.is_some() {
        codes.extend([
            MalformedJson,
            UnknownField,
            InvalidField,
            BodyTooLarge,
            BodyTimeout,
            UnsupportedMediaType,
        ]);
    }
    if is_list(op) {
        codes.push(InvalidQueryParameter);
    }
    codes.extend(operations::own_errors(op.operation_id).iter().copied());
    codes
}

/// The responses of `op`: its success, then one per error status with the codes behind it.
fn responses(op: &Operation) -> Map<String, Value> {
    let mut responses = Map::new();
    let success = match op.response {
        Some(name) => json!({
            "description": op.summary,
            "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}}},
        }),
        None => json!({"description": "No content"}),
    };
    responses.insert(op.status.to_string(), success);
    let mut by_status: BTreeMap<u16, Vec<ErrorCode>> = BTreeMap::new();
    for code in error_codes(op) {
        by_status.entry(code.status()).or_default().push(code);
    }
    for (status, codes) in by_status {
        let lines: Vec<String> = codes
            .iter()
            .map(|c| format!("- `{}`: {}", c.as_str(), c.title()))
            .collect();
        let mut response = json!({
            "description": lines.join("\n"),
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
        });
        if status == 429 {
            response["headers"] = json!({
                "Retry-After": {"description": "Seconds until a request may succeed.", "schema": {"type": "integer"}},
            });
        }
        responses.insert(status.to_string(), response);
    }
    responses
}

/// The names of the `{…}` parameters of a path template.
fn path_params(path: &str) -> Vec<&str> {
    path.split('/')
        .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
        .collect()
}

/// OpenAPI links from a create's response to the operations on what it created (`GET`,
/// `PATCH`, `DELETE` and the actions under its path), so a client or a stateful tester can
/// follow them: the new id from the response body (a source's from its `type`), the parent's
/// from the request's path.
fn links(op: &Operation) -> Option<Value> {
    if op.method != "post" || op.status != 201 {
        return None;
    }
    let under = format!("{}/{{", op.path);
    let mut links = Map::new();
    for target in OPERATIONS.iter().filter(|t| t.path.starts_with(&under)) {
        let mut parameters = Map::new();
        for param in path_params(target.path) {
            let value = if path_params(op.path).contains(&param) {
                format!("$request.path.{param}")
            } else if param == "event_type" {
                "$response.body#/type".to_owned()
            } else {
                "$response.body#/id".to_owned()
            };
            parameters.insert(param.to_owned(), json!(value));
        }
        links.insert(
            target.operation_id.to_owned(),
            json!({"operationId": target.operation_id, "parameters": parameters}),
        );
    }
    (!links.is_empty()).then_some(Value::Object(links))
}

/// The whole document, with `servers` set to `{base_url}`.
pub fn build(base_url: &str) -> Value {
    let mut schemas = schemas::schemas();
    constraints::apply(&mut schemas);
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
        let mut responses = responses(op);
        if let Some(links) = links(op) {
            responses[&op.status.to_string()]["links"] = links;
        }
        let mut operation = json!({
            "operationId": op.operation_id,
            "summary": op.summary,
            "tags": [op.tag],
            "parameters": parameters(op),
            "responses": responses,
        });
        if let Some(name) = op.request {
            operation["requestBody"] = json!({
                "required": false,
                "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}}},
            });
        }
        let entry = paths_obj
            .entry(op.path.to_owned())
            .or_insert_with(|| json!({}));
        entry[op.method] = operation;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Tunnel Management API",
            "version": tunnel_core::paths::SUPPORTED_VERSION,
            "description": "Every request carries `Service-Version: 2` and `Authorization: Bearer <API key>`. \
                Each operation lists the error codes behind each of its error statuses; every error \
                answers with the same JSON body (`ErrorBody`).",
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
    use serde::de::DeserializeOwned;
    use tunnel_core::Validate;
    use tunnel_core::resources::{
        api_key, backend, credential, event_destination, event_subscription, ssh_ca, tls_edge,
    };

    /// Whether a property's schema admits `null`.
    fn nullable(p: &Value) -> bool {
        let null = json!("null");
        p["type"] == null
            || p["type"].as_array().is_some_and(|t| t.contains(&null))
            || p["oneOf"]
                .as_array()
                .is_some_and(|all| all.iter().any(|s| s["type"] == null))
    }

    #[test]
    fn extensions_are_marked_and_nullable_fields_are_required_in_responses() {
        let doc = build("http://x/api");
        let session = &doc["components"]["schemas"]["TunnelSession"];
        for (_, property, _) in EXTENSIONS {
            assert_eq!(
                session["properties"][property]["x-extension"], true,
                "{property}"
            );
        }
        let properties = &session["properties"];
        assert!(nullable(&properties["agent_update_target"]));
        assert!(nullable(&properties["agent_update_state"]));
        assert_eq!(properties["agent_update_checks"]["type"], "boolean");
        assert!(properties["agent_version"].get("x-extension").is_none());
        // Always present in a response, `null` or not.
        let required = session["required"].as_array().unwrap();
        assert!(required.contains(&json!("agent_update_state")));
        let credential = &doc["components"]["schemas"]["Credential"];
        assert!(
            credential["required"]
                .as_array()
                .unwrap()
                .contains(&json!("token"))
        );
        assert!(nullable(&credential["properties"]["token"]));
        // Error details are only what applies: none of their fields is required.
        assert!(
            doc["components"]["schemas"]["ErrorDetails"]
                .get("required")
                .is_none()
        );
    }

    #[test]
    fn requests_are_closed_and_optional() {
        let doc = build("http://x/api");
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for op in OPERATIONS {
            let Some(name) = op.request else { continue };
            let schema = &schemas[name];
            assert_eq!(schema["additionalProperties"], false, "{name}");
        }
        let create = &schemas["CredentialCreate"];
        assert!(create.get("required").is_none());
        assert!(nullable(&create["properties"]["description"]));
        assert!(create["properties"].get("owner_id").is_some());
        assert!(
            schemas["CredentialUpdate"]["properties"]
                .get("owner_id")
                .is_none()
        );
        assert_eq!(schemas["WebhookTarget"]["required"], json!(["url"]));
    }

    #[test]
    fn the_official_clients_shapes_are_documented() {
        let doc = build("http://x/api");
        let schemas = &doc["components"]["schemas"];
        let create = &schemas["TlsEdgeCreate"]["properties"];
        for module in tls_edge::UNSUPPORTED_EDGE_MODULES {
            assert_eq!(create[module]["type"], "null", "{module}");
        }
        assert!(nullable(&create["backend"]));
        assert!(create["backend"]["oneOf"][0]["$ref"].is_string());
        // An update takes every module only as `null`, `backend` included (it has its own routes).
        let update = &schemas["TlsEdgeUpdate"]["properties"];
        for module in tls_edge::UNSUPPORTED_EDGE_MODULES {
            assert_eq!(update[module]["type"], "null", "{module}");
        }
        assert_eq!(update["backend"]["type"], "null");
        assert!(
            update["hostports"]["type"]
                .as_array()
                .unwrap()
                .contains(&json!("array"))
        );
        let labels = &schemas["TunnelGroupBackendUpdate"]["properties"]["labels"];
        assert_eq!(labels["additionalProperties"]["type"], "string");
        let module = &schemas["TlsEdgeBackendModule"];
        assert_eq!(module["additionalProperties"], false);
        assert!(module["properties"].get("backend_id").is_some());
        assert_eq!(schemas["Ref"]["required"], json!(["id", "uri"]));
        let tunnels = &schemas["TunnelGroupBackend"]["properties"]["tunnels"];
        assert_eq!(tunnels["items"]["$ref"], "#/components/schemas/Ref");
    }

    /// Every `$ref` in `value`.
    fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r);
                }
                map.values().for_each(|v| refs(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }

    #[test]
    fn every_reference_resolves_and_operations_are_unique() {
        let doc = build("http://x/api");
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let mut all = Vec::new();
        refs(&doc, &mut all);
        assert!(all.len() > 100, "{}", all.len());
        for r in all {
            let name = r.strip_prefix("#/components/schemas/").expect(r);
            assert!(schemas.contains_key(name), "{r}");
        }
        let mut seen = std::collections::HashSet::new();
        for op in OPERATIONS {
            assert!(
                seen.insert((op.method, op.path)),
                "{} {} twice",
                op.method,
                op.path
            );
            assert!(seen.len() <= OPERATIONS.len());
        }
        let ids: Vec<&str> = OPERATIONS.iter().map(|op| op.operation_id).collect();
        for (id, _) in operations::OWN_ERRORS {
            assert!(ids.contains(id), "{id} is not an operation");
        }
    }

    #[test]
    fn every_operation_documents_its_errors_with_their_codes() {
        let doc = build("http://x/api");
        for op in OPERATIONS {
            let responses = &doc["paths"][op.path][op.method]["responses"];
            for status in ["400", "401", "429", "500"] {
                assert_eq!(
                    responses[status]["content"]["application/json"]["schema"]["$ref"],
                    "#/components/schemas/ErrorBody",
                    "{} {}",
                    op.operation_id,
                    status
                );
            }
            assert_eq!(
                responses.get("404").is_some(),
                op.path.contains('{'),
                "{}",
                op.operation_id
            );
            assert!(responses.get("default").is_none());
        }
        let restart = &doc["paths"]["/tunnel_sessions/{id}/restart"]["post"]["responses"];
        let conflicts = restart["409"]["description"].as_str().unwrap();
        for code in [ErrorCode::RestartUnsupported, ErrorCode::RestartTooSoon] {
            assert!(conflicts.contains(code.as_str()), "{conflicts}");
        }
        assert!(restart["504"].is_object());
        let created = &doc["paths"]["/credentials"]["post"]["responses"]["201"]["links"];
        assert_eq!(
            created["getCredential"]["parameters"]["id"],
            "$response.body#/id"
        );
        assert!(created["deleteCredential"].is_object());
        let source =
            &doc["paths"]["/event_subscriptions/{id}/sources"]["post"]["responses"]["201"]["links"];
        let get = &source["getEventSource"]["parameters"];
        assert_eq!(get["id"], "$request.path.id");
        assert_eq!(get["event_type"], "$response.body#/type");
        let id = &doc["paths"]["/credentials/{id}"]["get"]["parameters"][1];
        assert_eq!(id["schema"]["pattern"], "^cr_[0-9A-Za-z]{27}$");
        let id = &doc["paths"]["/users/{id}"]["get"]["parameters"][1];
        assert_eq!(id["schema"]["pattern"], "^(usr_|bot_)[0-9A-Za-z]{27}$");
        tunnel_core::ids::parse_id(IdKind::Credential, "cr_0EReR4WWfBto6iBJ0GJMqrlZ2Yd").unwrap();
    }

    /// The field errors `T`'s own validation finds in `body` (a body that does not even decode
    /// is a test mistake).
    fn errors_of<T: DeserializeOwned + Validate>(body: Value) -> Vec<String> {
        let value: T = serde_json::from_value(body).expect("a body of the type");
        value.field_errors().into_iter().map(|e| e.field).collect()
    }

    /// Each documented text limit is the one the type's validation applies: a value at the
    /// limit passes, one unit more fails on that field. Characters are `é` (two bytes), so a
    /// byte limit and a character limit tell apart.
    #[test]
    fn documented_limits_are_the_validated_ones() {
        type Check = fn(Value) -> Vec<String>;
        let checks: &[(&str, Check)] = &[
            (
                "CredentialCreate",
                errors_of::<credential::CredentialCreate>,
            ),
            (
                "CredentialUpdate",
                errors_of::<credential::CredentialUpdate>,
            ),
            ("ApiKeyCreate", errors_of::<api_key::ApiKeyCreate>),
            ("ApiKeyUpdate", errors_of::<api_key::ApiKeyUpdate>),
            (
                "SshCertificateAuthorityCreate",
                errors_of::<ssh_ca::SshCertificateAuthorityCreate>,
            ),
            (
                "SshCertificateAuthorityUpdate",
                errors_of::<ssh_ca::SshCertificateAuthorityUpdate>,
            ),
            (
                "EventSubscriptionCreate",
                errors_of::<event_subscription::EventSubscriptionCreate>,
            ),
            (
                "EventSubscriptionUpdate",
                errors_of::<event_subscription::EventSubscriptionUpdate>,
            ),
            ("TlsEdgeCreate", errors_of::<tls_edge::TlsEdgeCreate>),
            ("TlsEdgeUpdate", errors_of::<tls_edge::TlsEdgeUpdate>),
            (
                "TunnelGroupBackendCreate",
                errors_of::<backend::TunnelGroupBackendCreate>,
            ),
            (
                "TunnelGroupBackendUpdate",
                errors_of::<backend::TunnelGroupBackendUpdate>,
            ),
            (
                "EventDestinationCreate",
                errors_of::<event_destination::EventDestinationCreate>,
            ),
            (
                "EventDestinationUpdate",
                errors_of::<event_destination::EventDestinationUpdate>,
            ),
        ];
        let doc = build("http://x/api");
        let mut seen = 0;
        for (names, description, metadata) in constraints::TEXT_LIMITS {
            for name in *names {
                let check = checks.iter().find(|(n, _)| n == name).expect(name).1;
                for limit in [description, metadata] {
                    let p = &doc["components"]["schemas"][*name]["properties"][limit.field];
                    let max = p["maxLength"].as_u64().unwrap() as usize;
                    let unit = if p.get("x-max-bytes").is_some() { 2 } else { 1 };
                    let at = "é".repeat(max / unit);
                    let over = format!("{at}é");
                    let field = limit.field;
                    assert!(
                        !check(json!({ field: at })).contains(&field.to_owned()),
                        "{name}.{field}"
                    );
                    assert!(
                        check(json!({ field: over })).contains(&field.to_owned()),
                        "{name}.{field}"
                    );
                    seen += 1;
                }
            }
        }
        assert_eq!(seen, 2 * checks.len());
        // Every request of the table is checked.
        assert!(checks.iter().all(|(n, _)| {
            constraints::TEXT_LIMITS
                .iter()
                .any(|(names, ..)| names.contains(n))
        }));
    }
}
