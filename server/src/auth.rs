//! Who is calling: the `Service-Version` check and the Bearer API key (docs/api/README.md,
//! docs/accounts.md), as one extractor every API handler takes. The version is checked first, so a
//! client talking another version of the API learns that before anything else.

use crate::error::{ApiError, OPERATION_ID};
use crate::paging;
use crate::state::AppState;
use crate::store::Cause;
use axum::extract::{FromRequestParts, MatchedPath};
use axum::http::Method;
use axum::http::request::Parts;
use tunnel_core::errors::ErrorCode;
use tunnel_core::paths::{self, API_PREFIX, SUPPORTED_VERSION, VERSION_HEADER};
use tunnel_core::resources::event::{Actor, EVENT_FILTERS};

/// The authenticated principal of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub account_id: String,
    /// The user (`usr_…`) or bot (`bot_…`) holding the API key.
    pub principal_id: String,
    pub is_admin: bool,
    /// The API key (`ak_…`) the request was made with.
    pub api_key_id: String,
}

impl Caller {
    /// The caller as the audit log records it, with the request's operation id.
    pub fn cause(&self) -> Cause {
        Cause {
            actor: Actor::principal(&self.principal_id, &self.api_key_id),
            operation_id: OPERATION_ID.try_with(Clone::clone).ok(),
        }
    }
}

/// Checks the `Service-Version` header alone.
pub fn check_version(parts: &Parts) -> Result<(), ApiError> {
    match parts.headers.get(VERSION_HEADER) {
        None => Err(ApiError::new(
            ErrorCode::MissingVersion,
            format!("The {VERSION_HEADER} header is missing; send `{VERSION_HEADER}: {SUPPORTED_VERSION}`."),
        )
        .with_detail("supported_version", SUPPORTED_VERSION)),
        Some(v) if v.as_bytes().trim_ascii() == SUPPORTED_VERSION.as_bytes() => Ok(()),
        Some(v) => {
            let shown: String = String::from_utf8_lossy(v.as_bytes()).chars().take(32).collect();
            Err(ApiError::new(
                ErrorCode::UnsupportedVersion,
                format!("{VERSION_HEADER} `{shown}` is not supported; the supported version is `{SUPPORTED_VERSION}`."),
            )
            .with_detail("supported_version", SUPPORTED_VERSION))
        }
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Caller, ApiError> {
        check_version(parts)?;
        let header = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::MissingAuthorization,
                    "The Authorization header is missing; send `Authorization: Bearer <API key>`.",
                )
            })?;
        let malformed = || {
            ApiError::new(
                ErrorCode::MalformedAuthorization,
                "The Authorization header must be of the form `Bearer <API key>`.",
            )
        };
        let text = header.to_str().map_err(|_| malformed())?;
        let (scheme, key) = text.trim().split_once(' ').ok_or_else(malformed)?;
        let key = key.trim();
        if !scheme.eq_ignore_ascii_case("bearer")
            || key.is_empty()
            || key.contains(char::is_whitespace)
        {
            return Err(malformed());
        }
        let owner = state
            .store
            .authenticate_api_key(key)
            .await?
            .ok_or_else(unknown_api_key)?;
        check_query(parts)?;
        Ok(Caller {
            account_id: owner.account_id,
            principal_id: owner.principal_id,
            is_admin: owner.is_admin,
            api_key_id: owner.api_key_id,
        })
    }
}

/// The 401 of a key that no account holds (never issued, or deleted).
pub fn unknown_api_key() -> ApiError {
    ApiError::new(
        ErrorCode::InvalidApiKey,
        "The API key is unknown or revoked.",
    )
}

/// Unknown query parameters are a 400 (docs/api/README.md, lists and paging): list operations
/// accept `limit` and `before_id`, with the search `q` (resources and sessions) or the audit
/// log's filters; every other operation none.
fn check_query(parts: &Parts) -> Result<(), ApiError> {
    let Some(query) = parts.uri.query() else {
        return Ok(());
    };
    let matched = parts
        .extensions
        .get::<MatchedPath>()
        .map(MatchedPath::as_str)
        .unwrap_or_default();
    let relative = matched.strip_prefix(API_PREFIX).unwrap_or(matched);
    let is_list = parts.method == Method::GET && LIST_PATHS.contains(&relative);
    let events: Vec<&str> = paging::LIST_PARAMS
        .into_iter()
        .chain(EVENT_FILTERS)
        .collect();
    let searchable: Vec<&str> = paging::LIST_PARAMS
        .into_iter()
        .chain([paging::SEARCH_PARAM])
        .collect();
    let accepted: &[&str] = match (is_list, relative) {
        (true, paths::EVENTS) => &events,
        (true, list) if paging::takes_search(list) => &searchable,
        (true, _) => &paging::LIST_PARAMS,
        (false, _) => &[],
    };
    paging::check_query_names(Some(query), accepted)
}

/// The list operations: the collection paths, and the one list below a resource.
const LIST_PATHS: [&str; 10] = [
    paths::API_KEYS,
    paths::CREDENTIALS,
    paths::SSH_CERTIFICATE_AUTHORITIES,
    paths::TUNNEL_SESSIONS,
    paths::TLS_EDGES,
    paths::TUNNEL_GROUP_BACKENDS,
    paths::EVENT_DESTINATIONS,
    paths::EVENT_SUBSCRIPTIONS,
    paths::EVENTS,
    paging::DELIVERIES,
];
