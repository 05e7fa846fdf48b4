//! TLS edges (docs/api/tls_edges.md): the generic create, list, get, update and delete, and the
//! edge's backend module: replace, get, delete. An update changes the edge's own fields only;
//! the module changes through its own routes (core's `TlsEdgeUpdate` refuses a non-null
//! `backend`).
//!
//! Decision: an edge without a backend module answers GET and DELETE of the module with 404,
//! like any other absent resource; PUT creates or replaces it.
//!
//! The module is also accepted as the official client library sends it: wrapped in `module` on
//! the PUT, and as `backend` on create, where it is applied with the PUT's rules in the edge's
//! own write transaction (core's `tls_edge` module says why; docs/api/tls_edges.md).

use super::resource::{self, New, Resource as _, declare_resource};
use super::{Change, Path, text};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::response::Json;
use crate::state::AppState;
use crate::store::{NewModule, TlsEdgeRow};
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use tunnel_core::Validate as _;
use tunnel_core::errors::ErrorCode;
use tunnel_core::paths;
use tunnel_core::resources::Ref;
use tunnel_core::resources::tls_edge::{
    TlsEdge, TlsEdgeBackend, TlsEdgeBackendReplace, TlsEdgeCreate, TlsEdgeList, TlsEdgeUpdate,
};

declare_resource! {
    /// The TLS edges of an account.
    TlsEdges at paths::TLS_EDGES, paths::tls_edge;
    TlsEdgeRow => TlsEdgeList, created from TlsEdgeCreate => create;
    updated from TlsEdgeUpdate => update;
    wire(state, row) => TlsEdge { hostports: row.hostports, backend: row.backend.map(|b| module(state, b)) }
}

pub fn router() -> Router<AppState> {
    resource::updatable_router::<TlsEdges>().route(
        &paths::tls_edge_backend("{id}"),
        get(read_backend)
            .put(replace_backend)
            .delete(delete_backend),
    )
}

/// An edge is created with the backend module of `backend`, or without one.
async fn create(new: New<'_, TlsEdgeCreate>) -> ApiResult<TlsEdge> {
    let req = &new.request;
    let hostports = req.hostports.as_deref().unwrap_or_default();
    let (description, metadata) = (text(&req.description), text(&req.metadata));
    let module = req.backend.as_ref().map(|m| NewModule {
        backend_id: &m.backend_id,
        enabled: m.enabled.unwrap_or(true),
        field: "backend.backend_id",
    });
    let store = &new.state.store;
    let audit = new.audit::<TlsEdges>();
    let row = store.create_tls_edge(
        new.account(),
        description,
        metadata,
        hostports,
        module,
        &audit,
    );
    Ok(TlsEdges::wire(new.state, row.await?))
}

async fn update(change: Change<TlsEdgeUpdate>) -> ApiResult<TlsEdgeRow> {
    let audit = TlsEdges::audit(&change.state, &change.cause);
    let (account, body) = (&change.caller.account_id, change.body);
    let row = change.state.store.update_tls_edge(
        account,
        &change.id,
        body.description,
        body.metadata,
        body.hostports.as_deref(),
        &audit,
    );
    Ok(row.await?)
}

/// The wire form of a stored backend module: (backend id, enabled).
fn module(state: &AppState, (id, enabled): (String, bool)) -> TlsEdgeBackend {
    TlsEdgeBackend {
        enabled,
        backend: Ref {
            uri: state.uri(&paths::tunnel_group_backend(&id)),
            id,
        },
    }
}

async fn edge(state: &AppState, caller: &Caller, id: &str) -> ApiResult<TlsEdgeRow> {
    Ok(state.store.get(&caller.account_id, id).await?)
}

fn no_module(id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!("TLS edge `{id}` has no backend module; PUT one to set it."),
    )
    .with_detail("id", id.to_owned())
}

async fn read_backend(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<TlsEdgeBackend>> {
    let row = edge(&state, &caller, &id).await?;
    row.backend
        .map(|b| Json(module(&state, b)))
        .ok_or_else(|| no_module(&id))
}

/// The edge must exist (404) before the body is validated.
async fn replace_backend(change: Change<TlsEdgeBackendReplace>) -> ApiResult<Json<TlsEdgeBackend>> {
    let (state, id) = (&change.state, change.id.as_str());
    edge(state, &change.caller, id).await?;
    change.body.validate()?;
    // Flat or wrapped, the same module; `field` is where its backend id was sent.
    let (req, field) = change.body.requested();
    let enabled = req.enabled.unwrap_or(true);
    // The store checks, inside its write transaction, that the backend is one of the account's.
    state
        .store
        .set_tls_edge_backend(
            &change.caller.account_id,
            id,
            Some((&req.backend_id, enabled)),
            field,
            &change.audit::<TlsEdges>(),
        )
        .await?;
    Ok(Json(module(state, (req.backend_id, enabled))))
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
    let cause = caller.cause();
    let audit = TlsEdges::audit(&state, &cause);
    state
        .store
        .set_tls_edge_backend(&caller.account_id, &id, None, "backend_id", &audit)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
