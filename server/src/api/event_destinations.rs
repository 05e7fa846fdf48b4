//! Event destinations (docs/api/event_destinations.md): the generic create, list, get and delete.
//! A destination still used by a subscription cannot be deleted (409).

use super::resource::{self, New, Resource as _, declare_resource};
use super::text;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::store::DestinationRow;
use axum::Router;
use tunnel_core::paths;
use tunnel_core::resources::event_destination::{
    EventDestination, EventDestinationCreate, EventDestinationList,
};

/// The one format of event destinations this server writes.
const FORMAT: &str = "json";

declare_resource! {
    /// The event destinations of an account.
    Destinations at paths::EVENT_DESTINATIONS, paths::event_destination;
    DestinationRow => EventDestinationList, created from EventDestinationCreate => create;
    wire(state, row) => EventDestination { format: row.format, target: row.target, signing_secret: None }
}

pub fn router() -> Router<AppState> {
    resource::router::<Destinations>()
}

/// Every destination is written in the one [`FORMAT`], whatever the request asked.
async fn create(new: New<'_, EventDestinationCreate>) -> ApiResult<EventDestination> {
    let req = &new.request;
    let (description, metadata) = (text(&req.description), text(&req.metadata));
    let row = new
        .state
        .store
        .create_destination(
            new.account(),
            description,
            metadata,
            FORMAT,
            &req.target,
            &new.audit::<Destinations>(),
        )
        .await?;
    Ok(Destinations::wire(new.state, row))
}
