//! Event destinations (`docs/api/event_destinations.md`): where subscriptions send events. Only
//! webhooks for now.

use super::{Validate, check_text, list_page};
use crate::errors::FieldError;
use crate::limits::{OTHER_DESCRIPTION, OTHER_METADATA};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventDestination {
    pub id: String,
    pub uri: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    /// Always `json`.
    pub format: String,
    pub target: EventTarget,
}

/// Exactly one kind of target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventTarget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookTarget>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookTarget {
    pub url: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventDestinationCreate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    #[serde(default)]
    pub target: EventTarget,
}

impl Validate for EventDestinationCreate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(OTHER_DESCRIPTION, &self.description, &mut errors);
        check_text(OTHER_METADATA, &self.metadata, &mut errors);
        if let Some(format) = super::given(&self.format).filter(|f| *f != "json") {
            errors.push(FieldError::new(
                "format",
                format!("`{format}` is not a format; the only format is `json`"),
            ));
        }
        match &self.target.webhook {
            None => errors.push(FieldError::new(
                "target",
                "target needs a webhook: {\"webhook\": {\"url\": \"https://…\"}}",
            )),
            Some(hook) => {
                let ok = (hook.url.starts_with("https://") || hook.url.starts_with("http://"))
                    && hook.url.len() <= 2048
                    && !hook.url.chars().any(char::is_whitespace)
                    && hook
                        .url
                        .split_once("://")
                        .is_some_and(|(_, rest)| !rest.is_empty());
                if !ok {
                    errors.push(FieldError::new(
                        "target.webhook.url",
                        "the webhook url must be an http:// or https:// URL",
                    ));
                }
            }
        }
        errors
    }
}

list_page!(
    /// `GET /event_destinations`
    EventDestinationList, event_destinations, EventDestination
);
