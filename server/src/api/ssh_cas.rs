//! SSH certificate authorities (spec part 4): real key pairs generated on the blocking pool
//! (a bounded number at once, 503 when busy), private keys sealed at rest and never returned.

use super::{Path, check_body_id, text};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::json::JsonBody;
use crate::paging;
use crate::state::AppState;
use crate::store::SshCaRow;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use tunnel_core::Validate as _;
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::ssh_ca::{
    SshCertificateAuthority, SshCertificateAuthorityCreate, SshCertificateAuthorityList,
    SshCertificateAuthorityUpdate,
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::SSH_CERTIFICATE_AUTHORITIES, get(list).post(create))
        .route(
            &paths::ssh_certificate_authority("{id}"),
            get(read).patch(update).delete(delete),
        )
}

fn wire(state: &AppState, row: SshCaRow) -> SshCertificateAuthority {
    SshCertificateAuthority {
        uri: state.uri(&paths::ssh_certificate_authority(&row.id)),
        id: row.id,
        created_at: row.created_at,
        description: row.description,
        metadata: row.metadata,
        public_key: row.public_key,
        key_type: row.key_type,
    }
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(req): JsonBody<SshCertificateAuthorityCreate>,
) -> ApiResult<(StatusCode, Json<SshCertificateAuthority>)> {
    req.validate()?;
    let spec = req.key_spec().map_err(ApiError::Invalid)?;
    let key = state.keygen.generate(spec).await?;
    let (id, created_at) = state.store.mint(IdKind::SshCertificateAuthority);
    let sealed = state.keys.seal(key.private_openssh.as_bytes(), &id)?;
    let row = state
        .store
        .insert_ssh_ca(
            &caller.account_id,
            &id,
            &created_at,
            text(&req.description),
            text(&req.metadata),
            spec.key_type().as_str(),
            &key.public_line,
            &sealed,
        )
        .await?;
    tracing::info!(ssh_ca_id = %row.id, key_type = %row.key_type, "SSH certificate authority created");
    Ok((StatusCode::CREATED, Json(wire(&state, row))))
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<SshCertificateAuthorityList>> {
    let page = paging::parse(query.as_deref(), IdKind::SshCertificateAuthority)?;
    let rows = state.store.list_ssh_cas(&caller.account_id, &page).await?;
    let (rows, next_page_uri) = paging::finish(
        &state,
        paths::SSH_CERTIFICATE_AUTHORITIES,
        &page,
        rows,
        |r| &r.id,
    );
    Ok(Json(SshCertificateAuthorityList {
        ssh_certificate_authorities: rows.into_iter().map(|r| wire(&state, r)).collect(),
        uri: state.uri(paths::SSH_CERTIFICATE_AUTHORITIES),
        next_page_uri,
    }))
}

async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<SshCertificateAuthority>> {
    let row = state
        .store
        .get_ssh_ca(&caller.account_id, &id)
        .await?
        .ok_or_else(|| ApiError::not_found(IdKind::SshCertificateAuthority, &id))?;
    Ok(Json(wire(&state, row)))
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
        .await?
        .ok_or_else(|| ApiError::not_found(IdKind::SshCertificateAuthority, &id))?;
    Ok(Json(wire(&state, row)))
}

async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    if !state.store.delete_ssh_ca(&caller.account_id, &id).await? {
        return Err(ApiError::not_found(IdKind::SshCertificateAuthority, &id));
    }
    Ok(StatusCode::NO_CONTENT)
}
