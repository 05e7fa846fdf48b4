//! Tunnel credentials (docs/api/credentials.md): create (the only response carrying the token),
//! update (description, metadata, acl), and the generic list, get and delete; a delete also
//! disconnects the sessions the credential opened, a changed ACL those it no longer admits.

use super::resource::{self, New, Resource as _, declare_resource};
use super::{Change, owner, text};
use crate::error::ApiResult;
use crate::state::AppState;
use crate::store::{Cause, CredentialChanges, CredentialRow};
use axum::Router;
use tunnel_core::paths;
use tunnel_core::resources::credential::{
    Credential, CredentialCreate, CredentialList, CredentialUpdate,
};
use tunnel_core::resources::given;

declare_resource! {
    /// The tunnel credentials of an account. The wire form carries no token: only the creation
    /// answers with it.
    Credentials at paths::CREDENTIALS, paths::credential;
    CredentialRow => CredentialList, created from CredentialCreate => create;
    updated from CredentialUpdate => update;
    deleted => disconnect;
    wire(state, row) => Credential { token: None, acl: row.acl, owner_id: row.owner_id }
}

pub fn router() -> Router<AppState> {
    resource::updatable_router::<Credentials>()
}

async fn create(new: New<'_, CredentialCreate>) -> ApiResult<Credential> {
    let (state, req) = (new.state, &new.request);
    let owner_id = owner(state, new.caller, given(&req.owner_id), "a credential").await?;
    let acl = req.acl.as_deref().unwrap_or_default();
    let created = state
        .store
        .create_credential(
            new.account(),
            text(&req.description),
            text(&req.metadata),
            acl,
            &owner_id,
            &new.audit::<Credentials>(),
        )
        .await?;
    tracing::info!(credential_id = %created.row.id, "credential created");
    Ok(Credential {
        token: Some(created.token.into_inner()),
        ..Credentials::wire(state, created.row)
    })
}

/// Its authtoken no longer authenticates: disconnect the sessions it opened, on every node
/// (docs/agent-channel.md). The row is gone first, so a session opening meanwhile sees its
/// token fail. In a task of its own, so a client hanging up does not cancel the closing; the
/// answer still waits for it.
async fn disconnect(state: &AppState, account_id: &str, id: &str, cause: &Cause) {
    let (sessions, account, credential) = (state.sessions(), account_id.to_owned(), id.to_owned());
    let cause = cause.clone();
    let closed = tokio::spawn(async move {
        sessions
            .close_credential(&account, &credential, &cause)
            .await
    })
    .await
    .unwrap_or(0);
    tracing::info!(credential_id = %id, sessions_closed = closed, "credential deleted");
}

async fn update(change: Change<CredentialUpdate>) -> ApiResult<CredentialRow> {
    let audit = Credentials::audit(&change.state, &change.cause);
    let (state, body) = (&change.state, change.body);
    let acl_changed = body.acl.is_some();
    let changes = CredentialChanges {
        description: body.description,
        metadata: body.metadata,
        acl: body.acl,
    };
    let account = &change.caller.account_id;
    let row = state
        .store
        .update_credential(account, &change.id, changes, &audit)
        .await?;
    if acl_changed {
        // In a task of its own: a client that hangs up now must not cancel the closing of the
        // sessions its ACL, already stored, refuses. The answer still waits for it.
        let (state, account, written) = (state.clone(), account.clone(), row.clone());
        let cause = change.cause.clone();
        let _ = tokio::spawn(async move {
            close_refused(&state, &account, &written, &cause).await;
        })
        .await;
    }
    Ok(row)
}

/// A new ACL applies to the sessions already open, not only to the next hello (docs/acl.md):
/// every session of the credential whose binds it refuses, on every node, is closed with the
/// refusal an agent gets at connect; the others stay. The row was written before the sessions are looked at, so
/// a session registering meanwhile either is seen here or re-reads the new ACL itself
/// (`agents::channel`).
async fn close_refused(state: &AppState, account: &str, written: &CredentialRow, cause: &Cause) {
    // The ACL as stored now, not as this request wrote it: of two PATCHes racing, the one that
    // looks last must not close sessions by the other's older ACL. If the row cannot be read
    // (deleted meanwhile, whose delete closed every session anyway), the ACL written is used.
    let id = &written.id;
    let acl = match state.store.get::<CredentialRow>(account, id).await {
        Ok(now) => now.acl,
        Err(_) => written.acl.clone(),
    };
    let closed = state
        .sessions()
        .close_refused(account, id, cause, &acl)
        .await;
    tracing::info!(credential_id = %id, sessions_closed = closed, "credential ACL changed");
}
