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
    #[serde(default, deserialize_with = "super::null_is_default")]
    #[cfg_attr(feature = "openapi", schema(required = true, max_length = 2048))]
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
    /// `null` is absent, as for every field: the missing target is then said by validation.
    #[serde(default, deserialize_with = "super::null_is_default")]
    #[cfg_attr(feature = "openapi", schema(required = true))]
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
            let problem = if url.is_empty() {
                Some("the webhook url is missing: give an http:// or https:// URL".to_owned())
            } else if url.len() > MAX_WEBHOOK_URL_BYTES {
                Some(format!(
                    "the webhook url is {} bytes long; at most {MAX_WEBHOOK_URL_BYTES} are allowed",
                    url.len()
                ))
            } else if url.chars().any(char::is_whitespace) {
                Some("the webhook url contains whitespace; remove it".to_owned())
            } else if !(has_prefix(url, "https://") || has_prefix(url, "http://"))
                || url
                    .split_once("://")
                    .is_some_and(|(_, rest)| rest.is_empty())
            {
                Some("the webhook url must be an http:// or https:// URL".to_owned())
            } else {
                authority_problem(url)
            };
            if let Some(message) = problem {
                errors.push(FieldError::new("target.webhook.url", message));
            }
        }
    }
}

/// Whether `text` starts with `prefix`, in any case (URL schemes are case-insensitive).
fn has_prefix(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
}

/// What is wrong with the host and port of an `http(s)://` URL, if anything: the mistakes a
/// person makes typing one (no host, a port out of range, an unclosed IPv6 bracket). A full URL
/// parser would cost the console's WASM its Unicode tables; the server parses the URL fully as
/// well before storing it.
fn authority_problem(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or("", |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let (host, port) = if let Some(inner) = host_port.strip_prefix('[') {
        let Some((ip, after)) = inner.split_once(']') else {
            return Some("the webhook url's IPv6 host has no closing `]`".to_owned());
        };
        if ip.parse::<std::net::Ipv6Addr>().is_err() {
            return Some(format!("`[{ip}]` is not an IPv6 address"));
        }
        match after.strip_prefix(':') {
            Some(port) => (ip, Some(port)),
            None if after.is_empty() => (ip, None),
            None => return Some(format!("`{after}` after the IPv6 host is not a `:port`")),
        }
    } else {
        match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    if host.is_empty() {
        return Some("the webhook url has no host".to_owned());
    }
    if let Some(c) = host
        .chars()
        .find(|c| c.is_control() || "%<>\"^`{|}[]\\".contains(*c))
    {
        return Some(format!(
            "the webhook url's host `{host}` holds `{c}`, which no host name may"
        ));
    }
    match port {
        Some(port) if !port.is_empty() && port.parse::<u16>().is_err() => Some(format!(
            "the webhook url's port `{port}` is not a number from 0 to 65535"
        )),
        _ => None,
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
        // Schemes in any case, as URLs have them.
        assert!(url_errors("HTTPS://EXAMPLE.COM/hook").is_empty());
        assert!(url_errors("Http://[::1]:8080/").is_empty());
        assert!(url_errors("https://user:pw@example.com:8443/x?y#z").is_empty());
        for (url, said) in [
            ("https://example.com:99999/", "port `99999`"),
            ("https://example.com:8o/", "port `8o`"),
            ("http://[::1", "no closing `]`"),
            ("http://[nope]/", "not an IPv6 address"),
            ("http://[::1]x/", "not a `:port`"),
            ("http://:80/", "no host"),
            ("http://@/", "no host"),
            ("https://ex%00ample.com/", "holds `%`"),
        ] {
            let errors = url_errors(url);
            assert!(
                errors.len() == 1 && errors[0].contains(said),
                "{url}: {errors:?}"
            );
        }
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
