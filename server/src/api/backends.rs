//! Tunnel-group backends (DESIGN §8): minimal create, list, get, delete. A backend still used by
//! a TLS edge's backend module cannot be deleted (409).

use super::{Path, text};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::json::JsonBody;
use crate::paging;
use crate::state::AppState;
use crate::store::BackendRow;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use tunnel_core::Validate as _;
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::backend::{
    TunnelGroupBackend, TunnelGroupBackendCreate, TunnelGroupBackendList,
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::TUNNEL_GROUP_BACKENDS, get(list).post(create))
        .route(
            &paths::tunnel_group_backend("{id}"),
            get(read).delete(delete),
        )
}

fn wire(state: &AppState, row: BackendRow) -> TunnelGroupBackend {
    TunnelGroupBackend {
        uri: state.uri(&paths::tunnel_group_backend(&row.id)),
        id: row.id,
        created_at: row.created_at,
        description: row.description,
        metadata: row.metadata,
        labels: row.labels,
    }
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(req): JsonBody<TunnelGroupBackendCreate>,
) -> ApiResult<(StatusCode, Json<TunnelGroupBackend>)> {
    req.validate()?;
    let row = state
        .store
        .create_backend(
            &caller.account_id,
            text(&req.description),
            text(&req.metadata),
            &req.labels.unwrap_or_default(),
        )
        .await?;
    Ok((StatusCode::CREATED, Json(wire(&state, row))))
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<TunnelGroupBackendList>> {
    let page = paging::parse(query.as_deref(), IdKind::TunnelGroupBackend)?;
    let rows = state.store.list_backends(&caller.account_id, &page).await?;
    let (rows, next_page_uri) =
        paging::finish(&state, paths::TUNNEL_GROUP_BACKENDS, &page, rows, |r| &r.id);
    Ok(Json(TunnelGroupBackendList {
        backends: rows.into_iter().map(|r| wire(&state, r)).collect(),
        uri: state.uri(paths::TUNNEL_GROUP_BACKENDS),
        next_page_uri,
    }))
}

async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<TunnelGroupBackend>> {
    let row = state
        .store
        .get_backend(&caller.account_id, &id)
        .await?
        .ok_or_else(|| ApiError::not_found(IdKind::TunnelGroupBackend, &id))?;
    Ok(Json(wire(&state, row)))
}

async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let outcome = state.store.delete_backend(&caller.account_id, &id).await?;
    ApiError::check_deleted(
        outcome,
        IdKind::TunnelGroupBackend,
        &id,
        "the backend of a TLS edge; remove that backend module first",
    )?;
    Ok(StatusCode::NO_CONTENT)
}
