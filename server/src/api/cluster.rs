//! The routes nodes of a cluster call on each other (docs/cluster.md), outside `/api` and
//! never in the OpenAPI document: `POST /cluster/v1/tunnel_sessions/{id}/command` and
//! `…/close`, for a session whose agent this node holds, `POST /cluster/v1/api_keys/forget`,
//! sent when another node deleted an API key, `POST /cluster/v1/rows/forget`, sent by a node
//! joining the cluster, and `POST /cluster/v1/deliveries/wake`, sent by a node that left and
//! freed the webhook deliveries it held. Authenticated with the cluster secret
//! as a Bearer token (compared in constant time); anything else is a 401 that says nothing more.
//!
//! A command answers with the local outcome (`Result<(), Undelivered>` as JSON), which the
//! calling node turns into exactly the answer it would have given had the agent been its own;
//! a close answers whether this node held the session.

use crate::agents::Undelivered;
use crate::agents::cluster::{CLUSTER_PREFIX, CloseOrder, CommandOrder};
use crate::response::Json;
use crate::state::AppState;
use crate::store::Store;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::de::DeserializeOwned;
use tunnel_core::errors::ErrorCode;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            &format!("{CLUSTER_PREFIX}/tunnel_sessions/{{id}}/command"),
            post(command),
        )
        .route(
            &format!("{CLUSTER_PREFIX}/tunnel_sessions/{{id}}/close"),
            post(close),
        )
        .route(
            &format!("{CLUSTER_PREFIX}/api_keys/forget"),
            post(forget_api_keys),
        )
        .route(&format!("{CLUSTER_PREFIX}/rows/forget"), post(forget_rows))
        .route(
            &format!("{CLUSTER_PREFIX}/deliveries/wake"),
            post(wake_deliveries),
        )
}

/// The order in the body, if the request carries the cluster secret (else 401) and the body
/// decodes (else 400).
fn order<T: DeserializeOwned>(
    state: &AppState,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<T, StatusCode> {
    let authorization = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
    if !state.node.authorised(authorization) {
        return Err(StatusCode::UNAUTHORIZED);
    }
    serde_json::from_slice(body).map_err(|_| StatusCode::BAD_REQUEST)
}

async fn command(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let order: CommandOrder = match order(&state, &headers, &body) {
        Ok(order) => order,
        Err(refused) => return refused.into_response(),
    };
    let outcome: Result<(), Undelivered> = state
        .sessions()
        .command_here(&order.account_id, &id, order.command, &order.cause)
        .await;
    Json(outcome).into_response()
}

async fn close(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let order: CloseOrder = match order(&state, &headers, &body) {
        Ok(order) => order,
        Err(refused) => return refused.into_response(),
    };
    let Some(code) = ErrorCode::parse(&order.code) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    // In a task of its own: the calling node hanging up must not cancel a close half done.
    let sessions = state.sessions();
    let held = tokio::spawn(async move {
        sessions
            .close_here(&order.account_id, &id, code, order.msg, &order.cause)
            .await
    })
    .await
    .unwrap_or(false);
    Json(held).into_response()
}

/// Another node deleted an API key: this node forgets the keys it authenticated recently, so
/// the next request with the deleted one reads the database (and is a 401).
async fn forget_api_keys(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    on_store(&state, &headers, &body, Store::forget_api_keys)
}

/// Another node joined the cluster and may now change rows this node kept: it forgets them and
/// keeps none until its heartbeat finds it alone again (`agents::cluster`).
async fn forget_rows(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    on_store(&state, &headers, &body, Store::forget_rows)
}

/// Another node left and freed the webhook deliveries it held: this node's worker looks for
/// them now, not when it would next have woken.
async fn wake_deliveries(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    on_store(&state, &headers, &body, Store::wake_deliveries)
}

/// Runs `action` on the store, if the request carries the cluster secret and no body (`null`);
/// answers `true`.
fn on_store(state: &AppState, headers: &HeaderMap, body: &[u8], action: fn(&Store)) -> Response {
    if let Err(refused) = order::<()>(state, headers, body) {
        return refused.into_response();
    }
    action(&state.store);
    Json(true).into_response()
}
