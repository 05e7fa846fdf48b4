//! Tunnel-group backends (docs/api/backends.md): the generic create, list, get and delete. A
//! backend still used by a TLS edge's backend module cannot be deleted (409).

use super::resource::{self, New, Resource as _, declare_resource};
use super::text;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::store::BackendRow;
use axum::Router;
use tunnel_core::paths;
use tunnel_core::resources::backend::{
    TunnelGroupBackend, TunnelGroupBackendCreate, TunnelGroupBackendList,
};

declare_resource! {
    /// The tunnel-group backends of an account.
    Backends at paths::TUNNEL_GROUP_BACKENDS, paths::tunnel_group_backend;
    BackendRow => TunnelGroupBackendList, created from TunnelGroupBackendCreate => create;
    wire(state, row) => TunnelGroupBackend { labels: row.labels }
}

pub fn router() -> Router<AppState> {
    resource::router::<Backends>()
}

async fn create(new: New<'_, TunnelGroupBackendCreate>) -> ApiResult<TunnelGroupBackend> {
    let req = &new.request;
    let labels = req.labels.clone().unwrap_or_default();
    let row = new
        .state
        .store
        .create_backend(
            new.account(),
            text(&req.description),
            text(&req.metadata),
            &labels,
        )
        .await?;
    Ok(Backends::wire(new.state, row))
}
