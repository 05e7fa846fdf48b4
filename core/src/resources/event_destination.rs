//! Event destinations (`docs/api/event_destinations.md`): where subscriptions send events. Only
//! webhooks for now. Each destination has its own signing secret, shown once; and its
//! deliveries (one per event sent to it) with every attempt made.

use super::{Unsupported, Validate, check_text, list_page};
use crate::errors::FieldError;
use crate::limits::{OTHER_DESCRIPTION, OTHER_METADATA};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventDestination {
    pub id: String,
    pub uri: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    /// Always `json`.
    pub format: String,
    pub target: EventTarget,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// The secret webhooks are signed with (`whsec_<base64>`, Standard Webhooks): only in the
    /// answers of create and `rotate_secret`, `null` on every other read.
    #[serde(default)]
    pub signing_secret: Option<String>,
}

/// Exactly one kind of target: a webhook.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EventTarget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookTarget>,
    // The other kinds of the official clients' `EventTarget`, which those clients send as
    // `null` whatever is set ([`UNSUPPORTED_TARGETS`]): accepted as `null` or absent, refused
    // by name otherwise (read as [`Unsupported`]), so never stored nor answered back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub firehose: Option<Unsupported>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub kinesis: Option<Unsupported>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub cloudwatch_logs: Option<Unsupported>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub datadog: Option<Unsupported>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = super::null_only))]
    pub azure_logs_ingestion: Option<Unsupported>,
}

/// The target kinds the official clients send (as `null`) that this server does not deliver to.
pub const UNSUPPORTED_TARGETS: [&str; 5] = [
    "firehose",
    "kinesis",
    "cloudwatch_logs",
    "datadog",
    "azure_logs_ingestion",
];

impl EventTarget {
    /// A webhook target.
    pub fn webhook(url: impl Into<String>) -> Self {
        Self {
            webhook: Some(WebhookTarget { url: url.into() }),
            ..Self::default()
        }
    }

    /// The names of the unsupported kinds given a value other than `null`.
    fn unsupported(&self) -> impl Iterator<Item = &'static str> {
        Unsupported::given(
            UNSUPPORTED_TARGETS,
            [
                self.firehose,
                self.kinesis,
                self.cloudwatch_logs,
                self.datadog,
                self.azure_logs_ingestion,
            ],
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct WebhookTarget {
    pub url: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
        check_format(&self.format, &mut errors);
        check_target(&self.target, &mut errors);
        errors
    }
}

fn check_format(format: &Option<String>, errors: &mut Vec<FieldError>) {
    // Any case: the official clients' documentation writes it `JSON`; it is stored as `json`.
    if let Some(format) = super::given(format).filter(|f| !f.eq_ignore_ascii_case("json")) {
        errors.push(FieldError::new(
            "format",
            format!("`{format}` is not a format; the only format is `json`"),
        ));
    }
}

/// The longest webhook URL accepted, in bytes.
const MAX_WEBHOOK_URL_BYTES: usize = 2048;

fn check_target(target: &EventTarget, errors: &mut Vec<FieldError>) {
    for name in target.unsupported() {
        errors.push(FieldError::new(
            format!("target.{name}"),
            format!(
                "`{name}` targets are not supported by this server (only `webhook`): send `null` or leave it out"
            ),
        ));
    }
    match &target.webhook {
        None => errors.push(FieldError::new(
            "target",
            "target needs a webhook: {\"webhook\": {\"url\": \"https://…\"}}",
        )),
        Some(hook) => {
            let url = &hook.url;
            // Each problem said as itself: a long URL told it is no URL would be a puzzle.
            let problem = if url.len() > MAX_WEBHOOK_URL_BYTES {
                Some(format!(
                    "the webhook url is {} bytes long; at most {MAX_WEBHOOK_URL_BYTES} are allowed",
                    url.len()
                ))
            } else if url.chars().any(char::is_whitespace) {
                Some("the webhook url contains whitespace; remove it".to_owned())
            } else if !(url.starts_with("https://") || url.starts_with("http://"))
                || url
                    .split_once("://")
                    .is_some_and(|(_, rest)| rest.is_empty())
            {
                Some("the webhook url must be an http:// or https:// URL".to_owned())
            } else {
                None
            };
            if let Some(message) = problem {
                errors.push(FieldError::new("target.webhook.url", message));
            }
        }
    }
}

/// `PATCH /event_destinations/{id}`: every field optional, absent and `null` keep the value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EventDestinationUpdate {
    /// Accepted when equal to the path's id, and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<EventTarget>,
}

