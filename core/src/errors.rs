//! The error body of the wire, the catalogue of stable error codes, the crate's one error
//! enum, and how much of what was sent a message may quote (`bounded_message`, shared by the
//! server's bodies and the console's messages). Every code, its status and meaning:
//! `docs/errors.md`.
//!
//! Every distinct cause of failure has one `ErrorCode` with a fixed `ERR_TUNNEL_<n>` string and
//! HTTP status. Codes are never renumbered: clients and scripts match on them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The longest a value quoted in a message (between backticks: what the caller sent) is shown
/// in full; a longer one is cut, with `…`.
pub const QUOTED_CHARS: usize = 64;
/// The longest message; only one whose quoting was tricked (a value holding backticks) nears it.
pub const MESSAGE_CHARS: usize = 1024;
/// The longest field name shown (a label key, an unknown field's name are the caller's).
pub const FIELD_CHARS: usize = 128;

/// A value the caller sent, as a message quotes it: cut to [`QUOTED_CHARS`] with `…`.
pub fn quoted(text: &str) -> String {
    shorten(text, QUOTED_CHARS)
}

/// `text` cut after `limit` characters, with `…`.
pub fn shorten(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// `text` with each backticked span cut to [`QUOTED_CHARS`], then the whole to
/// [`MESSAGE_CHARS`]: a message that echoes what was sent, bounded however much was sent. The
/// server's error bodies and the console's messages (its live checks quote what is typed) are
/// cut the same way.
pub fn bounded_message(text: &str) -> String {
    if text.len() <= QUOTED_CHARS {
        return text.to_owned();
    }
    let parts: Vec<String> = text
        .split('`')
        .enumerate()
        // Odd parts are inside backticks (an unclosed last one too).
        .map(|(i, part)| match i % 2 {
            1 => shorten(part, QUOTED_CHARS),
            _ => part.to_owned(),
        })
        .collect();
    shorten(&parts.join("`"), MESSAGE_CHARS)
}

/// One problem with one field of a request: what the console shows under the field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FieldError {
    /// The field's JSON name; list items as `acl[2]`, nested as `sources[0].type`.
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

macro_rules! error_codes {
    ($($variant:ident = $num:literal, $status:literal, $title:literal;)*) => {
        /// Every stable error code of the API, in one place.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode { $($variant,)* }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The wire string, e.g. `ERR_TUNNEL_100`.
            pub const fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => concat!("ERR_TUNNEL_", $num),)* }
            }

            /// The HTTP status that goes with the code.
            pub const fn status(self) -> u16 {
                match self { $(ErrorCode::$variant => $status,)* }
            }

            /// A short title of the cause, for documentation and as a fallback message.
            pub const fn title(self) -> &'static str {
                match self { $(ErrorCode::$variant => $title,)* }
            }

            pub fn parse(code: &str) -> Option<ErrorCode> {
                ErrorCode::ALL.iter().copied().find(|c| c.as_str() == code)
            }
        }
    };
}

error_codes! {
    MissingVersion = 100, 400, "The Service-Version header is missing.";
    UnsupportedVersion = 101, 400, "The Service-Version header names an unsupported version.";
    MissingAuthorization = 102, 401, "The Authorization header is missing.";
    MalformedAuthorization = 103, 401, "The Authorization header is not of the form `Bearer <API key>`.";
    InvalidApiKey = 104, 401, "The API key is unknown or revoked.";
    MalformedJson = 110, 400, "The request body is not valid JSON of the expected shape.";
    UnknownField = 111, 400, "The request body has a field the operation does not accept.";
    BodyTooLarge = 112, 413, "The request body is larger than 1 MiB.";
    UnsupportedMediaType = 113, 415, "The request body must be sent as Content-Type: application/json.";
    InvalidField = 114, 400, "A field of the request is invalid.";
    UnknownQueryParameter = 115, 400, "The request has a query parameter the operation does not accept.";
    InvalidQueryParameter = 116, 400, "A query parameter is invalid.";
    WebhookAddressRefused = 117, 400, "The webhook URL's host is not a public address.";
    BodyTimeout = 118, 408, "The request body did not arrive in time.";
    NotFound = 120, 404, "The resource does not exist.";
    ReferenceNotFound = 121, 400, "A resource named in the request body does not exist.";
    InUse = 122, 409, "The resource is still referenced by another resource.";
    OwnerForbidden = 123, 403, "Only admins may create a credential or API key owned by someone else.";
    UnknownOwner = 124, 400, "The owner is not a user or bot of this account.";
    RouteNotFound = 130, 404, "No API operation exists at this path.";
    MethodNotAllowed = 131, 405, "The operation does not accept this HTTP method.";
    RestartUnsupported = 140, 409, "The agent runs on Windows, where restart is not supported.";
    NoUpdateAvailable = 141, 409, "No newer agent version of the same major version is available.";
    UpdateChecksDisabled = 142, 409, "The agent's configuration disabled update checks.";
    UpdateInProgress = 143, 409, "The agent is currently updating.";
    UpdatedNotRestarted = 144, 409, "The agent has already updated and must be restarted first.";
    AgentTimeout = 145, 504, "The agent did not acknowledge the command in time.";
    AgentAuthFailed = 150, 401, "The authtoken is unknown or its credential was deleted.";
    BindNotPermitted = 151, 403, "A requested bind is not permitted by the credential's ACL.";
    InvalidHello = 152, 400, "The agent's hello message is invalid.";
    CredentialDeleted = 153, 410, "The credential of this session was deleted.";
    KeyGenerationBusy = 160, 503, "Too many SSH keys are being generated right now; retry shortly.";
    AgentsBusy = 161, 503, "Too many agents are connecting right now; retry shortly.";
    RateLimited = 170, 429, "Too many requests; retry after the time the Retry-After header gives.";
    AuthFailuresLimited = 171, 429, "Too many unknown API keys came from this address; retry after the time the Retry-After header gives.";
    Internal = 199, 500, "Internal server error.";
    RestartDuringUpdate = 146, 409, "The agent is applying an update; restart it once the update has finished.";
    RestartTooSoon = 147, 409, "The agent finished an update less than 10 seconds ago; restart it when the wait is over.";
}

