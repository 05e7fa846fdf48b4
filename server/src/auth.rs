//! Who is calling: the `Service-Version` check and the Bearer API key (docs/api/README.md,
//! docs/accounts.md), as one extractor every API handler takes. The version is checked first, so a
//! client talking another version of the API learns that before anything else.
//!
//! And how fast (docs/rate-limits.md): [`throttle`], the middleware of every API request, applies
//! the per-IP limit and the lock-out after failed authentications before anything else runs; the
//! extractor applies the per-key limit once it knows the key, and counts unknown keys. A refusal
//! is a 429 with `Retry-After` and the `RateLimit-*` headers.

use crate::error::{ApiError, OPERATION_ID};
use crate::paging;
use crate::ratelimit::{Refusal, Scope, Standing};
use crate::state::AppState;
use crate::store::Cause;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::{FromRequestParts, MatchedPath, Request, State};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use tunnel_core::errors::ErrorCode;
use tunnel_core::paths::{
    self, API_PREFIX, OFFICIAL_VERSION_HEADER, SUPPORTED_VERSION, VERSION_HEADER,
};
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

/// Checks the version header alone: `Service-Version`, or when it is absent the official
/// clients' `Ngrok-Version` (the message names the header the request sent).
pub fn check_version(parts: &Parts) -> Result<(), ApiError> {
    let sent = [VERSION_HEADER, OFFICIAL_VERSION_HEADER]
        .into_iter()
        .find_map(|name| Some((name, parts.headers.get(name)?)));
    match sent {
        None => Err(ApiError::new(
            ErrorCode::MissingVersion,
            format!("The {VERSION_HEADER} header is missing; send `{VERSION_HEADER}: {SUPPORTED_VERSION}`."),
        )
        .with_detail("supported_version", SUPPORTED_VERSION)),
        Some((_, v)) if v.as_bytes().trim_ascii() == SUPPORTED_VERSION.as_bytes() => Ok(()),
        Some((name, v)) => {
            let shown: String = String::from_utf8_lossy(v.as_bytes()).chars().take(32).collect();
            Err(ApiError::new(
                ErrorCode::UnsupportedVersion,
                format!("{name} `{shown}` is not supported; the supported version is `{SUPPORTED_VERSION}`."),
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
        let Some(owner) = state.store.authenticate_api_key(key).await? else {
            if let Some(ip) = peer_ip(&parts.extensions) {
                state.limits.authentication_failed(ip);
            }
            return Err(unknown_api_key());
        };
        if let Some(standing) = state.limits.api_key(&owner.api_key_id) {
            let slot = parts.extensions.get::<StandingSlot>();
            let shown = standing.unwrap_or_else(|refusal| refusal.standing);
            if let Some(slot) = slot {
                slot.put(shown);
            }
            standing.map_err(refusal_error)?;
        }
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
    // Under `/api` on the main listener, at the root on `--api-listen` (where `/api_keys` is
    // not `/api` followed by `_keys`).
    let relative = matched
        .strip_prefix(API_PREFIX)
        .filter(|rest| rest.starts_with('/'))
        .unwrap_or(matched);
    // The list operations: the collections, and the one list below a resource.
    let is_list = parts.method == Method::GET
        && (paths::COLLECTIONS.contains(&relative) || relative == paging::DELIVERIES);
    let events: Vec<&str> = paging::LIST_PARAMS
        .into_iter()
        .chain(EVENT_FILTERS)
        .collect();
    let searchable: Vec<&str> = paging::LIST_PARAMS
        .into_iter()
        .chain([paging::SEARCH_PARAM, paging::ORDER_PARAM])
        .collect();
    let accepted: &[&str] = match (is_list, relative) {
        (true, paths::EVENTS) => &events,
        (true, list) if paging::takes_search(list) => &searchable,
        (true, _) => &paging::LIST_PARAMS,
        (false, _) => &[],
    };
    paging::check_query_names(Some(query), accepted)
}

/// The client's address, when the server is served with connect info (as `serve` is; in-process
/// router tests have none, and no per-IP limit).
pub fn peer_ip(extensions: &Extensions) -> Option<IpAddr> {
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip().to_canonical())
}

/// Where the extractor leaves the request's per-key standing for [`throttle`] to put in the
/// response's headers (the extractor cannot touch the response).
#[derive(Debug, Clone, Default)]
struct StandingSlot(Arc<Mutex<Option<Standing>>>);

impl StandingSlot {
    fn put(&self, standing: Standing) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(standing);
    }

    fn take(&self) -> Option<Standing> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// The `RateLimit-*` headers (the IETF draft's names, as most APIs send them).
pub const RATE_LIMIT_LIMIT: &str = "ratelimit-limit";
pub const RATE_LIMIT_REMAINING: &str = "ratelimit-remaining";
pub const RATE_LIMIT_RESET: &str = "ratelimit-reset";

fn set_standing(headers: &mut HeaderMap, standing: Standing) {
    headers.insert(RATE_LIMIT_LIMIT, HeaderValue::from(standing.limit));
    headers.insert(RATE_LIMIT_REMAINING, HeaderValue::from(standing.remaining));
    headers.insert(RATE_LIMIT_RESET, HeaderValue::from(standing.reset_secs));
}

/// The middleware of every API request: the per-IP limit, then the lock-out of an address
/// whose unknown keys emptied its bucket (only for requests that carry a key, so a locked-out
/// address still learns the API is there); the per-key standing goes into the headers after.
pub async fn throttle(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    if let Some(ip) = peer_ip(request.extensions()) {
        let checked = state.limits.ip(ip).and_then(|()| {
            if request.headers().contains_key(header::AUTHORIZATION) {
                state.limits.may_authenticate(ip)
            } else {
                Ok(())
            }
        });
        if let Err(refusal) = checked {
            return refused(refusal);
        }
    }
    let slot = StandingSlot::default();
    request.extensions_mut().insert(slot.clone());
    let mut response = next.run(request).await;
    if let Some(standing) = slot.take() {
        set_standing(response.headers_mut(), standing);
    }
    response
}

/// The 429 of a refusal, with its `RateLimit-*` headers.
pub fn refused(refusal: Refusal) -> Response {
    let mut response = refusal_error(refusal).into_response();
    set_standing(response.headers_mut(), refusal.standing);
    response
}

/// The error of a refusal: its own code, the limit in `details.limit`, and when to retry.
fn refusal_error(refusal: Refusal) -> ApiError {
    let secs = refusal.retry_after_secs;
    let (code, what) = match refusal.scope {
        Scope::ApiKey => (
            ErrorCode::RateLimited,
            "Too many requests with this API key",
        ),
        Scope::Ip => (
            ErrorCode::RateLimited,
            "Too many requests from this address",
        ),
        Scope::AgentConnects => (
            ErrorCode::RateLimited,
            "Too many agent connections from this address",
        ),
        Scope::AuthFailures => (
            ErrorCode::AuthFailuresLimited,
            "Too many unknown API keys came from this address",
        ),
    };
    ApiError::new(code, format!("{what}; retry in {secs} s."))
        .with_detail("limit", refusal.scope.as_str())
        .with_retry_after(secs)
}
