//! Event subscriptions: sources (event types) and destinations. Limits are in characters.

use super::{Ref, Validate, check_id, check_text, list_page};
use crate::errors::FieldError;
use crate::event_types::check_known;
use crate::ids::IdKind;
use crate::limits::{
    EVENT_SUBSCRIPTION_DESCRIPTION, EVENT_SUBSCRIPTION_METADATA, MAX_EVENT_DESTINATIONS,
    MAX_EVENT_SOURCES, bounded_items,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventSubscription {
    pub id: String,
    pub uri: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    pub sources: Vec<EventSource>,
    pub destinations: Vec<Ref>,
}

/// A source in responses; `uri` is `<subscription uri>/sources/<type>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventSource {
    #[serde(rename = "type")]
    pub event_type: String,
    pub uri: String,
}

/// A source in requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EventSourceReplace {
    // Absent is "" and reported by validation under its name, as every required field is
    // (docs/api/README.md, "Bodies"); documented as required all the same.
    #[serde(rename = "type", default, deserialize_with = "super::null_is_default")]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub event_type: String,
}

/// `POST /event_subscriptions/{id}/sources`: adds one type. `subscription_id`, which official
/// clients send, is accepted when equal to the path's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EventSourceCreate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<String>,
    #[serde(rename = "type", default, deserialize_with = "super::null_is_default")]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub event_type: String,
}

impl Validate for EventSourceCreate {
    fn field_errors(&self) -> Vec<FieldError> {
        match check_known(&self.event_type) {
            Ok(()) => Vec::new(),
            Err(message) => vec![FieldError::new("type", message)],
        }
    }
}

/// `PATCH /event_subscriptions/{id}/sources/{type}`: a source has nothing to change but its
/// type, which is its identity; the body may repeat the path's subscription id and type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EventSourceUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<String>,
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
}

/// `GET /event_subscriptions/{id}/sources`: every source, in the subscription's order (one page:
/// a subscription has at most 100).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventSourceList {
    pub sources: Vec<EventSource>,
    pub uri: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EventSubscriptionCreate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<EventSourceReplace>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination_ids: Option<Vec<String>>,
}

impl Validate for EventSubscriptionCreate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(
            EVENT_SUBSCRIPTION_DESCRIPTION,
            &self.description,
            &mut errors,
        );
        check_text(EVENT_SUBSCRIPTION_METADATA, &self.metadata, &mut errors);
        check_sources(self.sources.as_deref().unwrap_or_default(), &mut errors);
        check_destinations(
            self.destination_ids.as_deref().unwrap_or_default(),
            &mut errors,
        );
        errors
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EventSubscriptionUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<EventSourceReplace>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination_ids: Option<Vec<String>>,
}

impl Validate for EventSubscriptionUpdate {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        check_text(
            EVENT_SUBSCRIPTION_DESCRIPTION,
            &self.description,
            &mut errors,
        );
        check_text(EVENT_SUBSCRIPTION_METADATA, &self.metadata, &mut errors);
        if let Some(sources) = &self.sources {
            check_sources(sources, &mut errors);
        }
        if let Some(ids) = &self.destination_ids {
            check_destinations(ids, &mut errors);
        }
        errors
    }
}

/// Each source a known event type, none twice. No source at all is valid (the API sets no
/// minimum and clients send `sources: []` by default): such a subscription delivers nothing
/// until a source is added.
fn check_sources(sources: &[EventSourceReplace], errors: &mut Vec<FieldError>) {
    for (i, source, repeated) in
        bounded_items(sources, "sources", MAX_EVENT_SOURCES, source_type, errors)
    {
        let field = format!("sources[{i}].type");
        if repeated {
            errors.push(FieldError::new(
                field,
                format!("`{}` is listed twice", source.event_type),
            ));
        } else if let Err(message) = check_known(&source.event_type) {
            errors.push(FieldError::new(field, message));
        }
    }
}

fn source_type(source: &EventSourceReplace) -> &str {
    &source.event_type
}

fn check_destinations(ids: &[String], errors: &mut Vec<FieldError>) {
    let items = bounded_items(
        ids,
        "destination_ids",
        MAX_EVENT_DESTINATIONS,
        String::as_str,
        errors,
    );
    for (i, id, repeated) in items {
        let field = format!("destination_ids[{i}]");
        if repeated {
            errors.push(FieldError::new(field, format!("`{id}` is listed twice")));
        } else {
            check_id(IdKind::EventDestination, field, id, errors);
        }
    }
}

list_page!(
    /// `GET /event_subscriptions`
    EventSubscriptionList, event_subscriptions, EventSubscription
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    fn source(t: &str) -> EventSourceReplace {
        EventSourceReplace {
            event_type: t.into(),
        }
    }

    #[test_case]
    fn limits_are_in_characters() {
        let ok = EventSubscriptionCreate {
            description: Some("é".repeat(255)),
            metadata: Some("é".repeat(4096)),
            sources: Some(vec![source("credential_created.v0")]),
            destination_ids: None,
        };
        assert_eq!(ok.field_errors(), vec![]);
        let bad = EventSubscriptionCreate {
            description: Some("é".repeat(256)),
            ..ok
        };
        assert_eq!(bad.field_errors()[0].field, "description");
    }

    #[test_case]
    fn sources_and_destinations_are_checked() {
        let req = EventSubscriptionCreate {
            sources: Some(vec![
                source("credential_created.v0"),
                source("credential_created.v0"),
                source("bogus.v1"),
                source("bad"),
            ]),
            destination_ids: Some(vec!["cr_x".into()]),
            ..Default::default()
        };
        let fields: Vec<_> = req.field_errors().into_iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            [
                "sources[1].type",
                "sources[2].type",
                "sources[3].type",
                "destination_ids[0]"
            ]
        );
    }

    #[test_case]
    fn no_sources_is_valid_on_create_and_update() {
        // Absent, and the empty list official clients send by default.
        assert_eq!(EventSubscriptionCreate::default().field_errors(), vec![]);
        let empty: EventSubscriptionCreate = serde_json::from_str(r#"{"sources":[]}"#).unwrap();
        assert_eq!(empty.sources, Some(vec![]));
        assert_eq!(empty.field_errors(), vec![]);
        let cleared: EventSubscriptionUpdate = serde_json::from_str(r#"{"sources":[]}"#).unwrap();
        assert_eq!(cleared.sources, Some(vec![]));
        assert_eq!(cleared.field_errors(), vec![]);
    }

    #[test_case]
    fn update_of_description_alone_is_valid() {
        let req: EventSubscriptionUpdate =
            serde_json::from_str(r#"{"description":"x","sources":null}"#).unwrap();
        assert!(req.validate().is_ok());
        let json = serde_json::to_value(source("a.v0")).unwrap();
        assert_eq!(json, serde_json::json!({"type": "a.v0"}));
    }
}
