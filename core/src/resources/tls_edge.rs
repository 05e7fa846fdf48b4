//! TLS edges and their backend module (`docs/api/tls_edges.md`).
//!
//! The request shapes also accept what the official client library (`ngrok-api`) sends, so it
//! works against this server unchanged:
//! - it PUTs the backend module wrapped, `{"id", "module": {"enabled", "backend_id"}}`, where
//!   this API documents the flat `{"id", "enabled", "backend_id"}`: both forms are one request
//!   type, [`TlsEdgeBackendReplace`], whose [`TlsEdgeBackendReplace::requested`] is the module
//!   asked for either way and whose errors name the fields where they were sent
//!   (`module.backend_id` in the wrapped form);
//! - it creates an edge with every module it knows, `null` when not configured: `backend`
//!   (applied with the rules of the PUT when given, so a client can create an edge with its
//!   backend in one request) and [`UNSUPPORTED_EDGE_MODULES`], accepted only as `null`.

use super::{Ref, Unsupported, Validate, check_id, check_text, list_page};
use crate::errors::FieldError;
use crate::ids::IdKind;
use crate::limits::{OTHER_DESCRIPTION, OTHER_METADATA};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TlsEdge {
    pub id: String,
    pub uri: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    /// `host:port` pairs the edge listens on.
    pub hostports: Vec<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// The backend module, `null` when none is set.
    pub backend: Option<TlsEdgeBackend>,
}

/// The edge modules the official client sends on create that this product does not implement:
/// each is accepted as `null` (or absent), any other value is refused naming it.
pub const UNSUPPORTED_EDGE_MODULES: [&str; 4] = [
    "ip_restriction",
    "mutual_tls",
    "tls_termination",
    "traffic_policy",
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TlsEdgeCreate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostports: Option<Vec<String>>,
    /// The backend module to create the edge with; `null` or absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<TlsEdgeBackendModule>,
    // Not implemented (see [`UNSUPPORTED_EDGE_MODULES`]): read as [`Unsupported`], so that a
    // non-null value is refused by name rather than as a type error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub ip_restriction: Option<Unsupported>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub mutual_tls: Option<Unsupported>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub tls_termination: Option<Unsupported>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub traffic_policy: Option<Unsupported>,
}

impl TlsEdgeCreate {
    /// The names of the unsupported modules given a value other than `null`.
    fn unsupported_modules(&self) -> impl Iterator<Item = &'static str> {
        Unsupported::given(
            UNSUPPORTED_EDGE_MODULES,
            [
                self.ip_restriction,
                self.mutual_tls,
                self.tls_termination,
                self.traffic_policy,
            ],
        )
    }
}

impl Validate for TlsEdgeCreate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(OTHER_DESCRIPTION, &self.description, &mut errors);
        check_text(OTHER_METADATA, &self.metadata, &mut errors);
        // Addresses compare as parsed, as DNS does: `A.example.com.:443` is `a.example.com:443`.
        let mut seen: Vec<(&str, crate::acl::Bind)> = Vec::new();
        for (i, hostport) in self.hostports.iter().flatten().enumerate() {
            let problem = match crate::acl::Bind::parse(hostport) {
                Ok(bind @ crate::acl::Bind::Address(..)) => {
                    match seen.iter().find(|(_, earlier)| *earlier == bind) {
                        Some((earlier, _)) if *earlier == hostport => {
                            Some(format!("`{hostport}` is listed twice"))
                        }
                        Some((earlier, _)) => {
                            Some(format!("`{hostport}` is the same address as `{earlier}`"))
                        }
                        None => {
                            seen.push((hostport, bind));
                            None
                        }
                    }
                }
                // A port out of range and the like: the parser says what is wrong.
                Err(message) if hostport.contains(':') => Some(message),
                _ => Some(format!("`{hostport}` is not of the form `host:port`")),
            };
            if let Some(message) = problem {
                errors.push(FieldError::new(format!("hostports[{i}]"), message));
            }
        }
        if let Some(module) = &self.backend {
            check_backend_id("backend.backend_id", &module.backend_id, &mut errors);
        }
        for name in self.unsupported_modules() {
            errors.push(FieldError::new(
                name,
                format!(
                    "the `{name}` module is not supported by this server: send `null` or leave it out"
                ),
            ));
        }
        errors
    }
}

