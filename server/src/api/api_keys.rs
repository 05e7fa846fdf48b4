//! API keys (docs/api/api_keys.md, an extension shaped as ngrok's): create (the only response
//! carrying the key, in `token`), update (description, metadata), and the generic list, get and
//! delete. A deleted key is revoked at once: the store forgets the keys it authenticated
//! recently, and every other node of the cluster is told to forget them too before the delete is
//! answered (`store::key_cache`). A member reaches only their own keys; an admin every key of
//! the account.

use super::resource::{self, New, Resource as _, declare_resource};
use super::{Change, owner, text};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::store::{ApiKeyRow, Cause, Scope};
use axum::Router;
use tunnel_core::paths;
use tunnel_core::resources::api_key::{ApiKey, ApiKeyCreate, ApiKeyList, ApiKeyUpdate};
use tunnel_core::resources::given;

declare_resource! {
    /// The API keys of an account. The wire form carries no key: only the creation answers
    /// with it.
    ApiKeys at paths::API_KEYS, paths::api_key;
    ApiKeyRow => ApiKeyList, created from ApiKeyCreate => create;
    updated from ApiKeyUpdate => update;
    scope => scope;
    deleted => revoked;
    wire(state, row) => ApiKey { token: None, owner_id: row.principal_id }
}

pub fn router() -> Router<AppState> {
    resource::updatable_router::<ApiKeys>()
}

/// Admins reach every key of the account, members their own: another's key answers 404.
fn scope(caller: &Caller) -> Scope<'_> {
    if caller.is_admin {
        Scope::from(&caller.account_id)
    } else {
        Scope::owned_by(&caller.account_id, &caller.principal_id)
    }
}

/// The other nodes forget the keys they authenticated recently, so the deleted one is a 401
/// everywhere from the delete's answer on. In a task of its own, so a client hanging up does not
/// cancel it; the answer still waits for it.
async fn revoked(state: &AppState, _account_id: &str, id: &str, _cause: &Cause) {
    let (node, store) = (state.node.clone(), state.store.clone());
    let told = tokio::spawn(async move { node.forget_api_keys_everywhere(&store).await })
        .await
        .unwrap_or(0);
    tracing::info!(api_key_id = %id, nodes_told = told, "API key deleted");
}

async fn create(new: New<'_, ApiKeyCreate>) -> ApiResult<ApiKey> {
    let (state, req) = (new.state, &new.request);
    let owner_id = owner(state, new.caller, given(&req.owner_id), "an API key").await?;
    let created = state
        .store
        .create_api_key(
            new.account(),
            text(&req.description),
            text(&req.metadata),
            &owner_id,
            &new.audit::<ApiKeys>(),
        )
        .await?;
    tracing::info!(api_key_id = %created.row.id, owner_id = %owner_id, "API key created");
    Ok(ApiKey {
        token: Some(created.key.into_inner()),
        ..ApiKeys::wire(state, created.row)
    })
}

async fn update(change: Change<ApiKeyUpdate>) -> ApiResult<ApiKeyRow> {
    let audit = ApiKeys::audit(&change.state, &change.cause);
    let body = change.body;
    let row = change.state.store.update_api_key(
        scope(&change.caller),
        &change.id,
        body.description,
        body.metadata,
        &audit,
    );
    Ok(row.await?)
}
