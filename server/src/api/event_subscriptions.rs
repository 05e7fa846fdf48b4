//! Event subscriptions (docs/api/event_subscriptions.md): create and update (destinations
//! checked to be the account's), the generic list, get and delete, and their sources as
//! resources of their own, as official clients use them: list and add
//! (`…/sources`), get, update and remove one (`…/sources/{type}`). Adding or removing a source
//! is an update of the subscription, recorded as `event_subscription_updated.v0`.

use super::resource::{self, New, Resource as _, declare_resource};
use super::{Change, Path, text};
use crate::auth::Caller;
use crate::error::{self, ApiError, ApiResult};
use crate::json::JsonBody;
use crate::response::Json;
use crate::state::AppState;
use crate::store::{SourceEdit, SourceRefusal, SubscriptionChanges, SubscriptionRow};
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use tunnel_core::Validate as _;
use tunnel_core::errors::{ErrorCode, FieldError};
use tunnel_core::paths;
use tunnel_core::resources::Ref;
use tunnel_core::resources::event_subscription::{
    EventSource, EventSourceCreate, EventSourceList, EventSourceReplace, EventSourceUpdate,
    EventSubscription, EventSubscriptionCreate, EventSubscriptionList, EventSubscriptionUpdate,
};

declare_resource! {
    /// The event subscriptions of an account.
    Subscriptions at paths::EVENT_SUBSCRIPTIONS, paths::event_subscription;
    SubscriptionRow => EventSubscriptionList, created from EventSubscriptionCreate => create;
    updated from EventSubscriptionUpdate => update;
    wire(state, row) => EventSubscription {
        sources: row.sources.iter().map(|t| source(state, &row.id, t)).collect(),
        destinations: row.destination_ids.into_iter().map(|id| destination(state, id)).collect(),
    }
}

pub fn router() -> Router<AppState> {
    resource::updatable_router::<Subscriptions>()
        .route(
            &paths::event_sources("{id}"),
            get(list_sources).post(add_source),
        )
        .route(
            &paths::event_source("{id}", "{event_type}"),
            get(read_source).patch(update_source).delete(remove_source),
        )
}

/// The destinations are checked to be the account's first, for a 400 listing every missing one.
async fn create(new: New<'_, EventSubscriptionCreate>) -> ApiResult<EventSubscription> {
    let (state, req) = (new.state, &new.request);
    let destination_ids = req.destination_ids.clone().unwrap_or_default();
    check_destinations(state, new.caller, &destination_ids).await?;
    let sources = types(req.sources.as_deref().unwrap_or_default());
    let (description, metadata) = (text(&req.description), text(&req.metadata));
    let row = state
        .store
        .create_subscription(
            new.account(),
            description,
            metadata,
            &sources,
            &destination_ids,
            &new.audit::<Subscriptions>(),
        )
        .await?;
    Ok(Subscriptions::wire(state, row))
}

fn destination(state: &AppState, id: String) -> Ref {
    Ref {
        uri: state.uri(&paths::event_destination(&id)),
        id,
    }
}

fn source(state: &AppState, subscription_id: &str, event_type: &str) -> EventSource {
    EventSource {
        event_type: event_type.to_owned(),
        uri: state.uri(&paths::event_source(subscription_id, event_type)),
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

async fn find(state: &AppState, caller: &Caller, id: &str) -> ApiResult<SubscriptionRow> {
    Ok(state.store.get(&caller.account_id, id).await?)
}

async fn read_source(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, event_type)): Path<(String, String)>,
) -> ApiResult<Json<EventSource>> {
    let row = find(&state, &caller, &id).await?;
    if !row.sources.contains(&event_type) {
        return Err(no_source(&id, &event_type));
    }
    Ok(Json(source(&state, &id, &event_type)))
}

fn no_source(id: &str, event_type: &str) -> ApiError {
    let shown = error::quoted(event_type);
    ApiError::new(
        ErrorCode::NotFound,
        format!("event subscription `{id}` has no source `{shown}`"),
    )
    .with_detail("id", id.to_owned())
    .with_detail("type", shown)
}

