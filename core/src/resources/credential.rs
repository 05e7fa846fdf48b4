//! Tunnel credentials (authtokens with ACL bind rules).

use super::{Validate, check_text, given, list_page};
use crate::acl::validate_rules;
use crate::errors::FieldError;
use crate::limits::{CREDENTIAL_DESCRIPTION, CREDENTIAL_METADATA};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Credential {
    pub id: String,
    pub uri: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// Present only in the response to creation; `null` everywhere else.
    pub token: Option<String>,
    pub acl: Vec<String>,
    pub owner_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CredentialCreate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acl: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<String>,
}

impl Validate for CredentialCreate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(CREDENTIAL_DESCRIPTION, &self.description, &mut errors);
        check_text(CREDENTIAL_METADATA, &self.metadata, &mut errors);
        if let Some(acl) = &self.acl {
            validate_rules(acl, &mut errors);
        }
        if let Some(owner) = given(&self.owner_id) {
            super::check_owner(owner, &mut errors);
        }
        errors
    }
}

/// PATCH body: absent and `null` leave a field unchanged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CredentialUpdate {
    /// Accepted and ignored when equal to the path id (`docs/api/README.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acl: Option<Vec<String>>,
}

impl Validate for CredentialUpdate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(CREDENTIAL_DESCRIPTION, &self.description, &mut errors);
        check_text(CREDENTIAL_METADATA, &self.metadata, &mut errors);
        if let Some(acl) = &self.acl {
            validate_rules(acl, &mut errors);
        }
        errors
    }
}

list_page!(
    /// `GET /credentials`
    CredentialList, credentials, Credential
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn create_reports_every_problem_at_once() {
        let req = CredentialCreate {
            description: Some("d".repeat(256)),
            metadata: Some("m".repeat(4097)),
            acl: Some(vec!["bind:*.example.com".into(), "oops".into()]),
            owner_id: Some("cr_nope".into()),
        };
        let fields: Vec<_> = req.field_errors().into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["description", "metadata", "acl[1]", "owner_id"]);
    }

    #[test_case]
    fn empty_values_mean_not_given() {
        let req: CredentialCreate =
            serde_json::from_str(r#"{"description":"","metadata":"","acl":[],"owner_id":""}"#)
                .unwrap();
        assert!(req.validate().is_ok());
    }

    #[test_case]
    fn unknown_fields_are_named_with_the_accepted_ones() {
        let err = serde_json::from_str::<CredentialCreate>(r#"{"descripton":"x"}"#).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("descripton") && text.contains("description"),
            "{text}"
        );
        assert!(serde_json::from_str::<CredentialUpdate>(r#"{"owner_id":"usr_x"}"#).is_err());
    }

    #[test_case]
    fn token_is_null_when_absent() {
        let cred = Credential {
            id: "cr_1".into(),
            uri: "u".into(),
            created_at: "t".into(),
            description: String::new(),
            metadata: String::new(),
            token: None,
            acl: vec![],
            owner_id: "usr_1".into(),
        };
        assert_eq!(
            serde_json::to_value(&cred).unwrap()["token"],
            serde_json::Value::Null
        );
    }
}
