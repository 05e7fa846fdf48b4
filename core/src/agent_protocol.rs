//! Messages of the agent channel (`/agent/v1/connect`, WebSocket, one JSON text frame each).
//!
//! The agent opens with `Hello`; the server answers `Welcome` (a session is open) or `Refused`
//! (and closes). The server then sends `Command`s, each answered by the agent with an `Ack`.
//! Both sides send `Ping`/`Pong`-style heartbeats at the WebSocket level.

use serde::{Deserialize, Serialize};

use crate::resources::tunnel_session::AgentCommand;

/// Agent → server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentMessage {
    Hello(Hello),
    Ack(Ack),
}

/// The first message of an agent.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// The credential's authtoken. Sent in the body, never in the URL.
    pub authtoken: String,
    pub agent_version: String,
    pub os: String,
    #[serde(default)]
    pub metadata: String,
    pub update_checks: bool,
    /// Domains, wildcard domains, `host:port` addresses and `key=value` labels.
    #[serde(default)]
    pub binds: Vec<String>,
}

/// Never prints the authtoken.
impl std::fmt::Debug for Hello {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hello")
            .field("agent_version", &self.agent_version)
            .field("os", &self.os)
            .field("update_checks", &self.update_checks)
            .field("binds", &self.binds)
            .finish_non_exhaustive()
    }
}

/// The agent's answer to one command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ack {
    pub command_id: u64,
    /// `None` when the command was accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<Refusal>,
}

/// Why an agent refused a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    RestartUnsupported,
    UpdateChecksDisabled,
    UpdateInProgress,
    UpdatedNotRestarted,
    NoUpdateAvailable,
}

impl Refusal {
    pub fn code(self) -> crate::errors::ErrorCode {
        use crate::errors::ErrorCode;
        match self {
            Refusal::RestartUnsupported => ErrorCode::RestartUnsupported,
            Refusal::UpdateChecksDisabled => ErrorCode::UpdateChecksDisabled,
            Refusal::UpdateInProgress => ErrorCode::UpdateInProgress,
            Refusal::UpdatedNotRestarted => ErrorCode::UpdatedNotRestarted,
            Refusal::NoUpdateAvailable => ErrorCode::NoUpdateAvailable,
        }
    }
}

/// Server → agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    Welcome {
        session_id: String,
    },
    Refused {
        error_code: String,
        msg: String,
    },
    Command {
        command_id: u64,
        command: AgentCommand,
        /// For `update`: the version to update to (same major version).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target_version: Option<String>,
    },
    /// The session is being closed by the server (e.g. its credential was deleted).
    Closed {
        error_code: String,
        msg: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn messages_round_trip_and_hide_the_token() {
        let hello = AgentMessage::Hello(Hello {
            authtoken: "secret-token".into(),
            agent_version: "3.4.0".into(),
            os: "linux".into(),
            metadata: String::new(),
            update_checks: true,
            binds: vec!["a.example.com".into()],
        });
        let json = serde_json::to_string(&hello).unwrap();
        assert!(json.contains(r#""type":"hello""#));
        assert_eq!(serde_json::from_str::<AgentMessage>(&json).unwrap(), hello);
        assert!(!format!("{hello:?}").contains("secret-token"));
        let cmd = ServerMessage::Command {
            command_id: 1,
            command: AgentCommand::Update,
            target_version: Some("3.4.1".into()),
        };
        let json = serde_json::to_string(&cmd).unwrap();
        assert_eq!(serde_json::from_str::<ServerMessage>(&json).unwrap(), cmd);
    }
}
