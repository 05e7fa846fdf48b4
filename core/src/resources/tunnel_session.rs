//! Tunnel sessions (online agents) and the body of the agent commands.
//!
//! `TunnelSession` carries two fields beyond the API (extensions, marked as such in the OpenAPI
//! document), so a client can tell before sending `update` whether it can succeed:
//! - `agent_update_target`: the version an `update` of this session would move the agent to —
//!   the newest release of the agent's own major version in the server's `--agent-latest`
//!   catalogue, if newer than `agent_version`. `null` when there is none (up to date), when the
//!   agent's version does not parse, or when the agent disabled update checks.
//! - `agent_update_checks`: whether the agent said in its hello that update checks are enabled
//!   (`false` for an agent started with `--no-update-check`, which refuses every update).
//!
//! - `agent_update_state`: where the agent is in an update, as it reported over the channel:
//!   `null` (no update in this process), `updating` (to `target`), or `updated` (to `version`,
//!   with `restart_available_in_secs`: how long a restart is still refused, counted at the
//!   moment of the response, so a client needs no clock agreeing with the server's).
//!
//! All default when absent (`null`; `true`; `null`), so JSON from a server without them still
//! decodes. `agent_version` and `agent_update_target` do not follow an update: the agent reports
//! its new version, and gets a new target, only in the session it opens after the restart.

use super::{Ref, list_page};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TunnelSession {
    pub id: String,
    pub uri: String,
    pub agent_version: String,
    pub credential: Ref,
    pub ip: String,
    pub metadata: String,
    pub os: String,
    pub region: String,
    pub started_at: String,
    pub transport: String,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// Extension: the version `update` would move the agent to; `null` when nothing
    /// newer exists in its major version or update checks are off.
    #[serde(default)]
    pub agent_update_target: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// Extension: whether the agent accepts updates at all (its hello's `update_checks`).
    #[serde(default = "enabled")]
    pub agent_update_checks: bool,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    /// Extension: the agent's update in progress or pending a restart.
    #[serde(default)]
    pub agent_update_state: Option<AgentUpdateState>,
}

/// Where a session's agent is in an update (`agent_update_state`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AgentUpdateState {
    /// Applying the update to `target`: a restart now would lose it, so it is refused.
    Updating { target: String },
    /// Updated to `version`, which runs after the next restart; a restart is refused for
    /// another `restart_available_in_secs` seconds (0: allowed now).
    Updated {
        version: String,
        restart_available_in_secs: u64,
    },
}

/// What a session without `agent_update_checks` (an older server) is taken to say: the
/// agent's default.
fn enabled() -> bool {
    true
}

/// The body of restart, stop and update: a JSON object with no fields (a missing body is `{}`).
/// An `id` equal to the path's id is tolerated and ignored (`docs/api/README.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AgentCommandRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The three commands an agent obeys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum AgentCommand {
    Restart,
    Stop,
    Update,
}

impl AgentCommand {
    pub const ALL: [AgentCommand; 3] = [
        AgentCommand::Restart,
        AgentCommand::Stop,
        AgentCommand::Update,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            AgentCommand::Restart => "restart",
            AgentCommand::Stop => "stop",
            AgentCommand::Update => "update",
        }
    }
}

list_page!(
    /// `GET /tunnel_sessions`
    TunnelSessionList, tunnel_sessions, TunnelSession
);

/// Whether an OS name reported by an agent is Windows, where restart is not supported.
pub fn is_windows(os: &str) -> bool {
    os.trim().to_ascii_lowercase().starts_with("windows")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn update_fields_are_written_and_default_when_absent() {
        let json = serde_json::json!({
            "id": "ts_1", "uri": "u", "agent_version": "3.4.0",
            "credential": {"id": "cr_1", "uri": "u"}, "ip": "127.0.0.1", "metadata": "",
            "os": "linux", "region": "local", "started_at": "t", "transport": "tunnel/v2"
        });
        let old: TunnelSession = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(old.agent_update_target, None);
        assert!(old.agent_update_checks);
        let written = serde_json::to_value(&old).unwrap();
        assert_eq!(written["agent_update_target"], serde_json::Value::Null);
        assert_eq!(written["agent_update_checks"], true);
        assert_eq!(old.agent_update_state, None);
        assert_eq!(written["agent_update_state"], serde_json::Value::Null);
        let mut new = json;
        new["agent_update_target"] = "3.4.1".into();
        new["agent_update_checks"] = false.into();
        let new: TunnelSession = serde_json::from_value(new).unwrap();
        assert_eq!(new.agent_update_target.as_deref(), Some("3.4.1"));
        assert!(!new.agent_update_checks);
        let state = AgentUpdateState::Updated {
            version: "3.4.1".into(),
            restart_available_in_secs: 7,
        };
        assert_eq!(
            serde_json::to_value(&state).unwrap(),
            serde_json::json!({"state": "updated", "version": "3.4.1", "restart_available_in_secs": 7})
        );
        let updating: AgentUpdateState =
            serde_json::from_value(serde_json::json!({"state": "updating", "target": "3.4.1"}))
                .unwrap();
        assert_eq!(
            updating,
            AgentUpdateState::Updating {
                target: "3.4.1".into()
            }
        );
    }
}
