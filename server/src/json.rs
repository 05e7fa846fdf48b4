//! The request-body extractor (docs/api/README.md): JSON only (415 otherwise), at most 1 MiB (413,
//! docs/limits.md) arriving within [`BODY_READ`] (408), malformed JSON 400, unknown fields 400 naming the field and the accepted ones,
//! and a missing body read as `{}` (every request type of the API accepts `{}`; required fields are
//! then reported by validation, with their field name). Response bodies are `crate::response`'s.

use crate::error::{self, ApiError};
use axum::extract::{FromRequest, Request};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tunnel_core::errors::ErrorCode;
use tunnel_core::errors::FieldError;
use tunnel_core::limits::MAX_BODY_BYTES;

/// How long a request body may take to arrive once its head has: a 1 MiB body at a few tens
/// of kB/s, and no client that stops sending midway holds the request for good.
pub const BODY_READ: std::time::Duration = std::time::Duration::from_secs(30);

/// A JSON request body of type `T`.
#[derive(Debug, Clone)]
pub struct JsonBody<T>(pub T);

fn too_large() -> ApiError {
    ApiError::new(
        ErrorCode::BodyTooLarge,
        format!("The request body is larger than {MAX_BODY_BYTES} bytes (1 MiB)."),
    )
    .with_detail("max_bytes", MAX_BODY_BYTES)
}

/// `application/json`, optionally with parameters (`; charset=utf-8`).
fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
}

impl<S: Send + Sync, T: DeserializeOwned + Serialize> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<JsonBody<T>, ApiError> {
        let declared = req
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
            return Err(too_large());
        }
        let content_type = req
            .headers()
            .get(CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        // Bounded: a client that stops sending midway holds no request (and no connection)
        // for good.
        let bytes = tokio::time::timeout(
            BODY_READ,
            axum::body::to_bytes(req.into_body(), MAX_BODY_BYTES),
        )
        .await
        .map_err(|_| {
            ApiError::new(
                ErrorCode::BodyTimeout,
                format!(
                    "The request body did not arrive within {} s; send it whole, at once.",
                    BODY_READ.as_secs()
                ),
            )
        })?
        .map_err(|_| too_large())?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return parse(b"{}").map(JsonBody);
        }
        match content_type {
            Some(ct) if is_json(&ct) => {}
            Some(ct) => {
                let shown = error::quoted(&ct);
                return Err(ApiError::new(
                    ErrorCode::UnsupportedMediaType,
                    format!(
                        "The request body is `{shown}`; send JSON with Content-Type: application/json."
                    ),
                ));
            }
            None => {
                return Err(ApiError::new(
                    ErrorCode::UnsupportedMediaType,
                    "The request has a body but no Content-Type; send JSON with Content-Type: application/json.",
                ));
            }
        }
        parse(&bytes).map(JsonBody)
    }
}

/// Whether the JSON text `bytes` writes the NUL character in a string (`\u0000`; JSON has no
/// other way to carry it). Scans escapes only, so `\\u0000` (a backslash, then `u0000`) is not
/// one.
fn holds_nul(bytes: &[u8]) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            if bytes.get(i + 1..i + 6) == Some(b"u0000".as_slice()) {
                return true;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    false
}

/// Every text holding NUL in `value`, each as the problem of its field: a string value
/// (`description`, `acl[2]`) or a key of an object (one of `labels`' keys, reported on
/// `labels`, as the key itself cannot be shown).
fn nul_errors(value: &serde_json::Value, at: &str, found: &mut Vec<FieldError>) {
    let message = |what: &str| {
        format!("{what} contains the NUL character (\\u0000), which no text may hold.")
    };
    match value {
        serde_json::Value::String(s) if s.contains('\0') => {
            found.push(FieldError::new(at, message(&format!("`{at}`"))));
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                nul_errors(v, &format!("{at}[{i}]"), found);
            }
        }
        serde_json::Value::Object(map) => {
            // The body's own field names are checked as names (an unknown field).
            if !at.is_empty() && map.keys().any(|k| k.contains('\0')) {
                found.push(FieldError::new(at, message(&format!("A key of `{at}`"))));
            }
            for (k, v) in map.iter().filter(|(k, _)| !k.contains('\0')) {
                let field = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                nul_errors(v, &field, found);
            }
        }
        _ => {}
    }
}

