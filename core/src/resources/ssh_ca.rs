//! SSH certificate authorities.

use super::{Validate, check_text, list_page};
use crate::errors::FieldError;
use crate::limits::{SSH_CA_DESCRIPTION, SSH_CA_METADATA};
use crate::ssh::KeySpec;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SshCertificateAuthority {
    pub id: String,
    pub uri: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    /// One OpenSSH line: `<algorithm> <base64>`.
    pub public_key: String,
    /// `rsa`, `ecdsa` or `ed25519`.
    pub key_type: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SshCertificateAuthorityCreate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elliptic_curve: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_size: Option<i64>,
}

impl SshCertificateAuthorityCreate {
    /// The key to generate, or the field errors of the key parameters.
    pub fn key_spec(&self) -> Result<KeySpec, Vec<FieldError>> {
        let mut errors = Vec::new();
        KeySpec::resolve(
            self.private_key_type.as_deref(),
            self.elliptic_curve.as_deref(),
            self.key_size,
            &mut errors,
        )
        .ok_or(errors)
    }
}

impl Validate for SshCertificateAuthorityCreate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(SSH_CA_DESCRIPTION, &self.description, &mut errors);
        check_text(SSH_CA_METADATA, &self.metadata, &mut errors);
        if let Err(mut found) = self.key_spec() {
            errors.append(&mut found);
        }
        errors
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SshCertificateAuthorityUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
}

impl Validate for SshCertificateAuthorityUpdate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(SSH_CA_DESCRIPTION, &self.description, &mut errors);
        check_text(SSH_CA_METADATA, &self.metadata, &mut errors);
        errors
    }
}

list_page!(
    /// `GET /ssh_certificate_authorities`
    SshCertificateAuthorityList, ssh_certificate_authorities, SshCertificateAuthority
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn key_parameters_and_limits_are_checked_together() {
        let req = SshCertificateAuthorityCreate {
            description: Some("é".repeat(128)),
            private_key_type: Some("rsa".into()),
            key_size: Some(1024),
            ..Default::default()
        };
        let fields: Vec<_> = req.field_errors().into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["description", "key_size"]);
        let ok: SshCertificateAuthorityCreate = serde_json::from_str(
            r#"{"private_key_type":"ecdsa","elliptic_curve":"p384","key_size":0}"#,
        )
        .unwrap();
        assert!(ok.validate().is_ok());
    }
}
