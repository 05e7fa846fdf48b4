//! The server's one error type and its one mapping to the wire (docs/errors.md): the JSON
//! [`ErrorBody`] with a stable code, `details.field` where a field is at fault, and the operation
//! id in the body and in the `Operation-Id` header, and `Retry-After` for an error that names
//! when to try again (`details.retry_after_secs`, set by [`ApiError::with_retry_after`]). 5xx bodies never carry internals: the cause
//! is logged with the operation id instead, so an operator can match a report to the log.

use crate::store;
use axum::extract::rejection::PathRejection;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::collections::BTreeMap;
/// A value the caller sent, as an error quotes it (core's cut, the one the body's bounding
/// makes), for the values that also go to `details` (which the bounding leaves alone) or that
/// are quoted without backticks.
pub use tunnel_core::errors::quoted;
use tunnel_core::errors::{
    ErrorBody, ErrorCode, FIELD_CHARS, FieldError, bounded_message, shorten,
};
use tunnel_core::ids::IdKind;
use tunnel_core::paths::OPERATION_ID_HEADER;

/// The `details` key of [`ApiError::with_retry_after`], mirrored in the `Retry-After` header.
const RETRY_AFTER_DETAIL: &str = "retry_after_secs";

tokio::task_local! {
    /// The operation id of the request being served (set by `operation_id` middleware in
    /// `lib.rs`), so errors raised anywhere in the request carry it.
    pub static OPERATION_ID: String;
}

/// A new operation id (`op_…`). Its randomness comes from the thread's generator (a CSPRNG
/// seeded from the system's), not a system call per request as the system's own would be.
pub fn new_operation_id() -> String {
    use rand::RngCore as _;
    let mut random = [0u8; 14];
    rand::thread_rng().fill_bytes(&mut random);
    let millis = u64::try_from(time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000)
        .unwrap_or_default();
    tunnel_core::ids::make_id(IdKind::Operation, millis, random)
}

/// The operation id of the current request, or a fresh one outside a request.
pub fn current_operation_id() -> String {
    OPERATION_ID
        .try_with(Clone::clone)
        .unwrap_or_else(|_| new_operation_id())
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A catalogued failure.
    #[error("{msg}")]
    Coded {
        code: ErrorCode,
        msg: String,
        field: Option<String>,
        extra: BTreeMap<String, Value>,
    },
    /// Validation failed; every problem is listed.
    #[error("invalid request")]
    Invalid(Vec<FieldError>),
    /// Anything unexpected (database down, …): 500 with no details on the wire.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(code: ErrorCode, msg: impl Into<String>) -> ApiError {
        ApiError::Coded {
            code,
            msg: msg.into(),
            field: None,
            extra: BTreeMap::new(),
        }
    }

    /// Names the offending field (`details.field`).
    pub fn with_field(self, name: impl Into<String>) -> ApiError {
        match self {
            ApiError::Coded {
                code, msg, extra, ..
            } => ApiError::Coded {
                code,
                msg,
                field: Some(name.into()),
                extra,
            },
            other => other,
        }
    }

    /// Adds one more entry to `details`.
    pub fn with_detail(self, key: &str, value: impl Into<Value>) -> ApiError {
        match self {
            ApiError::Coded {
                code,
                msg,
                field,
                mut extra,
            } => {
                extra.insert(key.to_owned(), value.into());
                ApiError::Coded {
                    code,
                    msg,
                    field,
                    extra,
                }
            }
            other => other,
        }
    }

    /// Says when to try again: `details.retry_after_secs` in the body and the same whole
    /// seconds in the `Retry-After` header (one source, so the two cannot disagree).
    pub fn with_retry_after(self, secs: u64) -> ApiError {
        self.with_detail(RETRY_AFTER_DETAIL, secs)
    }

    /// 404 for a resource that does not exist in the caller's account (never 403: no leak).
    pub fn not_found(kind: IdKind, id: &str) -> ApiError {
        let shown = quoted(id);
        ApiError::new(
            ErrorCode::NotFound,
            format!("{} `{shown}` not found", kind.noun()),
        )
        .with_detail("id", shown)
    }

    /// The code this error is answered with.
    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::Coded { code, .. } => *code,
            ApiError::Invalid(_) => ErrorCode::InvalidField,
            ApiError::Internal(_) => ErrorCode::Internal,
        }
    }

    /// The wire body (with the operation id filled in).
    pub fn body(&self, operation_id: &str) -> ErrorBody {
        let mut body = match self {
            ApiError::Coded {
                code,
                msg,
                field,
                extra,
            } => {
                let mut body = ErrorBody::new(*code, msg.clone());
                body.details.field = field.clone();
                body.details.extra = extra.clone();
                // A 114 found by a handler rather than by validation lists its one problem
                // too: clients read `details.errors` for every 114 (docs/errors.md).
                if let (ErrorCode::InvalidField, Some(field)) = (code, field) {
                    body.details.errors = vec![FieldError::new(field.clone(), msg.clone())];
                }
                body
            }
            ApiError::Invalid(errors) => ErrorBody::invalid(errors.clone()),
            ApiError::Internal(_) => {
                ErrorBody::new(ErrorCode::Internal, ErrorCode::Internal.title())
            }
        };
        body.details.operation_id = operation_id.to_owned();
        bound_texts(&mut body);
        body
    }
}

