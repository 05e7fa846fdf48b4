//! TLS edges (docs/api/tls_edges.md): the generic create, list, get and delete, and the edge's
//! backend module: replace, get, delete.
//!
//! Decision: an edge without a backend module answers GET and DELETE of the module with 404,
//! like any other absent resource; PUT creates or replaces it.

use super::resource::{self, Resource};
use super::{Path, check_body_id, text};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::json::JsonBody;
use crate::state::AppState;
use crate::store::TlsEdgeRow;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use tunnel_core::Validate as _;
use tunnel_core::errors::ErrorCode;
use tunnel_core::paths;
use tunnel_core::resources::Ref;
use tunnel_core::resources::tls_edge::{
    TlsEdge, TlsEdgeBackend, TlsEdgeBackendReplace, TlsEdgeCreate, TlsEdgeList,
};

pub fn router() -> Router<AppState> {
    resource::router::<TlsEdges>().route(
        &paths::tls_edge_backend("{id}"),
        get(read_backend)
            .put(replace_backend)
            .delete(delete_backend),
    )
}

/// The TLS edges of an account.
#[derive(Debug)]
pub struct TlsEdges;

impl Resource for TlsEdges {
    const PATH: &'static str = paths::TLS_EDGES;
    type Row = TlsEdgeRow;
    type Page = TlsEdgeList;
    type Create = TlsEdgeCreate;

    fn path(id: &str) -> String {
        paths::tls_edge(id)
    }

    fn wire(state: &AppState, row: TlsEdgeRow) -> TlsEdge {
        TlsEdge {
            uri: state.uri(&Self::path(&row.id)),
            id: row.id,
            created_at: row.created_at,
            description: row.description,
            metadata: row.metadata,
            hostports: row.hostports,
            backend: module(state, row.backend),
        }
    }

    async fn create(state: &AppState, caller: &Caller, req: TlsEdgeCreate) -> ApiResult<TlsEdge> {
        let (description, metadata) = (text(&req.description), text(&req.metadata));
        let hostports = req.hostports.as_deref().unwrap_or_default();
        let row = state
            .store
            .create_tls_edge(&caller.account_id, description, metadata, hostports)
            .await?;
        Ok(Self::wire(state, row))
    }
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

async fn edge(state: &AppState, caller: &Caller, id: &str) -> ApiResult<TlsEdgeRow> {
    Ok(state.store.get(&caller.account_id, id).await?)
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
    state
        .store
        .set_tls_edge_backend(&caller.account_id, &id, Some((&req.backend_id, enabled)))
        .await?;
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