/// `PATCH /edges/tls/{id}`: what is given changes, the rest stays; `hostports` replaces the
/// whole list. The backend module has its own routes (`/edges/tls/{id}/backend`); the official
/// client libraries send every field, so `backend` and the unsupported modules are accepted
/// as `null` and refused by name otherwise.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TlsEdgeUpdate {
    /// Sent by the official client libraries; the path's id is the one that counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostports: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_backend))]
    pub backend: Option<Unsupported>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub ip_restriction: Option<Unsupported>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub mutual_tls: Option<Unsupported>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub tls_termination: Option<Unsupported>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub traffic_policy: Option<Unsupported>,
}

impl Validate for TlsEdgeUpdate {
    fn field_errors(&self) -> Vec<FieldError> {
        let create = TlsEdgeCreate {
            description: self.description.clone(),
            metadata: self.metadata.clone(),
            hostports: self.hostports.clone(),
            backend: None,
            ip_restriction: self.ip_restriction,
            mutual_tls: self.mutual_tls,
            tls_termination: self.tls_termination,
            traffic_policy: self.traffic_policy,
        };
        let mut errors = create.field_errors();
        if self.backend.is_some() {
            errors.push(FieldError::new(
                "backend",
                "set the backend module with PUT /edges/tls/{id}/backend: send `null` here or leave it out",
            ));
        }
        errors
    }
}

/// The backend module of a TLS edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TlsEdgeBackend {
    pub enabled: bool,
    pub backend: Ref,
}

/// A backend module as a request gives it: `module` of the wrapped PUT, `backend` of a create.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TlsEdgeBackendModule {
    /// Defaults to `true` when absent or `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub backend_id: String,
}

/// `PUT /edges/tls/{id}/backend`, flat (`enabled`, `backend_id`) or wrapped (`module`, the
/// official clients' form).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TlsEdgeBackendReplace {
    /// An `id` equal to the path id is accepted and ignored (clients PUT back what
    /// they read); another id is refused by the server on field `id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Defaults to `true` when absent or `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub backend_id: String,
    /// The wrapped form of the official client; not together with `enabled` or `backend_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<TlsEdgeBackendModule>,
}

impl TlsEdgeBackendReplace {
    /// The module asked for, whichever form was sent, and the name of its `backend_id` field
    /// in that form (`backend_id` or `module.backend_id`), for errors about it.
    pub fn requested(&self) -> (TlsEdgeBackendModule, &'static str) {
        match &self.module {
            Some(module) => (module.clone(), "module.backend_id"),
            None => (
                TlsEdgeBackendModule {
                    enabled: self.enabled,
                    backend_id: self.backend_id.clone(),
                },
                "backend_id",
            ),
        }
    }
}

impl Validate for TlsEdgeBackendReplace {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        // Two forms at once could disagree; guessing which one was meant would be worse.
        if self.module.is_some() && (self.enabled.is_some() || !self.backend_id.is_empty()) {
            errors.push(FieldError::new(
                "module",
                "give either `module` or `enabled` and `backend_id`, not both",
            ));
            return errors;
        }
        let (module, field) = self.requested();
        check_backend_id(field, &module.backend_id, &mut errors);
        errors
    }
}

