//! Tunnel credentials (docs/api/credentials.md): create (the only response carrying the token),
//! update (description, metadata, acl), and the generic list, get and delete; a delete also
//! disconnects the sessions the credential opened.

use super::resource::{self, Resource};
use super::{Path, check_body_id, text};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::json::JsonBody;
use crate::state::AppState;
use crate::store::{CredentialChanges, CredentialRow};
use axum::extract::State;
use axum::routing::patch;
use axum::{Json, Router};
use tunnel_core::Validate as _;
use tunnel_core::errors::ErrorCode;
use tunnel_core::paths;
use tunnel_core::resources::credential::{
    Credential, CredentialCreate, CredentialList, CredentialUpdate,
};
use tunnel_core::resources::given;

pub fn router() -> Router<AppState> {
    resource::router::<Credentials>().route(&Credentials::path("{id}"), patch(update))
}

/// The tunnel credentials of an account.
#[derive(Debug)]
pub struct Credentials;

impl Resource for Credentials {
    const PATH: &'static str = paths::CREDENTIALS;
    type Row = CredentialRow;
    type Page = CredentialList;
    type Create = CredentialCreate;

    fn path(id: &str) -> String {
        paths::credential(id)
    }

    /// Without the token, which only the creation answers with.
    fn wire(state: &AppState, row: CredentialRow) -> Credential {
        Credential {
            uri: state.uri(&Self::path(&row.id)),
            id: row.id,
            created_at: row.created_at,
            description: row.description,
            metadata: row.metadata,
            token: None,
            acl: row.acl,
            owner_id: row.owner_id,
        }
    }

    async fn create(
        state: &AppState,
        caller: &Caller,
        req: CredentialCreate,
    ) -> ApiResult<Credential> {
        let owner_id = owner(state, caller, given(&req.owner_id)).await?;
        let (description, metadata) = (text(&req.description), text(&req.metadata));
        let acl = req.acl.as_deref().unwrap_or_default();
        let created = state
            .store
            .create_credential(&caller.account_id, description, metadata, acl, &owner_id)
            .await?;
        tracing::info!(credential_id = %created.row.id, "credential created");
        Ok(Credential {
            token: Some(created.token),
            ..Self::wire(state, created.row)
        })
    }

    /// Its authtoken no longer authenticates: disconnect the sessions it opened
    /// (docs/agent-channel.md). The row is gone first, so a session opening meanwhile sees
    /// its token fail.
    fn deleted(state: &AppState, id: &str) {
        let closed = state.registry.close_credential(id);
        tracing::info!(credential_id = %id, sessions_closed = closed.len(), "credential deleted");
    }
}

/// The owner of a new credential (docs/accounts.md): the caller by default; only admins may
/// name someone else, and that someone must be a principal of the account.
async fn owner(state: &AppState, caller: &Caller, named: Option<&str>) -> ApiResult<String> {
    let owner = match named {
        Some(owner) if owner != caller.principal_id => owner,
        _ => return Ok(caller.principal_id.clone()),
    };
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
    Ok(owner.to_owned())
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
        .await?;
    Ok(Json(Credentials::wire(&state, row)))
}
