//! SSH certificate authorities (docs/api/ssh_cas.md): real key pairs generated on the blocking
//! pool (a bounded number at once, 503 when busy), private keys sealed at rest and never
//! returned; update (description, metadata), and the generic list, get and delete.

use super::resource::{self, Resource};
use super::{Path, check_body_id, text};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::json::JsonBody;
use crate::state::AppState;
use crate::store::SshCaRow;
use axum::extract::State;
use axum::routing::patch;
use axum::{Json, Router};
use tunnel_core::Validate as _;
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::ssh_ca::{
    SshCertificateAuthority, SshCertificateAuthorityCreate, SshCertificateAuthorityList,
    SshCertificateAuthorityUpdate,
};

pub fn router() -> Router<AppState> {
    resource::router::<SshCas>().route(&SshCas::path("{id}"), patch(update))
}

/// The SSH certificate authorities of an account.
#[derive(Debug)]
pub struct SshCas;

impl Resource for SshCas {
    const PATH: &'static str = paths::SSH_CERTIFICATE_AUTHORITIES;
    type Row = SshCaRow;
    type Page = SshCertificateAuthorityList;
    type Create = SshCertificateAuthorityCreate;

    fn path(id: &str) -> String {
        paths::ssh_certificate_authority(id)
    }

    fn wire(state: &AppState, row: SshCaRow) -> SshCertificateAuthority {
        SshCertificateAuthority {
            uri: state.uri(&Self::path(&row.id)),
            id: row.id,
            created_at: row.created_at,
            description: row.description,
            metadata: row.metadata,
            public_key: row.public_key,
            key_type: row.key_type,
        }
    }

    /// The id is minted before the key is sealed: the sealed key is bound to it.
    async fn create(
        state: &AppState,
        caller: &Caller,
        req: SshCertificateAuthorityCreate,
    ) -> ApiResult<SshCertificateAuthority> {
        let spec = req.key_spec().map_err(ApiError::Invalid)?;
        let key = state.keygen.generate(spec).await?;
        let (id, created_at) = state.store.mint(IdKind::SshCertificateAuthority);
        let sealed = state.keys.seal(key.private_openssh.as_bytes(), &id)?;
        let row = SshCaRow {
            id,
            created_at,
            description: text(&req.description).to_owned(),
            metadata: text(&req.metadata).to_owned(),
            key_type: spec.key_type().as_str().to_owned(),
            public_key: key.public_line,
        };
        let row = state
            .store
            .insert_ssh_ca(&caller.account_id, row, &sealed)
            .await?;
        tracing::info!(ssh_ca_id = %row.id, key_type = %row.key_type, "SSH certificate authority created");
        Ok(Self::wire(state, row))
    }
}

async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<SshCertificateAuthorityUpdate>,
) -> ApiResult<Json<SshCertificateAuthority>> {
    check_body_id(&req.id, &id)?;
    req.validate()?;
    let row = state
        .store
        .update_ssh_ca(&caller.account_id, &id, req.description, req.metadata)
        .await?;
    Ok(Json(SshCas::wire(&state, row)))
}
