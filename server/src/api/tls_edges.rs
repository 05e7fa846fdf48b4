//! TLS edges (DESIGN §8: minimal create, list, get, delete) and their backend module
//! (spec part 4: replace, get, delete).
//!
//! Decision: an edge without a backend module answers GET and DELETE of the module with 404,
//! like any other absent resource; PUT creates or replaces it.

use super::{Path, check_body_id, text};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::json::JsonBody;
use crate::paging;
use crate::state::AppState;
use crate::store::TlsEdgeRow;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use tunnel_core::Validate as _;
use tunnel_core::errors::ErrorCode;
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::Ref;
use tunnel_core::resources::tls_edge::{
    TlsEdge, TlsEdgeBackend, TlsEdgeBackendReplace, TlsEdgeCreate, TlsEdgeList,
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::TLS_EDGES, get(list).post(create))
        .route(&paths::tls_edge("{id}"), get(read).delete(delete))
        .route(
            &paths::tls_edge_backend("{id}"),
            get(read_backend)
                .put(replace_backend)
                .delete(delete_backend),
        )
}

fn module(state: &AppState, backend: Option<(String, bool)>) -> Option<TlsEdgeBackend> {
    backend.map(|(id, enabled)| TlsEdgeBackend {
        enabled,
        backend: Ref {
            uri: state.uri(&paths::tunnel_group_backend(&id)),
            id,
        },
    })
}

fn wire(state: &AppState, row: TlsEdgeRow) -> TlsEdge {
    TlsEdge {
        uri: state.uri(&paths::tls_edge(&row.id)),
        id: row.id,
        created_at: row.created_at,
        description: row.description,
        metadata: row.metadata,
        hostports: row.hostports,
        backend: module(state, row.backend),
    }
}

async fn edge(state: &AppState, caller: &Caller, id: &str) -> ApiResult<TlsEdgeRow> {
    state
        .store
        .get_tls_edge(&caller.account_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found(IdKind::TlsEdge, id))
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(req): JsonBody<TlsEdgeCreate>,
) -> ApiResult<(StatusCode, Json<TlsEdge>)> {
    req.validate()?;
    let row = state
        .store
        .create_tls_edge(
            &caller.account_id,
            text(&req.description),
            text(&req.metadata),
            req.hostports.as_deref().unwrap_or_default(),
        )
        .await?;
    Ok((StatusCode::CREATED, Json(wire(&state, row))))
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<TlsEdgeList>> {
    let page = paging::parse(query.as_deref(), IdKind::TlsEdge)?;
    let rows = state
        .store
        .list_tls_edges(&caller.account_id, &page)
        .await?;
    let (rows, next_page_uri) = paging::finish(&state, paths::TLS_EDGES, &page, rows, |r| &r.id);
    Ok(Json(TlsEdgeList {
        tls_edges: rows.into_iter().map(|r| wire(&state, r)).collect(),
        uri: state.uri(paths::TLS_EDGES),
        next_page_uri,
    }))
}

async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<TlsEdge>> {
    Ok(Json(wire(&state, edge(&state, &caller, &id).await?)))
}

async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    if !state.store.delete_tls_edge(&caller.account_id, &id).await? {
        return Err(ApiError::not_found(IdKind::TlsEdge, &id));
    }
    Ok(StatusCode::NO_CONTENT)
}

fn no_module(id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!("TLS edge `{id}` has no backend module; PUT one to set it."),
    )
}

async fn read_backend(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<TlsEdgeBackend>> {
    let row = edge(&state, &caller, &id).await?;
    module(&state, row.backend)
        .map(Json)
        .ok_or_else(|| no_module(&id))
}

async fn replace_backend(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<TlsEdgeBackendReplace>,
) -> ApiResult<Json<TlsEdgeBackend>> {
    check_body_id(&req.id, &id)?;
    edge(&state, &caller, &id).await?;
    req.validate()?;
    let enabled = req.enabled.unwrap_or(true);
    // The store checks, inside its write transaction, that the backend is one of the account's.
    if !state
        .store
        .set_tls_edge_backend(&caller.account_id, &id, Some((&req.backend_id, enabled)))
        .await?
    {
        return Err(ApiError::not_found(IdKind::TlsEdge, &id));
    }
    let module = module(&state, Some((req.backend_id, enabled))).ok_or_else(|| no_module(&id))?;
    Ok(Json(module))
}

async fn delete_backend(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let row = edge(&state, &caller, &id).await?;
    if row.backend.is_none() {
        return Err(no_module(&id));
    }
    state
        .store
        .set_tls_edge_backend(&caller.account_id, &id, None)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
