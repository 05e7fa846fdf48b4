//! Tunnel-group backends (docs/api/backends.md): the generic create, list, get and delete. A
//! backend still used by a TLS edge's backend module cannot be deleted (409). Every backend
//! answered lists its `tunnels`: the live sessions of its account it selects by label, read from
//! the registry when it is answered (docs/api/backends.md).

use super::resource::{self, New, Resource as _, declare_resource};
use super::text;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::store::BackendRow;
use axum::Router;
use std::collections::BTreeMap;
use tunnel_core::paths;
use tunnel_core::resources::Ref;
use tunnel_core::resources::backend::{
    TunnelGroupBackend, TunnelGroupBackendCreate, TunnelGroupBackendList,
};

declare_resource! {
    /// The tunnel-group backends of an account.
    Backends at paths::TUNNEL_GROUP_BACKENDS, paths::tunnel_group_backend;
    BackendRow => TunnelGroupBackendList, created from TunnelGroupBackendCreate => create;
    wire(state, row) => TunnelGroupBackend {
        tunnels: tunnels(state, &row.account_id, &row.labels),
        labels: row.labels,
    }
}

pub fn router() -> Router<AppState> {
    resource::router::<Backends>()
}

/// The sessions of `account_id` carrying all of `labels`, as references to their resources.
fn tunnels(state: &AppState, account_id: &str, labels: &BTreeMap<String, String>) -> Vec<Ref> {
    state
        .registry
        .with_labels(account_id, labels)
        .into_iter()
        .map(|id| Ref {
            uri: state.uri(&paths::tunnel_session(&id)),
            id,
        })
        .collect()
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
            &new.audit::<Backends>(),
        )
        .await?;
    Ok(Backends::wire(new.state, row))
}
