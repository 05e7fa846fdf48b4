//! The HTTP routes: the API under `/api`, one module per area (docs/api/<area>.md), each with
//! its own `router()`, merged here; the generic handlers of stored resources ([`resource`]); the
//! OpenAPI document; and, outside `/api`, the agent channel's upgrade ([`agent_channel`]) and
//! the routes nodes of a cluster call on each other ([`cluster`]).
//! Every API handler takes the [`crate::auth::Caller`] extractor (version + API key + query
//! check) and scopes everything by the caller's account.

pub mod agent_channel;
pub mod api_keys;
pub mod backends;
pub mod cluster;
pub mod credentials;
pub mod event_destinations;
pub mod event_subscriptions;
pub mod events;
pub mod me;
pub mod openapi;
pub mod resource;
pub mod ssh_cas;
pub mod tls_edges;
pub mod tunnel_sessions;
pub mod users;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::json::JsonBody;
use crate::state::AppState;
use crate::store::{Audit, Cause};
use axum::Router;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tunnel_core::errors::ErrorCode;

/// Every route of the API (relative to `/api`).
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(credentials::router())
        .merge(api_keys::router())
        .merge(me::router())
        .merge(users::router())
        .merge(ssh_cas::router())
        .merge(tunnel_sessions::router())
        .merge(tls_edges::router())
        .merge(backends::router())
        .merge(event_destinations::router())
        .merge(event_subscriptions::router())
        .merge(events::router())
        .merge(openapi::router())
}

/// `axum::extract::Path` whose rejection is an [`ApiError`]: a path parameter that does not
/// decode (`/credentials/%FF`) gets the JSON error body with an operation id, like every other
/// API error, instead of axum's plain-text 400. Every API handler uses this one.
#[derive(Debug, Clone, Copy)]
pub struct Path<T>(pub T);

impl<S, T> FromRequestParts<S> for Path<T>
where
    T: serde::de::DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        // No id holds NUL: such a path names nothing (404, as for any unknown id), and is never
        // handed to the database (PostgreSQL refuses NUL in text).
        if parts.uri.path().contains("%00") {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                "No resource has an id holding the NUL character (%00).",
            ));
        }
        let axum::extract::Path(value) =
            axum::extract::Path::<T>::from_request_parts(parts, state).await?;
        Ok(Path(value))
    }
}

/// A request about one resource with a body: `PATCH` of a resource, `PUT` of a TLS edge's
/// backend module, `POST` of an agent command. Extracted in the order every handler had them:
/// the caller (version, API key, query), the path id, then the JSON body, whose `id` is checked
/// against the path's ([`check_body_id`]). Validating the body is left to the handler, which
/// decides whether a missing resource (404) is reported first.
#[derive(Debug)]
pub struct Change<T> {
    pub state: AppState,
    pub caller: Caller,
    /// The caller as the audit log records it.
    pub cause: Cause,
    /// The id in the path.
    pub id: String,
    pub body: T,
}

impl<T> Change<T> {
    /// How the store records this change to an `R`.
    pub fn audit<R: resource::Resource>(&self) -> Audit<'_, R::Row> {
        R::audit(&self.state, &self.cause)
    }
}

/// A request body that may repeat the path's id.
pub trait BodyId {
    /// The body's name for that id, as errors name it.
    const FIELD: &'static str = "id";
    fn body_id(&self) -> &Option<String>;
}

/// Implements a trait whose one method answers a reference to the type's `id` field, for each
/// of the wire types listed (which are `tunnel-core`'s, so the trait cannot be derived there).
macro_rules! id_field {
    ($trait:ident::$method:ident -> $out:ty: $($ty:ty),* $(,)?) => {
        $(impl $trait for $ty {
            fn $method(&self) -> &$out {
                &self.id
            }
        })*
    };
}
pub(crate) use id_field;

id_field!(BodyId::body_id -> Option<String>:
    tunnel_core::resources::credential::CredentialUpdate,
    tunnel_core::resources::api_key::ApiKeyUpdate,
    tunnel_core::resources::ssh_ca::SshCertificateAuthorityUpdate,
    tunnel_core::resources::tls_edge::TlsEdgeBackendReplace,
    tunnel_core::resources::tls_edge::TlsEdgeUpdate,
    tunnel_core::resources::backend::TunnelGroupBackendUpdate,
    tunnel_core::resources::event_subscription::EventSubscriptionUpdate,
    tunnel_core::resources::event_destination::EventDestinationUpdate,
    tunnel_core::resources::tunnel_session::AgentCommandRequest,
);

impl<T: DeserializeOwned + Serialize + BodyId + Send> FromRequest<AppState> for Change<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Change<T>, ApiError> {
        let (mut parts, body) = request.into_parts();
        let caller = Caller::from_request_parts(&mut parts, state).await?;
        let Path(id) = Path::<String>::from_request_parts(&mut parts, state).await?;
        let request = Request::from_parts(parts, body);
        let JsonBody(body) = JsonBody::<T>::from_request(request, state).await?;
        check_body_id(T::FIELD, body.body_id(), &id)?;
        Ok(Change {
            state: state.clone(),
            cause: caller.cause(),
            caller,
            id,
            body,
        })
    }
}

/// Tolerance (docs/api/README.md): a body `id` equal to the path id is accepted and ignored;
/// another id is a mistake worth reporting rather than silently updating a different resource.
fn check_body_id(field: &str, body_id: &Option<String>, path_id: &str) -> Result<(), ApiError> {
    match body_id.as_deref() {
        Some(id) if !id.is_empty() && id != path_id => Err(ApiError::new(
            ErrorCode::InvalidField,
            format!("The body's {field} `{id}` differs from the id in the path; leave it out or make them equal."),
        )
        .with_field(field)),
        _ => Ok(()),
    }
}

/// The owner of a new credential or API key (docs/accounts.md), `what` naming it in errors: the
/// caller by default; only admins may name someone else, and that someone must be a principal
/// of the account.
pub(crate) async fn owner(
    state: &AppState,
    caller: &Caller,
    named: Option<&str>,
    what: &str,
) -> Result<String, ApiError> {
    let owner = match named {
        Some(owner) if owner != caller.principal_id => owner,
        _ => return Ok(caller.principal_id.clone()),
    };
    if !caller.is_admin {
        return Err(ApiError::new(
            ErrorCode::OwnerForbidden,
            format!("Only admins may create {what} owned by someone else; leave `owner_id` out to own it yourself."),
        )
        .with_field("owner_id"));
    }
    if !state
        .store
        .principal_exists(&caller.account_id, owner)
        .await?
    {
        return Err(ApiError::new(
            ErrorCode::UnknownOwner,
            format!("owner_id `{owner}` is not a user or bot of this account."),
        )
        .with_field("owner_id"));
    }
    Ok(owner.to_owned())
}

/// An optional text field of a create request: absent, `null` and `""` all store `""`.
pub(crate) fn text(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or_default()
}