async fn list_sources(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<EventSourceList>> {
    let row = find(&state, &caller, &id).await?;
    Ok(Json(EventSourceList {
        sources: row.sources.iter().map(|t| source(&state, &id, t)).collect(),
        uri: state.uri(&paths::event_sources(&id)),
    }))
}

/// 201 with the new source; a type that is a source already, or one past the most a
/// subscription may have, is a 400 on `type`.
async fn add_source(
    change: Change<EventSourceCreate>,
) -> ApiResult<(StatusCode, Json<EventSource>)> {
    find(&change.state, &change.caller, &change.id).await?;
    change.body.validate()?;
    let event_type = change.body.event_type.as_str();
    let edit = SourceEdit::Add(event_type);
    edit_sources(&change, edit).await?;
    let created = source(&change.state, &change.id, event_type);
    Ok((StatusCode::CREATED, Json(created)))
}

/// A source has nothing to change: the body may only repeat the path's subscription and type.
async fn update_source(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, event_type)): Path<(String, String)>,
    JsonBody(body): JsonBody<EventSourceUpdate>,
) -> ApiResult<Json<EventSource>> {
    let row = find(&state, &caller, &id).await?;
    if !row.sources.contains(&event_type) {
        return Err(no_source(&id, &event_type));
    }
    let differs = |given: &Option<String>, path: &str| {
        given.as_deref().is_some_and(|g| !g.is_empty() && g != path)
    };
    if differs(&body.subscription_id, &id) {
        return Err(ApiError::new(
            ErrorCode::InvalidField,
            "The body's subscription_id differs from the path's; leave it out or make them equal.",
        )
        .with_field("subscription_id"));
    }
    if differs(&body.event_type, &event_type) {
        return Err(ApiError::new(
            ErrorCode::InvalidField,
            "The body's type differs from the path's; a source's type cannot change: add the new type and remove the old one.",
        )
        .with_field("type"));
    }
    Ok(Json(source(&state, &id, &event_type)))
}

async fn remove_source(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, event_type)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let change = Change {
        cause: caller.cause(),
        state,
        caller,
        id,
        body: (),
    };
    edit_sources(&change, SourceEdit::Remove(&event_type)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Official clients repeat the subscription's id in the body as `subscription_id`.
impl super::BodyId for EventSourceCreate {
    const FIELD: &'static str = "subscription_id";
    fn body_id(&self) -> &Option<String> {
        &self.subscription_id
    }
}

/// Applies one edit of the sources in the store, which checks it inside its write transaction.
async fn edit_sources<T>(change: &Change<T>, edit: SourceEdit<'_>) -> ApiResult<()> {
    let audit = change.audit::<Subscriptions>();
    let account = &change.caller.account_id;
    let done = change
        .state
        .store
        .edit_sources(account, &change.id, edit, &audit)
        .await?;
    match (done, edit) {
        (Ok(_), _) => Ok(()),
        (Err(SourceRefusal::NotThere), SourceEdit::Remove(t) | SourceEdit::Add(t)) => {
            Err(no_source(&change.id, t))
        }
        (Err(SourceRefusal::AlreadyThere), SourceEdit::Add(t) | SourceEdit::Remove(t)) => {
            Err(ApiError::new(
                ErrorCode::InvalidField,
                format!("`{t}` is a source of this subscription already."),
            )
            .with_field("type"))
        }
        (Err(SourceRefusal::Full), _) => Err(ApiError::new(
            ErrorCode::InvalidField,
            format!(
                "A subscription has at most {} sources; remove one first.",
                tunnel_core::limits::MAX_EVENT_SOURCES
            ),
        )
        .with_field("type")),
    }
}

/// The subscription must exist (404), then every destination (400); the body was validated.
async fn update(change: Change<EventSubscriptionUpdate>) -> ApiResult<SubscriptionRow> {
    let audit = Subscriptions::audit(&change.state, &change.cause);
    let (state, caller, req) = (&change.state, &change.caller, change.body);
    find(state, caller, &change.id).await?;
    if let Some(ids) = &req.destination_ids {
        check_destinations(state, caller, ids).await?;
    }
    let changes = SubscriptionChanges {
        description: req.description,
        metadata: req.metadata,
        sources: req.sources.as_deref().map(types),
        destination_ids: req.destination_ids,
    };
    Ok(state
        .store
        .update_subscription(&caller.account_id, &change.id, changes, &audit)
        .await?)
}
