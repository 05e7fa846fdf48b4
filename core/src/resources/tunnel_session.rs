//! Tunnel sessions (online agents) and the body of the agent commands.

use super::{Ref, list_page};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}

/// The body of restart, stop and update: a JSON object with no fields (a missing body is `{}`).
/// An `id` equal to the path's id is tolerated and ignored (DESIGN §4).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentCommandRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The three commands an agent obeys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
