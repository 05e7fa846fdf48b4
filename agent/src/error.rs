//! The agent's one error type, and the one place that turns it into an exit status and a
//! message (`docs/command-line.md`): 1 restart failed (or the runtime could not start), 2 bad
//! command line or configuration, 3 authtoken refused, 4 bind outside the ACL, 5 credential
//! deleted, 6 any other refusal. Status 0 (stopped) is not an error.

use tunnel_core::ErrorCode;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The command line or configuration cannot work; found before connecting.
    #[error("{0}")]
    Config(String),
    /// The server refused the hello or closed the session; `error_code` is its `ERR_TUNNEL_<n>`.
    #[error("refused by the server: {msg} ({error_code})")]
    Refused { error_code: String, msg: String },
    /// A restart could not re-execute the agent.
    #[error("restart failed: {0}")]
    Restart(#[source] std::io::Error),
    /// The async runtime could not be built.
    #[error("cannot start: {0}")]
    Start(#[source] std::io::Error),
}

impl AgentError {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            AgentError::Restart(_) | AgentError::Start(_) => 1,
            AgentError::Config(_) => 2,
            AgentError::Refused { error_code, .. } => match ErrorCode::parse(error_code) {
                Some(ErrorCode::AgentAuthFailed) => 3,
                Some(ErrorCode::BindNotPermitted) => 4,
                Some(ErrorCode::CredentialDeleted) => 5,
                _ => 6,
            },
        }
    }

    /// The line printed on stderr (never contains the authtoken: no variant holds it).
    pub fn message(&self) -> String {
        format!("tunnel-agent: {self}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(code: ErrorCode) -> AgentError {
        AgentError::Refused {
            error_code: code.as_str().to_owned(),
            msg: "m".into(),
        }
    }

    #[test]
    fn exit_codes_are_the_documented_ones() {
        assert_eq!(AgentError::Config("x".into()).exit_code(), 2);
        assert_eq!(
            AgentError::Restart(std::io::Error::other("x")).exit_code(),
            1
        );
        assert_eq!(AgentError::Start(std::io::Error::other("x")).exit_code(), 1);
        assert_eq!(refused(ErrorCode::AgentAuthFailed).exit_code(), 3);
        assert_eq!(refused(ErrorCode::BindNotPermitted).exit_code(), 4);
        assert_eq!(refused(ErrorCode::CredentialDeleted).exit_code(), 5);
        assert_eq!(refused(ErrorCode::InvalidHello).exit_code(), 6);
        let odd = AgentError::Refused {
            error_code: "ERR_FROM_THE_FUTURE".into(),
            msg: "m".into(),
        };
        assert_eq!(odd.exit_code(), 6);
        assert_eq!(
            refused(ErrorCode::AgentAuthFailed).message(),
            "tunnel-agent: refused by the server: m (ERR_TUNNEL_150)"
        );
    }
}
