//! Event destinations (docs/api/event_destinations.md): the generic create, list, get and delete.
//! A destination still used by a subscription cannot be deleted (409).

use super::resource::{self, Resource};
use super::text;
use crate::auth::Caller;
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

pub fn router() -> Router<AppState> {
    resource::router::<Destinations>()
}

/// The event destinations of an account.
#[derive(Debug)]
pub struct Destinations;

impl Resource for Destinations {
    const PATH: &'static str = paths::EVENT_DESTINATIONS;
    type Row = DestinationRow;
    type Page = EventDestinationList;
    type Create = EventDestinationCreate;

    fn path(id: &str) -> String {
        paths::event_destination(id)
    }

    fn wire(state: &AppState, row: DestinationRow) -> EventDestination {
        EventDestination {
            uri: state.uri(&Self::path(&row.id)),
            id: row.id,
            created_at: row.created_at,
            description: row.description,
            metadata: row.metadata,
            format: row.format,
            target: row.target,
        }
    }

    async fn create(
        state: &AppState,
        caller: &Caller,
        req: EventDestinationCreate,
    ) -> ApiResult<EventDestination> {
        let (description, metadata) = (text(&req.description), text(&req.metadata));
        let row = state
            .store
            .create_destination(
                &caller.account_id,
                description,
                metadata,
                FORMAT,
                &req.target,
            )
            .await?;
        Ok(Self::wire(state, row))
    }
}
