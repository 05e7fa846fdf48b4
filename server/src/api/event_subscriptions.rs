//! Event subscriptions (spec part 4), and a GET for each source `uri` they return.

use super::{Path, check_body_id, text};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::json::JsonBody;
use crate::paging;
use crate::state::AppState;
use crate::store::{SubscriptionChanges, SubscriptionRow};
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use tunnel_core::Validate as _;
use tunnel_core::errors::{ErrorCode, FieldError};
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::Ref;
use tunnel_core::resources::event_subscription::{
    EventSource, EventSourceReplace, EventSubscription, EventSubscriptionCreate,
    EventSubscriptionList, EventSubscriptionUpdate,
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::EVENT_SUBSCRIPTIONS, get(list).post(create))
        .route(
            &paths::event_subscription("{id}"),
            get(read).patch(update).delete(delete),
        )
        .route(
            &paths::event_source("{id}", "{event_type}"),
            get(read_source),
        )
}

fn source(state: &AppState, subscription_id: &str, event_type: &str) -> EventSource {
    EventSource {
        event_type: event_type.to_owned(),
        uri: state.uri(&paths::event_source(subscription_id, event_type)),
    }
}

fn wire(state: &AppState, row: SubscriptionRow) -> EventSubscription {
    EventSubscription {
        uri: state.uri(&paths::event_subscription(&row.id)),
        sources: row
            .sources
            .iter()
            .map(|t| source(state, &row.id, t))
            .collect(),
        destinations: row
            .destination_ids
            .into_iter()
            .map(|id| Ref {
                uri: state.uri(&paths::event_destination(&id)),
                id,
            })
            .collect(),
        id: row.id,
        created_at: row.created_at,
        description: row.description,
        metadata: row.metadata,
    }
}

/// Destination ids must name destinations of the caller's account (400 with the field).
async fn check_destinations(state: &AppState, caller: &Caller, ids: &[String]) -> ApiResult<()> {
    let missing = state
        .store
        .missing_destinations(&caller.account_id, ids)
        .await?;
    if missing.is_empty() {
        return Ok(());
    }
    let errors: Vec<FieldError> = ids
        .iter()
        .enumerate()
        .filter(|(_, id)| missing.contains(id))
        .map(|(i, id)| {
            FieldError::new(
                format!("destination_ids[{i}]"),
                format!("event destination `{id}` does not exist"),
            )
        })
        .collect();
    let first = errors.first().map(|e| e.field.clone()).unwrap_or_default();
    Err(ApiError::new(
        ErrorCode::ReferenceNotFound,
        format!(
            "event destination `{}` does not exist in this account.",
            missing[0]
        ),
    )
    .with_field(first)
    .with_detail("errors", serde_json::to_value(&errors).unwrap_or_default()))
}

fn types(sources: &[EventSourceReplace]) -> Vec<String> {
    sources.iter().map(|s| s.event_type.clone()).collect()
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(req): JsonBody<EventSubscriptionCreate>,
) -> ApiResult<(StatusCode, Json<EventSubscription>)> {
    req.validate()?;
    let destination_ids = req.destination_ids.unwrap_or_default();
    check_destinations(&state, &caller, &destination_ids).await?;
    let row = state
        .store
        .create_subscription(
            &caller.account_id,
            text(&req.description),
            text(&req.metadata),
            &types(req.sources.as_deref().unwrap_or_default()),
            &destination_ids,
        )
        .await?;
    Ok((StatusCode::CREATED, Json(wire(&state, row))))
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<EventSubscriptionList>> {
    let page = paging::parse(query.as_deref(), IdKind::EventSubscription)?;
    let rows = state
        .store
        .list_subscriptions(&caller.account_id, &page)
        .await?;
    let (rows, next_page_uri) =
        paging::finish(&state, paths::EVENT_SUBSCRIPTIONS, &page, rows, |r| &r.id);
    Ok(Json(EventSubscriptionList {
        event_subscriptions: rows.into_iter().map(|r| wire(&state, r)).collect(),
        uri: state.uri(paths::EVENT_SUBSCRIPTIONS),
        next_page_uri,
    }))
}

async fn find(state: &AppState, caller: &Caller, id: &str) -> ApiResult<SubscriptionRow> {
    state
        .store
        .get_subscription(&caller.account_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found(IdKind::EventSubscription, id))
}

async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<EventSubscription>> {
    Ok(Json(wire(&state, find(&state, &caller, &id).await?)))
}

async fn read_source(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, event_type)): Path<(String, String)>,
) -> ApiResult<Json<EventSource>> {
    let row = find(&state, &caller, &id).await?;
    if !row.sources.contains(&event_type) {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            format!(
                "event subscription `{id}` has no source `{}`",
                event_type.chars().take(64).collect::<String>()
            ),
        ));
    }
    Ok(Json(source(&state, &id, &event_type)))
}

async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<EventSubscriptionUpdate>,
) -> ApiResult<Json<EventSubscription>> {
    check_body_id(&req.id, &id)?;
    req.validate()?;
    find(&state, &caller, &id).await?;
    if let Some(ids) = &req.destination_ids {
        check_destinations(&state, &caller, ids).await?;
    }
    let changes = SubscriptionChanges {
        description: req.description,
        metadata: req.metadata,
        sources: req.sources.as_deref().map(types),
        destination_ids: req.destination_ids,
    };
    let row = state
        .store
        .update_subscription(&caller.account_id, &id, changes)
        .await?
        .ok_or_else(|| ApiError::not_found(IdKind::EventSubscription, &id))?;
    Ok(Json(wire(&state, row)))
}

async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    if !state
        .store
        .delete_subscription(&caller.account_id, &id)
        .await?
    {
        return Err(ApiError::not_found(IdKind::EventSubscription, &id));
    }
    Ok(StatusCode::NO_CONTENT)
}