/// `backend_id` of a module, required and a tunnel-group backend id; `field` is where it was
/// sent.
fn check_backend_id(field: &str, backend_id: &str, errors: &mut Vec<FieldError>) {
    if backend_id.is_empty() {
        errors.push(FieldError::new(
            field,
            "backend_id is required: the tunnel-group backend to use",
        ));
    } else {
        check_id(IdKind::TunnelGroupBackend, field.into(), backend_id, errors);
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

    #[test_case]
    fn a_hostport_listed_twice_or_out_of_range_is_named() {
        let edge = TlsEdgeCreate {
            hostports: Some(vec![
                "a.example.com:443".into(),
                "A.example.com:443".into(),
                "b.example.com:99999".into(),
                "a.example.com.:443".into(),
                "a.example.com:443".into(),
                "a.example.com:8443".into(),
            ]),
            ..Default::default()
        };
        let errors = edge.field_errors();
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert_eq!(errors[0].field, "hostports[1]");
        assert_eq!(
            errors[0].message,
            "`A.example.com:443` is the same address as `a.example.com:443`"
        );
        assert_eq!(errors[1].field, "hostports[2]");
        assert!(errors[1].message.contains("99999"), "{errors:?}");
        assert!(!errors[1].message.contains("form"), "{errors:?}");
        assert_eq!(
            errors[2].field, "hostports[3]",
            "a trailing dot changes nothing"
        );
        assert!(errors[2].message.contains("same address"), "{errors:?}");
        assert_eq!(errors[3].field, "hostports[4]");
        assert!(errors[3].message.contains("listed twice"), "{errors:?}");
    }

    #[test_case]
    fn both_replace_forms_ask_for_the_same_module() {
        let flat: TlsEdgeBackendReplace =
            serde_json::from_str(r#"{"id":"edgtls_x","enabled":false,"backend_id":"bkdtg_y"}"#)
                .unwrap();
        let wrapped: TlsEdgeBackendReplace = serde_json::from_str(
            r#"{"id":"edgtls_x","module":{"enabled":false,"backend_id":"bkdtg_y"}}"#,
        )
        .unwrap();
        assert_eq!(flat.requested().0, wrapped.requested().0);
        assert_eq!(wrapped.requested().1, "module.backend_id");
        // The same problem, named where it was sent.
        let empty: TlsEdgeBackendReplace =
            serde_json::from_str(r#"{"module":{"enabled":null,"backend_id":""}}"#).unwrap();
        let errors = empty.field_errors();
        assert_eq!(errors[0].field, "module.backend_id");
        assert_eq!(
            errors[0].message,
            TlsEdgeBackendReplace::default().field_errors()[0].message
        );
        let both: TlsEdgeBackendReplace =
            serde_json::from_str(r#"{"backend_id":"bkdtg_y","module":{"backend_id":"bkdtg_y"}}"#)
                .unwrap();
        assert_eq!(both.field_errors()[0].field, "module");
        // Unknown fields stay refused, also inside `module`.
        assert!(serde_json::from_str::<TlsEdgeBackendReplace>(r#"{"module":{"x":1}}"#).is_err());
        assert!(serde_json::from_str::<TlsEdgeBackendReplace>(r#"{"x":1}"#).is_err());
    }

    #[test_case]
    fn create_accepts_the_official_clients_null_modules_only() {
        let nulls: TlsEdgeCreate = serde_json::from_str(
            r#"{"description":"","metadata":"","hostports":null,"backend":null,
                "ip_restriction":null,"mutual_tls":null,"tls_termination":null,
                "traffic_policy":null}"#,
        )
        .unwrap();
        let empty = TlsEdgeCreate {
            description: Some(String::new()),
            metadata: Some(String::new()),
            ..TlsEdgeCreate::default()
        };
        assert_eq!(nulls, empty);
        assert!(nulls.field_errors().is_empty());
        let policy: TlsEdgeCreate =
            serde_json::from_str(r#"{"traffic_policy":{"enabled":true},"mutual_tls":{}}"#).unwrap();
        let fields: Vec<_> = policy.field_errors().into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["mutual_tls", "traffic_policy"]);
        let backend: TlsEdgeCreate =
            serde_json::from_str(r#"{"backend":{"enabled":null,"backend_id":"ed_x"}}"#).unwrap();
        assert_eq!(backend.field_errors()[0].field, "backend.backend_id");
        assert!(serde_json::from_str::<TlsEdgeCreate>(r#"{"policy":null}"#).is_err());
    }
}
