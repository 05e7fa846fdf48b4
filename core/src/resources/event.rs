//! Events (`docs/api/events.md`): the audit log of every change, and what webhook destinations
//! receive. An event names what happened (`type`), when, who did it (the [`Actor`]) and in which
//! request, and carries the object it concerns in its API wire form (never a secret).

use super::list_page;
use serde::{Deserialize, Serialize};

/// One event of the audit log, as `GET /events` answers it and as a webhook receives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Event {
    pub id: String,
    pub uri: String,
    /// `<object>_<verb>.v0`, one of the catalogue of event types (or `ping.v0` for a
    /// destination test).
    #[serde(rename = "type")]
    pub event_type: String,
    /// RFC 3339, UTC.
    pub occurred_at: String,
    pub actor: Actor,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// The operation id of the API request that caused the event; `null` when none did (an
    /// agent connecting, the server itself).
    pub operation_id: Option<String>,
    /// The id of the object concerned (`cr_…`, `ts_…`, …).
    pub object_id: String,
    /// The object in its API wire form: after the change, or as it was before a delete.
    pub object: serde_json::Value,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// For an update, the names of the wire fields that changed; empty otherwise.
    #[serde(default)]
    pub changed_fields: Vec<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// What is particular to the type: a session end's `reason`, a command's `command` and
    /// `result`. An empty object when there is nothing more.
    #[serde(default)]
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// Who caused an event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Actor {
    #[serde(rename = "type")]
    pub kind: ActorKind,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// The user (`usr_…`) or bot (`bot_…`) for a person or script; the credential (`cr_…`)
    /// whose authtoken the agent presented for an agent; `null` for the system.
    pub id: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// The API key (`ak_…`) the request was made with, for users and bots.
    #[serde(default)]
    pub api_key_id: Option<String>,
}

/// The kinds of actors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ActorKind {
    User,
    Bot,
    Agent,
    System,
}

impl Actor {
    /// The server itself (retention, a session ending on its own).
    pub fn system() -> Actor {
        Actor {
            kind: ActorKind::System,
            id: None,
            api_key_id: None,
        }
    }

    /// The agent connected with the credential `credential_id`.
    pub fn agent(credential_id: &str) -> Actor {
        Actor {
            kind: ActorKind::Agent,
            id: Some(credential_id.to_owned()),
            api_key_id: None,
        }
    }

    /// The principal `principal_id` (a user `usr_…` or a bot `bot_…`) with the API key
    /// `api_key_id`.
    pub fn principal(principal_id: &str, api_key_id: &str) -> Actor {
        let kind = match crate::ids::IdKind::of_principal(principal_id) {
            crate::ids::IdKind::Bot => ActorKind::Bot,
            _ => ActorKind::User,
        };
        Actor {
            kind,
            id: Some(principal_id.to_owned()),
            api_key_id: Some(api_key_id.to_owned()),
        }
    }
}

list_page!(
    /// `GET /events`
    EventList, events, Event
);

/// The query parameters `GET /events` accepts besides `limit` and `before_id`: every filter is
/// optional and they combine with "and".
pub const EVENT_FILTERS: [&str; 5] = ["type", "object_id", "actor_id", "after", "before"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn actors() {
        assert_eq!(Actor::principal("bot_1", "ak_1").kind, ActorKind::Bot);
        assert_eq!(Actor::principal("usr_1", "ak_1").kind, ActorKind::User);
        let json = serde_json::to_value(Actor::system()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"type": "system", "id": null, "api_key_id": null})
        );
    }
}
