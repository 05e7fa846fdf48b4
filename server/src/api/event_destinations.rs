//! Event destinations (docs/api/event_destinations.md): the generic create, list, get, update and
//! delete, and the area's own operations: `rotate_secret`, `test` and the `deliveries` list. A
//! destination still used by a subscription cannot be deleted (409).
//!
//! Each destination signs its webhooks with a secret of its own (`webhooks::sign`), sealed with
//! the server key and bound to the destination's id; it is shown once, in the answer of the
//! create or the rotation that made it. A URL is checked against the address rule
//! (`webhooks::ssrf`) whenever it is stored. This module also starts the delivery worker
//! ([`spawn_deliveries`]), which gets from here the wire form of events.

use super::resource::{self, New, Page, Resource as _, declare_resource};
use super::{Change, Path, text};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::json::JsonBody;
use crate::paging;
use crate::response::Json;
use crate::state::AppState;
use crate::store::{DeliveryRow, DestinationRow, unix_ms};
use crate::webhooks::{self, Worker, client, sign, ssrf};
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tunnel_core::errors::{ErrorCode, FieldError};
use tunnel_core::event_types::PING;
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::event::Event;
use tunnel_core::resources::event_destination::{
    DestinationTest, EventDelivery, EventDeliveryList, EventDestination, EventDestinationCreate,
    EventDestinationList, EventDestinationUpdate, EventTarget,
};

/// The one format of event destinations this server writes.
const FORMAT: &str = "json";

declare_resource! {
    /// The event destinations of an account.
    Destinations at paths::EVENT_DESTINATIONS, paths::event_destination;
    DestinationRow => EventDestinationList, created from EventDestinationCreate => create;
    updated from EventDestinationUpdate => update;
    wire(state, row) => EventDestination { format: row.format, target: row.target, signing_secret: None }
}

pub fn router() -> Router<AppState> {
    resource::updatable_router::<Destinations>()
        .route(
            &paths::event_destination_rotate_secret("{id}"),
            post(rotate_secret),
        )
        .route(&paths::event_destination_test("{id}"), post(test))
        .route(
            &paths::event_destination_deliveries("{id}"),
            get(deliveries),
        )
}

/// Starts the webhook delivery worker of `state` (`crate::webhooks`), giving it the wire form
/// of events, which webhooks carry; it ends once `stop` turns true (`Worker::spawn`).
pub fn spawn_deliveries(
    state: &AppState,
    stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    let shown = state.clone();
    let event_json: webhooks::EventJson = Arc::new(move |row| {
        serde_json::to_vec(&super::events::wire(&shown, row)).unwrap_or_default()
    });
    Worker::new(
        state.store.clone(),
        state.node.id.clone(),
        state.keys.clone(),
        state.config.webhooks.clone(),
        state.webhooks.clone(),
        event_json,
    )
    .spawn(stop)
}

/// A body of nothing, or of `{}`: the operations on a destination that take no input.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct NoInput {}

/// Refuses a webhook URL that does not parse (400 `ERR_TUNNEL_114`, as validation: the shared
/// validation checks only what a person mistypes) or that webhooks may not reach (117, unless
/// the server allows private addresses).
async fn check_reachable(state: &AppState, target: &EventTarget) -> ApiResult<()> {
    let Some(hook) = &target.webhook else {
        return Ok(());
    };
    if let Err(e) = url::Url::parse(&hook.url) {
        return Err(ApiError::Invalid(vec![FieldError::new(
            "target.webhook.url",
            format!("the webhook url is invalid: {e}"),
        )]));
    }
    if state.config.webhooks.allow_private {
        return Ok(());
    }
    ssrf::check_url(&hook.url).await.map_err(|why| {
        ApiError::new(ErrorCode::WebhookAddressRefused, format!("{why}."))
            .with_field("target.webhook.url")
    })
}

/// A new signing secret for the destination `id`: in clear (shown once) and sealed (stored).
fn new_secret(state: &AppState, id: &str) -> ApiResult<(String, Vec<u8>)> {
    let secret = sign::new_secret();
    let sealed = state.keys.seal(secret.as_bytes(), id)?;
    Ok((secret, sealed))
}