/// Keeps what the body echoes of the request bounded, so a large request cannot make a larger
/// answer: quoted values, whole messages and field names are cut where they are too long. The
/// one place, whatever code raised the error.
fn bound_texts(body: &mut ErrorBody) {
    let bound = |text: &mut String| *text = bounded_message(text);
    let cut = |text: &mut String| *text = shorten(text, FIELD_CHARS);
    bound(&mut body.msg);
    if let Some(field) = &mut body.details.field {
        cut(field);
    }
    for error in &mut body.details.errors {
        bound(&mut error.message);
        cut(&mut error.field);
    }
}

/// The one mapping of the store's errors: a missing row is a 404 (never 403: no leak), a write
/// naming a resource that does not exist in the account a 400 on the naming field (a body id,
/// docs/api/README.md), a delete of a resource still in use a 409, and a database failure a 500.
impl From<store::Error> for ApiError {
    fn from(e: store::Error) -> ApiError {
        match e {
            store::Error::NotFound { kind, id } => ApiError::not_found(kind, &id),
            store::Error::Missing { field, kind, id } => {
                let shown = quoted(&id);
                ApiError::new(
                    ErrorCode::ReferenceNotFound,
                    format!("{} `{shown}` does not exist in this account.", kind.noun()),
                )
                .with_field(field)
            }
            store::Error::InUse {
                kind,
                id,
                by,
                users,
                total,
            } => {
                let named: Vec<String> = users.iter().map(|u| format!("`{u}`")).collect();
                // Only the first ten are named: the count says when there are more, so that
                // the caller does not meet a second refusal after changing those ten.
                let named = match usize::try_from(total) {
                    Ok(total) if total > users.len() => {
                        format!(
                            "{total} in all; the first {}: {}",
                            users.len(),
                            named.join(", ")
                        )
                    }
                    _ => named.join(", "),
                };
                ApiError::new(
                    ErrorCode::InUse,
                    format!("{} `{id}` is {by} ({named}).", kind.noun()),
                )
                .with_detail("used_by", users)
                .with_detail("used_by_count", total)
            }
            // The only reference not checked inside the write: the owner (principals are
            // removed by an operator command, behind the server's back).
            store::Error::Database(e) if e.is_foreign_key_violation() => ApiError::new(
                ErrorCode::UnknownOwner,
                "The owner is no longer a user or bot of this account: it was removed meanwhile.",
            )
            .with_field("owner_id"),
            store::Error::Database(e) => ApiError::Internal(e.into()),
        }
    }
}

/// A path segment that does not decode (e.g. `%FF`, not UTF-8): the JSON error body like every
/// other API error, instead of axum's plain-text 400.
impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> ApiError {
        use axum::extract::path::ErrorKind;
        match rejection {
            PathRejection::FailedToDeserializePathParams(e) => {
                let field = match e.kind() {
                    ErrorKind::InvalidUtf8InPathParam { key }
                    | ErrorKind::ParseErrorAtKey { key, .. }
                    | ErrorKind::DeserializeError { key, .. } => Some(key.clone()),
                    _ => None,
                };
                let msg = match &field {
                    Some(key) => format!("The path parameter `{key}` is not valid."),
                    None => "A path parameter is not valid.".to_owned(),
                };
                let error = ApiError::new(ErrorCode::InvalidField, msg);
                match field {
                    Some(key) => error.with_field(key),
                    None => error,
                }
            }
            // A route declared without the parameters its handler extracts: a bug of ours.
            other => ApiError::Internal(anyhow::anyhow!("path extraction: {other}")),
        }
    }
}

impl From<tunnel_core::Error> for ApiError {
    fn from(e: tunnel_core::Error) -> ApiError {
        match e {
            tunnel_core::Error::Invalid(errors) => ApiError::Invalid(errors),
            tunnel_core::Error::Id(e) => ApiError::new(ErrorCode::InvalidField, e.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let operation_id = current_operation_id();
        if let ApiError::Internal(cause) = &self {
            tracing::error!(operation_id, error = %format!("{cause:#}"), "internal error");
        }
        let body = self.body(&operation_id);
        let retry_after = body
            .details
            .extra
            .get(RETRY_AFTER_DETAIL)
            .and_then(Value::as_u64);
        let status =
            StatusCode::from_u16(body.status_code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, crate::response::Json(body)).into_response();
        if let Ok(value) = HeaderValue::from_str(&operation_id) {
            response.headers_mut().insert(OPERATION_ID_HEADER, value);
        }
        if let Some(secs) = retry_after {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, HeaderValue::from(secs));
        }
        // HTTP requires a 401 to say how to authenticate (RFC 9110, 11.6.1).
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}
