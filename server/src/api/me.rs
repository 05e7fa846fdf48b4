//! `GET /me` (docs/api/api_keys.md, an extension): who the request's API key acts as, so a
//! client (the console) can show it and leave out what the caller may not do.

use crate::auth::{Caller, unknown_api_key};
use crate::error::ApiResult;
use crate::response::Json;
use crate::state::AppState;
use crate::store;
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use tunnel_core::paths;
use tunnel_core::resources::api_key::Me;

pub fn router() -> Router<AppState> {
    Router::new().route(paths::ME, get(me))
}

async fn me(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Me>> {
    // The key was just found with its account; an account that is gone meanwhile is a 401
    // like a key that is gone.
    let account_name = state
        .store
        .account_name(&caller.account_id)
        .await?
        .ok_or_else(unknown_api_key)?;
    // Likewise a principal gone meanwhile.
    let principal = match state
        .store
        .user(&caller.account_id, &caller.principal_id)
        .await
    {
        Err(store::Error::NotFound { .. }) => return Err(unknown_api_key()),
        found => found?,
    };
    Ok(Json(Me {
        principal_kind: principal.kind().to_owned(),
        principal_name: principal.name,
        principal_id: caller.principal_id,
        is_admin: caller.is_admin,
        account_id: caller.account_id,
        account_name,
        api_key_id: caller.api_key_id,
    }))
}
