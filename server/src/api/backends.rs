//! Tunnel-group backends (docs/api/backends.md): the generic create, list, get, update and
//! delete. A backend still used by a TLS edge's backend module cannot be deleted (409). Every
//! backend answered lists its `tunnels`: the live sessions of its account it selects by label,
//! on every node, read from the sessions directory when it is answered (docs/api/backends.md);
//! the events of backends show the stored fields, with `tunnels` empty.

use super::resource::{self, New, Resource as _, declare_resource};
use super::{Change, text};
use crate::error::ApiResult;
use crate::state::AppState;
use crate::store::BackendRow;
use axum::Router;
use tunnel_core::paths;
use tunnel_core::resources::Ref;
use tunnel_core::resources::backend::{
    TunnelGroupBackend, TunnelGroupBackendCreate, TunnelGroupBackendList, TunnelGroupBackendUpdate,
};

declare_resource! {
    /// The tunnel-group backends of an account.
    Backends at paths::TUNNEL_GROUP_BACKENDS, paths::tunnel_group_backend;
    BackendRow => TunnelGroupBackendList, created from TunnelGroupBackendCreate => create;
    updated from TunnelGroupBackendUpdate => update;
    live => tunnels;
    wire(state, row) => TunnelGroupBackend {
        tunnels: Vec::new(),
        labels: row.labels,
    }
}

pub fn router() -> Router<AppState> {
    resource::updatable_router::<Backends>()
}

/// Fills each backend's `tunnels`: the live sessions of `account_id` carrying all of its
/// labels, as references to their resources (one read of the account's sessions for a page).
async fn tunnels(
    state: &AppState,
    account_id: &str,
    backends: &mut [TunnelGroupBackend],
) -> ApiResult<()> {
    if backends.iter().all(|b| b.labels.is_empty()) {
        return Ok(());
    }
    let labelled = state.sessions().labelled(account_id).await?;
    for backend in backends {
        backend.tunnels = labelled
            .with_labels(&backend.labels)
            .into_iter()
            .map(|id| Ref {
                uri: state.uri(&paths::tunnel_session(&id)),
                id,
            })
            .collect();
    }
    Ok(())
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

/// Given labels replace the whole set, so the `tunnels` answered are those the new set selects.
async fn update(change: Change<TunnelGroupBackendUpdate>) -> ApiResult<BackendRow> {
    let audit = Backends::audit(&change.state, &change.cause);
    let (account, body) = (&change.caller.account_id, change.body);
    let row = change.state.store.update_backend(
        account,
        &change.id,
        body.description,
        body.metadata,
        body.labels.as_ref(),
        &audit,
    );
    Ok(row.await?)
}
