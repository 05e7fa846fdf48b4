//! TLS edges and their backend module (`docs/api/tls_edges.md`).

use super::{Ref, Validate, check_id, check_text, list_page};
use crate::errors::FieldError;
use crate::ids::IdKind;
use crate::limits::{OTHER_DESCRIPTION, OTHER_METADATA};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TlsEdge {
    pub id: String,
    pub uri: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    /// `host:port` pairs the edge listens on.
    pub hostports: Vec<String>,
    /// The backend module, `null` when none is set.
    pub backend: Option<TlsEdgeBackend>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsEdgeCreate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostports: Option<Vec<String>>,
}

impl Validate for TlsEdgeCreate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(OTHER_DESCRIPTION, &self.description, &mut errors);
        check_text(OTHER_METADATA, &self.metadata, &mut errors);
        for (i, hostport) in self.hostports.iter().flatten().enumerate() {
            if !matches!(
                crate::acl::Bind::parse(hostport),
                Ok(crate::acl::Bind::Address(..))
            ) {
                errors.push(FieldError::new(
                    format!("hostports[{i}]"),
                    format!("`{hostport}` is not of the form `host:port`"),
                ));
            }
        }
        errors
    }
}

/// The backend module of a TLS edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TlsEdgeBackend {
    pub enabled: bool,
    pub backend: Ref,
}

/// `PUT /edges/tls/{id}/backend`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsEdgeBackendReplace {
    /// An `id` equal to the path id is accepted and ignored (clients PUT back what
    /// they read); another id is refused by the server on field `id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Defaults to `true` when absent or `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub backend_id: String,
}

impl Validate for TlsEdgeBackendReplace {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if self.backend_id.is_empty() {
            errors.push(FieldError::new(
                "backend_id",
                "backend_id is required: the tunnel-group backend to use",
            ));
        } else {
            check_id(
                IdKind::TunnelGroupBackend,
                "backend_id".into(),
                &self.backend_id,
                &mut errors,
            );
        }
        errors
    }
}

list_page!(
    /// `GET /edges/tls`
    TlsEdgeList, tls_edges, TlsEdge
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn backend_id_is_required_and_typed() {
        assert_eq!(
            TlsEdgeBackendReplace::default().field_errors()[0].field,
            "backend_id"
        );
        let wrong = TlsEdgeBackendReplace {
            backend_id: "ed_x".into(),
            ..Default::default()
        };
        assert!(wrong.field_errors()[0].message.contains("bkdtg_"));
        let edge = TlsEdgeCreate {
            hostports: Some(vec!["example.com:443".into(), "nope".into()]),
            ..Default::default()
        };
        assert_eq!(edge.field_errors()[0].field, "hostports[1]");
    }
}
