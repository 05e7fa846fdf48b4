//! API keys (an extension, shaped as ngrok's `/api_keys`): the key itself is `token`, present
//! only in the answer to creation; `owner_id` is the user or bot the key acts as.

use super::{Validate, check_text, given, list_page};
use crate::errors::FieldError;
use crate::limits::{API_KEY_DESCRIPTION, API_KEY_METADATA};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiKey {
    pub id: String,
    pub uri: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// Present only in the response to creation; `null` everywhere else.
    pub token: Option<String>,
    pub owner_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ApiKeyCreate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    /// Admins only: the user or bot the key acts as (the caller by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<String>,
}

impl Validate for ApiKeyCreate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(API_KEY_DESCRIPTION, &self.description, &mut errors);
        check_text(API_KEY_METADATA, &self.metadata, &mut errors);
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
pub struct ApiKeyUpdate {
    /// Accepted and ignored when equal to the path id (`docs/api/README.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
}

impl Validate for ApiKeyUpdate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(API_KEY_DESCRIPTION, &self.description, &mut errors);
        check_text(API_KEY_METADATA, &self.metadata, &mut errors);
        errors
    }
}

list_page!(
    /// `GET /api_keys`: the items under `keys`, as ngrok names them.
    ApiKeyList, keys, ApiKey
);

/// `GET /me` (an extension): who the API key of the request acts as.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Me {
    /// The user (`usr_…`) or bot (`bot_…`).
    pub principal_id: String,
    /// `user` or `bot`.
    pub principal_kind: String,
    /// The user's or bot's name; empty when the operator gave none.
    pub principal_name: String,
    pub is_admin: bool,
    pub account_id: String,
    pub account_name: String,
    /// The API key of the request.
    pub api_key_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn owner_and_limits_are_checked() {
        let req = ApiKeyCreate {
            description: Some("x".repeat(256)),
            owner_id: Some("cr_1".into()),
            ..Default::default()
        };
        let fields: Vec<_> = req.field_errors().into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["description", "owner_id"]);
        let ok: ApiKeyCreate =
            serde_json::from_str(r#"{"description":"ci","owner_id":""}"#).unwrap();
        assert!(ok.validate().is_ok());
        assert!(serde_json::from_str::<ApiKeyUpdate>(r#"{"owner_id":"usr_1"}"#).is_err());
    }
}