impl Validate for EventDestinationUpdate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(OTHER_DESCRIPTION, &self.description, &mut errors);
        check_text(OTHER_METADATA, &self.metadata, &mut errors);
        check_format(&self.format, &mut errors);
        if let Some(target) = &self.target {
            check_target(target, &mut errors);
        }
        errors
    }
}

list_page!(
    /// `GET /event_destinations`
    EventDestinationList, event_destinations, EventDestination
);

/// The state of a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Waiting for its first attempt or for a retry.
    Pending,
    /// A 2xx answered it.
    Succeeded,
    /// Every retry failed; no more attempts.
    Failed,
}

/// One event sent (or to be sent) to one destination, with its attempts, newest first.
/// `GET /event_destinations/{id}/deliveries` lists them (an extension).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventDelivery {
    pub id: String,
    pub event_id: String,
    pub event_type: String,
    pub created_at: String,
    pub state: DeliveryState,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// When the next attempt is due, while pending.
    pub next_attempt_at: Option<String>,
    pub attempts: Vec<DeliveryAttempt>,
}

/// One HTTP attempt of a delivery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryAttempt {
    /// RFC 3339, UTC, to the millisecond.
    pub attempted_at: String,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// The receiver's HTTP status; `null` when none came (refused, timeout, connection error).
    pub status_code: Option<u16>,
    pub latency_ms: u64,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// Why the attempt failed, in words; `null` on success.
    pub error: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// The first 1 KiB of the response body (lossy UTF-8).
    pub response_body: Option<String>,
}

list_page!(
    /// `GET /event_destinations/{id}/deliveries`
    EventDeliveryList, deliveries, EventDelivery
);

/// `POST /event_destinations/{id}/test`: the `ping.v0` event sent and its one attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DestinationTest {
    pub event_id: String,
    pub attempt: DeliveryAttempt,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    fn url_errors(url: &str) -> Vec<String> {
        let create = EventDestinationCreate {
            target: EventTarget::webhook(url),
            ..Default::default()
        };
        create
            .field_errors()
            .into_iter()
            .map(|e| e.message)
            .collect()
    }

    #[test_case]
    fn a_bad_webhook_url_is_told_what_is_wrong() {
        assert!(url_errors("https://example.com/hook").is_empty());
        let long = format!("https://example.com/{}", "p".repeat(2100));
        assert!(
            url_errors(&long)[0].contains("at most 2048"),
            "{:?}",
            url_errors(&long)
        );
        assert!(url_errors("https://example.com/a b")[0].contains("whitespace"));
        assert!(url_errors("ftp://example.com/")[0].contains("http:// or https://"));
        assert!(url_errors("https://")[0].contains("http:// or https://"));
    }

    #[test_case]
    fn the_format_is_json_in_any_case() {
        let create = |format: &str| EventDestinationCreate {
            format: Some(format.to_owned()),
            target: EventTarget::webhook("https://example.com/h"),
            ..Default::default()
        };
        for format in ["json", "JSON", "Json", ""] {
            assert!(create(format).field_errors().is_empty(), "{format}");
        }
        let errors = create("xml").field_errors();
        assert_eq!(errors[0].field, "format");
        assert!(errors[0].message.contains("only format is `json`"));
    }

    #[test_case]
    fn the_official_clients_null_target_kinds_are_accepted_and_others_refused_by_name() {
        // What the official Python client sends for a webhook: every other kind as `null`.
        let sent = serde_json::json!({"target": {"webhook": {"url": "https://example.com/h"},
            "firehose": null, "kinesis": null, "cloudwatch_logs": null, "datadog": null,
            "azure_logs_ingestion": null}});
        let create: EventDestinationCreate = serde_json::from_value(sent).unwrap();
        assert!(
            create.field_errors().is_empty(),
            "{:?}",
            create.field_errors()
        );
        assert_eq!(create.target, EventTarget::webhook("https://example.com/h"));
        // Nothing of them is written back.
        assert_eq!(
            serde_json::to_value(&create.target).unwrap(),
            serde_json::json!({"webhook": {"url": "https://example.com/h"}})
        );

        let sent = serde_json::json!({"target": {"datadog": {"api_key": "k"}}});
        let create: EventDestinationCreate = serde_json::from_value(sent).unwrap();
        let fields: Vec<_> = create.field_errors().into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["target.datadog", "target"]);
        let sent = serde_json::json!({"target": {"sqs": null}});
        assert!(serde_json::from_value::<EventDestinationCreate>(sent).is_err());
    }
}