/// Every destination is written in the one [`FORMAT`], whatever the request asked. The id is
/// minted before the secret is sealed: the sealed secret is bound to it.
async fn create(new: New<'_, EventDestinationCreate>) -> ApiResult<EventDestination> {
    let (state, req) = (new.state, &new.request);
    check_reachable(state, &req.target).await?;
    let minted = state.store.mint(IdKind::EventDestination);
    let (secret, sealed) = new_secret(state, &minted.0)?;
    let row = DestinationRow::new(
        minted,
        text(&req.description),
        text(&req.metadata),
        FORMAT.to_owned(),
        req.target.clone(),
    );
    let row = state
        .store
        .insert_destination(new.account(), row, &sealed, &new.audit::<Destinations>())
        .await?;
    Ok(EventDestination {
        signing_secret: Some(secret),
        ..Destinations::wire(state, row)
    })
}

/// `PATCH`: description, metadata and target (re-checked); `format` is only ever `json`.
async fn update(change: Change<EventDestinationUpdate>) -> ApiResult<DestinationRow> {
    let audit = change.audit::<Destinations>();
    let body = &change.body;
    if let Some(target) = &body.target {
        check_reachable(&change.state, target).await?;
    }
    Ok(change
        .state
        .store
        .update_destination(
            &change.caller.account_id,
            &change.id,
            body.description.clone(),
            body.metadata.clone(),
            body.target.as_ref(),
            &audit,
        )
        .await?)
}

/// `POST /event_destinations/{id}/rotate_secret`: a new secret, shown once in the answer; the
/// previous one keeps signing alongside for [`webhooks::PREVIOUS_SECRET_VALIDITY`].
async fn rotate_secret(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(NoInput {}): JsonBody<NoInput>,
) -> ApiResult<Json<EventDestination>> {
    let cause = caller.cause();
    let (secret, sealed) = new_secret(&state, &id)?;
    let until = time::OffsetDateTime::now_utc() + webhooks::PREVIOUS_SECRET_VALIDITY;
    let row = state
        .store
        .rotate_destination_secret(
            &caller.account_id,
            &id,
            &sealed,
            unix_ms(until),
            &Destinations::audit(&state, &cause),
        )
        .await?;
    Ok(Json(EventDestination {
        signing_secret: Some(secret),
        ..Destinations::wire(&state, row)
    }))
}

/// `POST /event_destinations/{id}/test`: sends a `ping.v0` event about the destination once,
/// now, signed like every webhook, and answers the attempt. The ping is not an event of the
/// audit log (nothing changed) and its attempt is not a delivery: it is neither stored nor
/// retried, and its `uri` names no stored event.
async fn test(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(NoInput {}): JsonBody<NoInput>,
) -> ApiResult<Json<DestinationTest>> {
    let row = state
        .store
        .get::<DestinationRow>(&caller.account_id, &id)
        .await?;
    let url = row.target.webhook.as_ref().map(|hook| hook.url.clone());
    let cause = caller.cause();
    let (event_id, occurred_at) = state.store.mint(IdKind::Event);
    let event = Event {
        uri: state.uri(&paths::event(&event_id)),
        id: event_id.clone(),
        event_type: PING.to_owned(),
        occurred_at,
        actor: cause.actor,
        operation_id: cause.operation_id,
        object_id: id.clone(),
        object: serde_json::to_value(Destinations::wire(&state, row)).unwrap_or_default(),
        changed_fields: Vec::new(),
        details: serde_json::Map::new(),
    };
    let body = serde_json::to_vec(&event).map_err(anyhow::Error::from)?;
    let secrets = webhooks::signing_secrets(&state.store, &state.keys, &caller.account_id, &id)
        .await
        .map_err(anyhow::Error::from)?;
    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
    let url = url.ok_or_else(|| anyhow::anyhow!("destination {id} has no webhook target"))?;
    let attempt = state.webhooks.post(&url, &event_id, &secrets, body).await;
    Ok(Json(DestinationTest { event_id, attempt }))
}

/// `GET /event_destinations/{id}/deliveries`: newest first, each with its attempts.
async fn deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<Page<EventDeliveryList>>> {
    let page = paging::parse(query.as_deref(), &[IdKind::EventDelivery])?;
    let rows = state
        .store
        .list_deliveries(&caller.account_id, &id, &page)
        .await?;
    let path = paths::event_destination_deliveries(&id);
    Ok(Json(Page::of_rows(
        &state,
        &path,
        &page,
        rows,
        delivery_wire,
    )))
}

fn delivery_wire(row: DeliveryRow) -> EventDelivery {
    EventDelivery {
        id: row.id,
        event_id: row.event_id,
        event_type: row.event_type,
        created_at: row.created_at,
        state: row.state,
        next_attempt_at: row.next_attempt_at.and_then(|ms| {
            time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
                .ok()
                .map(client::rfc3339_ms)
        }),
        attempts: row.attempts,
    }
}
