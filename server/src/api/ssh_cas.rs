//! SSH certificate authorities (docs/api/ssh_cas.md): real key pairs generated on the blocking
//! pool (a bounded number at once, 503 when busy), private keys sealed at rest and never
//! returned; update (description, metadata), and the generic list, get and delete.

use super::resource::{self, New, Resource as _, declare_resource};
use super::{Change, text};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::SshCaRow;
use axum::Router;
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::ssh_ca::{
    SshCertificateAuthority, SshCertificateAuthorityCreate, SshCertificateAuthorityList,
    SshCertificateAuthorityUpdate,
};

declare_resource! {
    /// The SSH certificate authorities of an account.
    SshCas at paths::SSH_CERTIFICATE_AUTHORITIES, paths::ssh_certificate_authority;
    SshCaRow => SshCertificateAuthorityList, created from SshCertificateAuthorityCreate => create;
    updated from SshCertificateAuthorityUpdate => update;
    wire(state, row) => SshCertificateAuthority {
        public_key: row.public_key,
        key_type: row.key_type,
    }
}

pub fn router() -> Router<AppState> {
    resource::updatable_router::<SshCas>()
}

/// The id is minted before the key is sealed: the sealed key is bound to it.
async fn create(new: New<'_, SshCertificateAuthorityCreate>) -> ApiResult<SshCertificateAuthority> {
    let (state, req) = (new.state, &new.request);
    let spec = req.key_spec().map_err(ApiError::Invalid)?;
    let key = state.keygen.generate(spec).await?;
    let minted = state.store.mint(IdKind::SshCertificateAuthority);
    let sealed = state.keys.seal(key.private_openssh.as_bytes(), &minted.0)?;
    let key_type = spec.key_type().as_str().to_owned();
    let (description, metadata) = (text(&req.description), text(&req.metadata));
    let row = SshCaRow::new(minted, description, metadata, key_type, key.public_line);
    let row = state
        .store
        .insert_ssh_ca(new.account(), row, &sealed, &new.audit::<SshCas>())
        .await?;
    tracing::info!(ssh_ca_id = %row.id, key_type = %row.key_type, "SSH certificate authority created");
    Ok(SshCas::wire(state, row))
}

async fn update(change: Change<SshCertificateAuthorityUpdate>) -> ApiResult<SshCaRow> {
    let audit = SshCas::audit(&change.state, &change.cause);
    let (account, body) = (&change.caller.account_id, change.body);
    let row = change.state.store.update_ssh_ca(
        account,
        &change.id,
        body.description,
        body.metadata,
        &audit,
    );
    Ok(row.await?)
}