/// Parses `bytes`, mapping serde's errors to the API's codes. A string holding NUL is refused
/// (400 naming its field) whatever the database: PostgreSQL cannot store it.
pub fn parse<T: DeserializeOwned + Serialize>(bytes: &[u8]) -> Result<T, ApiError> {
    // The body as a JSON tree, read only when a check below can find something: a NUL is
    // written only as `\u0000`, and an array only with `[`.
    let nul = holds_nul(bytes);
    let tree = (nul || bytes.contains(&b'['))
        .then(|| serde_json::from_slice::<Value>(bytes).ok())
        .flatten();
    if nul && let Some(tree) = &tree {
        let mut found = Vec::new();
        nul_errors(tree, "", &mut found);
        if !found.is_empty() {
            return Err(ApiError::Invalid(found));
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        // A NUL in a field's name is shown escaped: no text the API answers holds NUL.
        let path = err.path().to_string().replace('\0', "\\u0000");
        let inner = err.into_inner();
        let text = strip_position(&inner.to_string());
        let at_root = path.is_empty() || path == ".";
        if inner.is_data() && text.starts_with("unknown field `") {
            // "unknown field `x`, expected one of `a`, `b`": name the field, keep the list.
            let name = text
                .split('`')
                .nth(1)
                .unwrap_or_default()
                .replace('\0', "\\u0000");
            let field = if at_root {
                name.clone()
            } else {
                path_join(&path, &name)
            };
            let accepted: Vec<String> = text
                .split_once("expected")
                .map(|(_, rest)| {
                    rest.split('`')
                        .skip(1)
                        .step_by(2)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            return ApiError::new(
                ErrorCode::UnknownField,
                if accepted.is_empty() {
                    format!("Unknown field `{field}`: this object takes no fields.")
                } else {
                    let list: Vec<String> = accepted.iter().map(|a| format!("`{a}`")).collect();
                    format!(
                        "Unknown field `{field}`; the accepted fields are {}.",
                        list.join(", ")
                    )
                },
            )
            .with_field(field)
            .with_detail("accepted_fields", accepted);
        }
        if inner.is_data() {
            let text = in_json_terms(&text);
            let error = ApiError::new(
                ErrorCode::MalformedJson,
                format!("The request body does not have the expected shape: {text}."),
            );
            return if at_root {
                error
            } else {
                error.with_field(path)
            };
        }
        ApiError::new(
            ErrorCode::MalformedJson,
            format!("The request body is not valid JSON: {text}."),
        )
    })?;
    // Trailing characters after the JSON value.
    de.end().map_err(|e| {
        let text = strip_position(&e.to_string());
        ApiError::new(
            ErrorCode::MalformedJson,
            format!("The request body is not valid JSON: {text}."),
        )
    })?;
    // serde reads a struct from an array too (its fields in order); the API takes objects only.
    if let Some(given) = &tree
        && let Ok(read) = serde_json::to_value(&value)
        && let Some(at) = array_for_object(given, &read, String::new())
    {
        let error = ApiError::new(
            ErrorCode::MalformedJson,
            format!(
                "The request body does not have the expected shape: {} must be a JSON object, not an array.",
                if at.is_empty() { "the body" } else { &at }
            ),
        );
        return Err(if at.is_empty() {
            error
        } else {
            error.with_field(at)
        });
    }
    Ok(value)
}

/// serde's words for a wrong type in JSON's: "expected struct CredentialCreate" names a type of
/// this server's code, "expected i64" a machine integer; a client knows objects, lists and
/// whole numbers.
fn in_json_terms(text: &str) -> String {
    let mut out = text
        .replace("invalid type: map", "invalid type: an object")
        .replace("invalid type: sequence", "invalid type: a list")
        .replace("expected a map", "expected an object")
        .replace("expected a sequence", "expected a list");
    while let Some(at) = out.find("expected struct ") {
        let name_start = at + "expected struct ".len();
        let name_len = out[name_start..]
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .unwrap_or(out.len() - name_start);
        out.replace_range(at..name_start + name_len, "expected an object");
    }
    for int in [
        "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize", "isize",
    ] {
        let word = format!("expected {int}");
        if let Some(at) = out.find(&word)
            && !out[at + word.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            out.replace_range(at..at + word.len(), "expected a whole number");
        }
    }
    out
}

/// The path of the first place where the body `given` has an array and what was `read` from it
/// is an object, `""` for the body itself.
fn array_for_object(given: &Value, read: &Value, at: String) -> Option<String> {
    match (given, read) {
        (Value::Array(_), Value::Object(_)) => Some(at),
        (Value::Object(given), Value::Object(read)) => read.iter().find_map(|(name, r)| {
            let g = given.get(name)?;
            let here = if at.is_empty() {
                name.clone()
            } else {
                format!("{at}.{name}")
            };
            array_for_object(g, r, here)
        }),
        (Value::Array(given), Value::Array(read)) => given
            .iter()
            .zip(read)
            .enumerate()
            .find_map(|(i, (g, r))| array_for_object(g, r, format!("{at}[{i}]"))),
        _ => None,
    }
}

/// When an unknown field sits in a nested object, serde_path_to_error's path already ends at
/// the object; join them with a dot.
fn path_join(path: &str, name: &str) -> String {
    if path.ends_with(name) {
        path.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// serde_json appends " at line L column C"; the message reads better without it.
fn strip_position(text: &str) -> String {
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunnel_core::resources::credential::CredentialCreate;

    fn code(e: ApiError) -> (ErrorCode, Option<String>) {
        match e {
            ApiError::Coded { code, field, .. } => (code, field),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unknown_field_with_nul_in_its_name_is_named_escaped() {
        let e = parse::<CredentialCreate>(br#"{"a\u0000b": 1}"#).unwrap_err();
        let (code, field) = code(e);
        assert_eq!(code, ErrorCode::UnknownField);
        assert_eq!(field.as_deref(), Some("a\\u0000b"));
    }

    #[test]
    fn wrong_types_are_said_in_json_terms() {
        let said = |body: &[u8]| parse::<CredentialCreate>(body).unwrap_err().to_string();
        for (body, expected) in [
            (&b"null"[..], "invalid type: null, expected an object"),
            (
                br#"{"acl": {}}"#,
                "invalid type: an object, expected a list",
            ),
            (br#"{"acl": "x"}"#, "expected a list"),
        ] {
            let said = said(body);
            assert!(said.contains(expected), "{said}");
            assert!(
                !said.contains("struct") && !said.contains("sequence"),
                "{said}"
            );
        }
        assert_eq!(
            in_json_terms("invalid type: string \"x\", expected i64"),
            "invalid type: string \"x\", expected a whole number"
        );
        assert_eq!(
            in_json_terms("expected struct EventTarget or u32"),
            "expected an object or u32"
        );
    }

    #[test]
    fn maps_serde_errors_to_codes() {
        assert_eq!(
            code(parse::<CredentialCreate>(b"{").unwrap_err()).0,
            ErrorCode::MalformedJson
        );
        assert_eq!(
            code(parse::<CredentialCreate>(b"{} x").unwrap_err()).0,
            ErrorCode::MalformedJson
        );
        assert_eq!(
            code(parse::<CredentialCreate>(br#"{"descripton":"x"}"#).unwrap_err()),
            (ErrorCode::UnknownField, Some("descripton".into()))
        );
        assert_eq!(
            code(parse::<CredentialCreate>(br#"{"description":5}"#).unwrap_err()),
            (ErrorCode::MalformedJson, Some("description".into()))
        );
        assert!(is_json("Application/JSON; charset=utf-8"));
        assert!(!is_json("text/plain"));
    }

    #[test]
    fn objects_written_as_arrays_are_refused() {
        use tunnel_core::resources::event_destination::EventDestinationCreate;
        // serde alone would read these as the fields in order.
        assert_eq!(
            code(parse::<CredentialCreate>(b"[null, null]").unwrap_err()),
            (ErrorCode::MalformedJson, None)
        );
        let nested = br#"{"target": {"webhook": ["https://example.com/"]}}"#;
        assert_eq!(
            code(parse::<EventDestinationCreate>(nested).unwrap_err()),
            (ErrorCode::MalformedJson, Some("target.webhook".into()))
        );
        // Lists stay lists.
        let acl = parse::<CredentialCreate>(br#"{"acl": ["bind:a.example.com"]}"#).unwrap();
        assert_eq!(acl.acl.unwrap().len(), 1);
        let ok = br#"{"target": {"webhook": {"url": "https://example.com/"}}}"#;
        assert!(parse::<EventDestinationCreate>(ok).is_ok());
    }
}
