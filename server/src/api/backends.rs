//! Tunnel-group backends (docs/api/backends.md): the generic create, list, get and delete. A
//! backend still used by a TLS edge's backend module cannot be deleted (409).

use super::resource::{self, Resource};
use super::text;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::store::BackendRow;
use axum::Router;
use tunnel_core::paths;
use tunnel_core::resources::backend::{
    TunnelGroupBackend, TunnelGroupBackendCreate, TunnelGroupBackendList,
};

pub fn router() -> Router<AppState> {
    resource::router::<Backends>()
}

/// The tunnel-group backends of an account.
#[derive(Debug)]
pub struct Backends;

impl Resource for Backends {
    const PATH: &'static str = paths::TUNNEL_GROUP_BACKENDS;
    type Row = BackendRow;
    type Page = TunnelGroupBackendList;
    type Create = TunnelGroupBackendCreate;

    fn path(id: &str) -> String {
        paths::tunnel_group_backend(id)
    }

    fn wire(state: &AppState, row: BackendRow) -> TunnelGroupBackend {
        TunnelGroupBackend {
            uri: state.uri(&Self::path(&row.id)),
            id: row.id,
            created_at: row.created_at,
            description: row.description,
            metadata: row.metadata,
            labels: row.labels,
        }
    }

    async fn create(
        state: &AppState,
        caller: &Caller,
        req: TunnelGroupBackendCreate,
    ) -> ApiResult<TunnelGroupBackend> {
        let (description, metadata) = (text(&req.description), text(&req.metadata));
        let labels = req.labels.unwrap_or_default();
        let row = state
            .store
            .create_backend(&caller.account_id, description, metadata, &labels)
            .await?;
        Ok(Self::wire(state, row))
    }
}
