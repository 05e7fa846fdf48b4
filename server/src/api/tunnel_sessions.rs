//! Tunnel sessions (spec part 4): list and get, read from the live registry; the agent commands
//! (restart, stop, update) are delivered over the agent channel by `agents::commands`.
//! Sessions are served as the registry holds them, with the `agent_update_target` and
//! `agent_update_checks` extensions the channel set when the session opened.

use super::Path;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::paging;
use crate::state::AppState;
use axum::extract::{RawQuery, State};
use axum::routing::get;
use axum::{Json, Router};
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::tunnel_session::{TunnelSession, TunnelSessionList};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::TUNNEL_SESSIONS, get(list))
        .route(&paths::tunnel_session("{id}"), get(read))
        .merge(crate::agents::commands::router())
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<TunnelSessionList>> {
    let page = paging::parse(query.as_deref(), IdKind::TunnelSession)?;
    let (sessions, more) = state.registry.list(
        &caller.account_id,
        page.limit as usize,
        page.before_id.as_deref(),
    );
    let next_page_uri = paging::next_page_uri(
        &state,
        paths::TUNNEL_SESSIONS,
        page.limit,
        more,
        sessions.last().map(|s| s.id.as_str()),
    );
    Ok(Json(TunnelSessionList {
        tunnel_sessions: sessions,
        uri: state.uri(paths::TUNNEL_SESSIONS),
        next_page_uri,
    }))
}

async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<TunnelSession>> {
    state
        .registry
        .get(&caller.account_id, &id)
        .map(Json)
        .ok_or_else(|| ApiError::not_found(IdKind::TunnelSession, &id))
}
