//! Messages of the agent channel (`/agent/v1/connect`, WebSocket, one JSON text frame each).
//!
//! The agent opens with `Hello`; the server answers `Welcome` (a session is open) or `Refused`
//! (and closes). The server then sends `Command`s, each answered by the agent with an `Ack`.
//! The agent reports where it is in an update with `UpdateState` (when an update starts, when
//! it finishes, and at the start of a session opened mid-update); the server keeps it to refuse
//! a restart that would lose the update. Both sides send `Ping`/`Pong`-style heartbeats at the
//! WebSocket level.

use serde::{Deserialize, Serialize};

use crate::acl::Bind;
use crate::errors::FieldError;
use crate::limits::{HELLO_METADATA, HELLO_OS, MAX_HELLO_BINDS};
use crate::resources::Validate;
use crate::resources::tunnel_session::AgentCommand;
use crate::version::Version;

/// Agent → server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentMessage {
    Hello(Hello),
    Ack(Ack),
    /// Where the agent is in an update. Sent before the `Ack` of an accepted update (so the
    /// server knows before the API answers 204), when the update finishes, and right after the
    /// welcome of a session opened while an update is running or pending a restart. A server
    /// that does not know this message ignores it.
    UpdateState {
        update: UpdateReport,
    },
}

/// An update's progress as the agent reports it. Times are durations on the agent's own
/// monotonic clock, never timestamps: the server anchors them to its receipt time, so no two
/// clocks need to agree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum UpdateReport {
    /// Applying the update to `target`; about `remaining_ms` are left.
    Updating { target: String, remaining_ms: u64 },
    /// The update to `version` finished `elapsed_ms` ago; it runs after the next restart.
    Updated { version: String, elapsed_ms: u64 },
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

/// The hello's own consistency, checked by the server before it looks at the token and by the
/// agent before it connects (one rule set, so the two cannot drift apart). The authtoken is not
/// checked here: an empty or unknown token is the server's authentication verdict, not a
/// malformed hello.
impl Validate for Hello {
    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if Version::parse(&self.agent_version).is_none() {
            errors.push(FieldError::new(
                "agent_version",
                format!(
                    "agent_version `{}` is not of the form MAJOR.MINOR.PATCH",
                    // Bounded: the value is echoed back to whoever sent it.
                    self.agent_version.chars().take(32).collect::<String>()
                ),
            ));
        }
        if self.os.trim().is_empty() {
            errors.push(FieldError::new(
                "os",
                "os must name the agent's operating system",
            ));
        }
        errors.extend(HELLO_OS.check(&self.os));
        errors.extend(HELLO_METADATA.check(&self.metadata));
        // Stored with the session (PostgreSQL cannot hold NUL) and shown by the API, which
        // refuses NUL in every text it is sent.
        for (field, text) in [("os", &self.os), ("metadata", &self.metadata)] {
            if text.contains('\0') {
                errors.push(FieldError::new(
                    field,
                    format!("{field} contains the NUL character (\\u0000), which no text may hold"),
                ));
            }
        }
        if self.binds.len() > MAX_HELLO_BINDS {
            errors.push(FieldError::new(
                "binds",
                format!(
                    "at most {MAX_HELLO_BINDS} binds may be requested; there are {}",
                    self.binds.len()
                ),
            ));
        } else {
            for (i, bind) in self.binds.iter().enumerate() {
                if let Err(e) = Bind::parse(bind) {
                    errors.push(FieldError::new(
                        format!("binds[{i}]"),
                        format!("bind `{}`: {e}", bind.chars().take(256).collect::<String>()),
                    ));
                }
            }
        }
        errors
    }
}

impl Hello {
    /// The parsed binds, once [`Validate`] passed (a bind that does not parse is skipped).
    pub fn parsed_binds(&self) -> Vec<Bind> {
        self.binds
            .iter()
            .filter_map(|b| Bind::parse(b).ok())
            .collect()
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
    /// A restart while an update is being applied (it would be lost). The server holds such a
    /// restart back itself; the agent refusing too closes the gap of a restart sent while
    /// another caller's update was still on its way to the agent.
    RestartDuringUpdate,
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
            Refusal::RestartDuringUpdate => ErrorCode::RestartDuringUpdate,
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
        let report = AgentMessage::UpdateState {
            update: UpdateReport::Updated {
                version: "3.4.1".into(),
                elapsed_ms: 5,
            },
        };
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"type": "update_state",
                "update": {"state": "updated", "version": "3.4.1", "elapsed_ms": 5}})
        );
        assert_eq!(
            serde_json::from_value::<AgentMessage>(json).unwrap(),
            report
        );
    }

    fn good_hello() -> Hello {
        Hello {
            authtoken: "t".into(),
            agent_version: "3.4.0".into(),
            os: "linux".into(),
            metadata: String::new(),
            update_checks: true,
            binds: vec!["a.example.com".into(), "env=prod".into()],
        }
    }

    fn fields(hello: &Hello) -> Vec<String> {
        hello.field_errors().into_iter().map(|e| e.field).collect()
    }

    #[test_case]
    fn hello_limits_at_and_past_their_bound() {
        assert!(fields(&good_hello()).is_empty());
        assert_eq!(good_hello().parsed_binds().len(), 2);
        let mut h = good_hello();
        h.os = "x".repeat(64);
        h.metadata = "m".repeat(4096);
        h.binds = vec!["env=prod".into(); 100];
        assert!(fields(&h).is_empty(), "{:?}", h.field_errors());
        h.os = "x".repeat(65);
        h.metadata = "m".repeat(4097);
        h.binds.push("env=prod".into());
        assert_eq!(fields(&h), ["os", "metadata", "binds"]);
        let mut h = good_hello();
        h.os = " ".into();
        h.agent_version = "3.4".into();
        h.binds = vec!["a.example.com".into(), "bad domain".into()];
        assert_eq!(fields(&h), ["agent_version", "os", "binds[1]"]);
        // The token is the server's business (an authentication verdict), not a field error.
        h = good_hello();
        h.authtoken.clear();
        assert!(fields(&h).is_empty());
        // NUL, which nothing stored may hold, in any text of the hello.
        let mut h = good_hello();
        h.os = "li\0nux".into();
        h.metadata = "m\0eta".into();
        h.binds = vec!["k\0=v".into(), "k=v\0".into(), "a\0.example.com".into()];
        assert_eq!(
            fields(&h),
            ["os", "metadata", "binds[0]", "binds[1]", "binds[2]"]
        );
    }
}
