//! Event destinations (DESIGN §8): minimal create, list, get, delete. A destination still used by
//! a subscription cannot be deleted (409).

use super::{Path, text};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::json::JsonBody;
use crate::paging;
use crate::state::AppState;
use crate::store::DestinationRow;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use tunnel_core::Validate as _;
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::event_destination::{
    EventDestination, EventDestinationCreate, EventDestinationList,
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::EVENT_DESTINATIONS, get(list).post(create))
        .route(&paths::event_destination("{id}"), get(read).delete(delete))
}

fn wire(state: &AppState, row: DestinationRow) -> EventDestination {
    EventDestination {
        uri: state.uri(&paths::event_destination(&row.id)),
        id: row.id,
        created_at: row.created_at,
        description: row.description,
        metadata: row.metadata,
        format: row.format,
        target: row.target,
    }
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(req): JsonBody<EventDestinationCreate>,
) -> ApiResult<(StatusCode, Json<EventDestination>)> {
    req.validate()?;
    let row = state
        .store
        .create_destination(
            &caller.account_id,
            text(&req.description),
            text(&req.metadata),
            "json",
            &req.target,
        )
        .await?;
    Ok((StatusCode::CREATED, Json(wire(&state, row))))
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<EventDestinationList>> {
    let page = paging::parse(query.as_deref(), IdKind::EventDestination)?;
    let rows = state
        .store
        .list_destinations(&caller.account_id, &page)
        .await?;
    let (rows, next_page_uri) =
        paging::finish(&state, paths::EVENT_DESTINATIONS, &page, rows, |r| &r.id);
    Ok(Json(EventDestinationList {
        event_destinations: rows.into_iter().map(|r| wire(&state, r)).collect(),
        uri: state.uri(paths::EVENT_DESTINATIONS),
        next_page_uri,
    }))
}

async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<EventDestination>> {
    let row = state
        .store
        .get_destination(&caller.account_id, &id)
        .await?
        .ok_or_else(|| ApiError::not_found(IdKind::EventDestination, &id))?;
    Ok(Json(wire(&state, row)))
}

async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let outcome = state
        .store
        .delete_destination(&caller.account_id, &id)
        .await?;
    ApiError::check_deleted(
        outcome,
        IdKind::EventDestination,
        &id,
        "used by an event subscription; remove it from the subscription first",
    )?;
    Ok(StatusCode::NO_CONTENT)
}
