//! Tunnel credentials (spec part 4): create (the only response carrying the token), list, get,
//! update (description, metadata, acl), delete (which also disconnects its sessions).

use super::{Path, check_body_id, text};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::json::JsonBody;
use crate::paging;
use crate::state::AppState;
use crate::store::{CredentialChanges, CredentialRow};
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use tunnel_core::Validate as _;
use tunnel_core::errors::ErrorCode;
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::credential::{
    Credential, CredentialCreate, CredentialList, CredentialUpdate,
};
use tunnel_core::resources::given;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::CREDENTIALS, get(list).post(create))
        .route(
            &paths::credential("{id}"),
            get(read).patch(update).delete(delete),
        )
}

fn wire(state: &AppState, row: CredentialRow, token: Option<String>) -> Credential {
    Credential {
        uri: state.uri(&paths::credential(&row.id)),
        id: row.id,
        created_at: row.created_at,
        description: row.description,
        metadata: row.metadata,
        token,
        acl: row.acl,
        owner_id: row.owner_id,
    }
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(req): JsonBody<CredentialCreate>,
) -> ApiResult<(StatusCode, Json<Credential>)> {
    req.validate()?;
    // DESIGN §6: the owner defaults to the caller; only admins may name someone else, and that
    // someone must be a principal of the account.
    let owner_id = match given(&req.owner_id) {
        None => caller.principal_id.clone(),
        Some(owner) if owner == caller.principal_id => caller.principal_id.clone(),
        Some(owner) => {
            if !caller.is_admin {
                return Err(ApiError::new(
                    ErrorCode::OwnerForbidden,
                    "Only admins may create a credential owned by someone else; leave owner_id out to own it yourself.",
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
            owner.to_owned()
        }
    };
    let created = state
        .store
        .create_credential(
            &caller.account_id,
            text(&req.description),
            text(&req.metadata),
            req.acl.as_deref().unwrap_or_default(),
            &owner_id,
        )
        .await?;
    tracing::info!(credential_id = %created.row.id, "credential created");
    Ok((
        StatusCode::CREATED,
        Json(wire(&state, created.row, Some(created.token))),
    ))
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<CredentialList>> {
    let page = paging::parse(query.as_deref(), IdKind::Credential)?;
    let rows = state
        .store
        .list_credentials(&caller.account_id, &page)
        .await?;
    let (rows, next_page_uri) = paging::finish(&state, paths::CREDENTIALS, &page, rows, |r| &r.id);
    Ok(Json(CredentialList {
        credentials: rows.into_iter().map(|r| wire(&state, r, None)).collect(),
        uri: state.uri(paths::CREDENTIALS),
        next_page_uri,
    }))
}

async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Credential>> {
    let row = state
        .store
        .get_credential(&caller.account_id, &id)
        .await?
        .ok_or_else(|| ApiError::not_found(IdKind::Credential, &id))?;
    Ok(Json(wire(&state, row, None)))
}

async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<CredentialUpdate>,
) -> ApiResult<Json<Credential>> {
    check_body_id(&req.id, &id)?;
    req.validate()?;
    let changes = CredentialChanges {
        description: req.description,
        metadata: req.metadata,
        acl: req.acl,
    };
    let row = state
        .store
        .update_credential(&caller.account_id, &id, changes)
        .await?
        .ok_or_else(|| ApiError::not_found(IdKind::Credential, &id))?;
    Ok(Json(wire(&state, row, None)))
}

async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    if !state
        .store
        .delete_credential(&caller.account_id, &id)
        .await?
    {
        return Err(ApiError::not_found(IdKind::Credential, &id));
    }
    // Its authtoken no longer authenticates: disconnect the sessions it opened (DESIGN §7).
    let closed = state.registry.close_credential(&id);
    tracing::info!(credential_id = %id, sessions_closed = closed.len(), "credential deleted");
    Ok(StatusCode::NO_CONTENT)
}
