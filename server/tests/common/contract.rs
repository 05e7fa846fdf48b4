//! Every API response a test receives, held against the OpenAPI document the server serves: the
//! status must be one the operation documents, and the JSON body must validate against the
//! schema documented for that status. So every test of the API is also a test of the document.
//! Requests outside the documented operations (an unknown route, an undocumented method) are
//! the tests' own business and pass through.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::OnceLock;

/// One documented operation: its path template's segments, and a validator per status.
struct Operation {
    method: String,
    segments: Vec<String>,
    statuses: HashMap<String, Option<jsonschema::Validator>>,
}

fn operations() -> &'static [Operation] {
    static OPERATIONS: OnceLock<Vec<Operation>> = OnceLock::new();
    OPERATIONS.get_or_init(|| {
        let doc = tunnel_server::api::openapi::build(super::BASE);
        let components = doc["components"].clone();
        let mut all = Vec::new();
        for (path, methods) in doc["paths"].as_object().unwrap() {
            for (method, op) in methods.as_object().unwrap() {
                let mut statuses = HashMap::new();
                for (status, response) in op["responses"].as_object().unwrap() {
                    let schema = &response["content"]["application/json"]["schema"];
                    let validator = (!schema.is_null()).then(|| {
                        let mut root = schema.clone();
                        root["components"] = components.clone();
                        jsonschema::draft202012::new(&root)
                            .unwrap_or_else(|e| panic!("{method} {path} {status}: {e}"))
                    });
                    statuses.insert(status.clone(), validator);
                }
                all.push(Operation {
                    method: method.to_uppercase(),
                    segments: path.split('/').map(str::to_owned).collect(),
                    statuses,
                });
            }
        }
        all
    })
}

fn matches(template: &[String], path: &str) -> bool {
    let segments: Vec<&str> = path.split('/').collect();
    segments.len() == template.len()
        && template
            .iter()
            .zip(&segments)
            .all(|(t, s)| t == s || (t.starts_with('{') && !s.is_empty()))
}

/// Panics when the response to `method target` breaks the document.
pub fn check(method: &str, target: &str, status: u16, body: &Value, text: &str) {
    let Some(path) = target.strip_prefix("/api") else {
        return;
    };
    let path = path.split('?').next().unwrap_or_default();
    let Some(op) = operations()
        .iter()
        .find(|op| op.method == method && matches(&op.segments, path))
    else {
        return;
    };
    let Some(validator) = op.statuses.get(&status.to_string()) else {
        panic!(
            "{method} {target} answered {status}, which its operation does not document: {text}"
        );
    };
    match validator {
        Some(validator) => {
            let errors: Vec<String> = validator
                .iter_errors(body)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            assert!(
                errors.is_empty(),
                "{method} {target} {status}: the body breaks the document: {errors:#?}\n{text}"
            );
        }
        None => assert!(
            text.is_empty(),
            "{method} {target} {status}: a body where none is documented: {text}"
        ),
    }
}

/// The document's schemas are valid JSON Schema (2020-12, the dialect of OpenAPI 3.1).
pub fn schemas_are_valid() {
    let doc = tunnel_server::api::openapi::build(super::BASE);
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        let mut schema = schema.clone();
        schema["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
        if let Err(e) = jsonschema::meta::validate(&schema) {
            panic!("{name} is not a valid schema: {e}");
        }
    }
}
