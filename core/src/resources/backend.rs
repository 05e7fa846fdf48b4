//! Tunnel-group backends (`docs/api/backends.md`): the minimal resource a TLS edge backend
//! module points at.
//!
//! A backend reports `tunnels`, the live tunnel sessions it selects: those of its account
//! whose agent bound every one of its labels (`key=value` binds of the hello, compared exactly,
//! case-sensitively). A backend without labels selects no session: an empty selector choosing
//! every session of the account would surprise more than it would help.

use super::{Ref, Validate, check_text, list_page};
use crate::errors::FieldError;
use crate::limits::{OTHER_DESCRIPTION, OTHER_METADATA};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TunnelGroupBackend {
    pub id: String,
    pub uri: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    /// Tunnels carrying all of these labels serve this backend.
    pub labels: BTreeMap<String, String>,
    /// The live tunnel sessions serving this backend now (those of the account whose
    /// agent bound every one of its labels; none when it has no labels), each a reference to `/tunnel_sessions/{id}`; `[]` when none.
    pub tunnels: Vec<Ref>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TunnelGroupBackendCreate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
}

impl Validate for TunnelGroupBackendCreate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(OTHER_DESCRIPTION, &self.description, &mut errors);
        check_text(OTHER_METADATA, &self.metadata, &mut errors);
        for (key, value) in self.labels.iter().flatten() {
            if let Err(message) = crate::acl::Bind::parse(&format!("{key}={value}")) {
                errors.push(FieldError::new(format!("labels.{key}"), message));
            }
        }
        errors
    }
}

/// `PATCH /backends/tunnel_group/{id}`: what is given changes, the rest stays. `labels`
/// replaces the whole set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TunnelGroupBackendUpdate {
    /// Sent by the official client libraries; the path's id is the one that counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
}

impl Validate for TunnelGroupBackendUpdate {
    fn field_errors(&self) -> Vec<FieldError> {
        TunnelGroupBackendCreate {
            description: self.description.clone(),
            metadata: self.metadata.clone(),
            labels: self.labels.clone(),
        }
        .field_errors()
    }
}

list_page!(
    /// `GET /backends/tunnel_group`
    TunnelGroupBackendList, backends, TunnelGroupBackend
);
