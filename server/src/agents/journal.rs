//! The audit events of tunnel sessions (docs/api/events.md): `tunnel_session_started.v0`,
//! `tunnel_session_ended.v0` with the reason, and `tunnel_session_<command>_requested.v0` with
//! the command's result. Built here once, whichever node records them: the node holding the
//! connection, the node that removes a dead node's sessions, or the node that sent a command.

use crate::store::{Cause, NewEvent};
use tunnel_core::errors::ErrorCode;
use tunnel_core::event_types::event_type;
use tunnel_core::ids::IdKind;
use tunnel_core::resources::tunnel_session::{AgentCommand, TunnelSession};

/// The event `tunnel_session_<verb>.v0` of `session`, caused by `cause`, with `details`.
fn session_event(
    verb: &str,
    session: &TunnelSession,
    cause: Cause,
    details: serde_json::Map<String, serde_json::Value>,
) -> NewEvent {
    NewEvent {
        event_type: event_type(IdKind::TunnelSession, verb),
        cause,
        object_id: session.id.clone(),
        object: serde_json::to_value(session).unwrap_or_default(),
        changed_fields: Vec::new(),
        details,
    }
}

/// The session opened, on the agent's behalf.
pub fn started(session: &TunnelSession, cause: Cause) -> NewEvent {
    session_event("started", session, cause, serde_json::Map::new())
}

/// The session ended for `reason` (`stopped`, `restarted`, `credential_deleted`,
/// `acl_changed` or `disconnected`), on behalf of `cause`.
pub fn ended(session: &TunnelSession, reason: &str, cause: Cause) -> NewEvent {
    let mut details = serde_json::Map::new();
    details.insert("reason".into(), reason.into());
    session_event("ended", session, cause, details)
}

/// `command` was sent to the session; `result` is `accepted`, `refused` (with the refusal's
/// `code`), `timed_out` or `ended`.
pub fn command_requested(
    session: &TunnelSession,
    command: AgentCommand,
    cause: Cause,
    result: &str,
    code: Option<ErrorCode>,
) -> NewEvent {
    let mut details = serde_json::Map::new();
    details.insert("command".into(), command.as_str().into());
    details.insert("result".into(), result.into());
    if let Some(code) = code {
        details.insert("error_code".into(), code.as_str().into());
    }
    session_event(
        &format!("{}_requested", command.as_str()),
        session,
        cause,
        details,
    )
}