/// The JSON body of every error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub error_code: String,
    pub status_code: u16,
    pub msg: String,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    #[serde(default)]
    pub details: ErrorDetails,
}

/// `details` of an error body: the operation id, the offending field, and every field error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorDetails {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub operation_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// All field errors when validation found several.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
    /// Anything else that helps (accepted fields, supported version, …).
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl ErrorBody {
    pub fn new(code: ErrorCode, msg: impl Into<String>) -> ErrorBody {
        ErrorBody {
            error_code: code.as_str().to_owned(),
            status_code: code.status(),
            msg: msg.into(),
            details: ErrorDetails::default(),
        }
    }

    /// The body for failed validation: the first error's message and field, and all errors.
    pub fn invalid(errors: Vec<FieldError>) -> ErrorBody {
        let mut body = match errors.as_slice() {
            [] => ErrorBody::new(ErrorCode::InvalidField, ErrorCode::InvalidField.title()),
            [only] => ErrorBody::new(ErrorCode::InvalidField, only.message.clone()),
            [first, rest @ ..] => ErrorBody::new(
                ErrorCode::InvalidField,
                format!(
                    "{} (and {} more problem{})",
                    first.message,
                    rest.len(),
                    if rest.len() == 1 { "" } else { "s" }
                ),
            ),
        };
        body.details.field = errors.first().map(|e| e.field.clone());
        body.details.errors = errors;
        body
    }

    pub fn code(&self) -> Option<ErrorCode> {
        ErrorCode::parse(&self.error_code)
    }

    /// The message for one field, from `details.errors` (or `details.field` for single errors).
    pub fn field_message(&self, field: &str) -> Option<&str> {
        self.details
            .errors
            .iter()
            .find(|e| e.field == field)
            .map(|e| e.message.as_str())
            .or_else(|| (self.details.field.as_deref() == Some(field)).then_some(self.msg.as_str()))
    }
}

/// The one error enum of `tunnel-core`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A request failed validation; every problem found is listed.
    #[error("{}", .0.first().map(|e| e.message.as_str()).unwrap_or("invalid request"))]
    Invalid(Vec<FieldError>),
    #[error(transparent)]
    Id(#[from] crate::ids::IdError),
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Invalid(_) => ErrorCode::InvalidField,
            Error::Id(_) => ErrorCode::InvalidField,
        }
    }
}

/// Turns a list of problems into a result.
pub fn collect(errors: Vec<FieldError>) -> Result<(), Error> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn a_message_quotes_at_most_64_characters_of_a_value() {
        let long = "x".repeat(10_000);
        let bounded = bounded_message(&format!("`{long}` contains whitespace; remove it"));
        assert_eq!(
            bounded,
            format!("`{}…` contains whitespace; remove it", "x".repeat(64))
        );
        // Short messages are left as they are, an unclosed quote is cut too, and the whole is
        // bounded when backticks trick the quoting.
        assert_eq!(
            bounded_message("`a` is listed twice"),
            "`a` is listed twice"
        );
        assert!(bounded_message(&format!("`{long}")).ends_with("x…"));
        let tricked = format!("{long}`{long}`{long}");
        assert_eq!(bounded_message(&tricked).chars().count(), MESSAGE_CHARS + 1);
        assert_eq!(quoted("héllo"), "héllo");
    }

    #[test_case]
    fn codes_are_unique_and_stable() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "duplicate {}", code.as_str());
            assert!(code.as_str().starts_with("ERR_TUNNEL_"));
            assert_eq!(ErrorCode::parse(code.as_str()), Some(*code));
            assert!((400..600).contains(&code.status()));
        }
        assert_eq!(ErrorCode::MissingVersion.as_str(), "ERR_TUNNEL_100");
        assert_eq!(ErrorCode::NotFound.status(), 404);
    }

    #[test_case]
    fn invalid_body_lists_every_error() {
        let body = ErrorBody::invalid(vec![
            FieldError::new("description", "too long"),
            FieldError::new("acl[0]", "bad rule"),
        ]);
        assert_eq!(body.status_code, 400);
        assert_eq!(body.details.field.as_deref(), Some("description"));
        assert_eq!(body.field_message("acl[0]"), Some("bad rule"));
        let json = serde_json::to_value(&body).unwrap();
        assert_eq!(json["details"]["errors"][1]["field"], "acl[0]");
        let back: ErrorBody = serde_json::from_value(json).unwrap();
        assert_eq!(back, body);
    }
}
