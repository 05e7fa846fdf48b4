//! The agent commands (restart, stop, update), as a service of the live sessions: find the
//! session, send the command over its agent channel, await the acknowledgement, and say why a
//! command was not accepted ([`Undelivered`]). The HTTP routes and their answers (404, 409 with
//! the refusal's code, 504) are the API's (`api::tunnel_sessions`).
//!
//! Who decides what: the server names the update target from its `--agent-latest` catalogue
//! (same major version only, `None` when nothing newer is known); the agent, which alone knows
//! whether it is updating, decides every update refusal and says which. Restart on Windows is
//! refused by both: here from the reported OS, and by the agent.
//!
//! A restart is also refused here, before anything is sent, while the agent applies an update
//! and for the wait after it ([`Undelivered::MustWait`]): the server knows the update's
//! progress from the agent's own reports (`Registry::restart_wait`), so the rule holds for every
//! client, not only the console. Restarting then would run the old version and lose the update.
//!
//! The target is chosen once, when the session opens ([`session_update_target`]), and shown as
//! the session's `agent_update_target`, so what a client sees before sending `update` is the
//! target the command carries. An agent whose hello disabled update checks gets none: it would
//! refuse any target, and its own refusal (update checks disabled) takes precedence over "no
//! target", so the outcome of the command does not change.

use super::registry::{CommandError, Registry};
use super::updates::RestartWait;
use crate::store::{Cause, unix_ms};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tunnel_core::agent_protocol::Refusal;
use tunnel_core::resources::tunnel_session::{AgentCommand, is_windows};
use tunnel_core::version::{Version, update_target};

/// Why a command was not accepted. Serialisable: the node holding the agent sends it back to
/// the node the command came through (`super::cluster`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Undelivered {
    /// No such session in the account (or it is leaving after an accepted stop or restart).
    NotFound,
    /// The session ended before the agent acknowledged the command: gone, not slow.
    Ended,
    /// The link is up but no acknowledgement came within this time.
    Timeout(Duration),
    /// Refused (by the agent, or here for a restart on Windows), with what the session reported
    /// of itself, so the refusal can be explained.
    Refused {
        refusal: Refusal,
        os: String,
        agent_version: String,
        /// Whether the agent refused it: the audit log records a command that reached the
        /// agent, not one this server refused before sending anything. A node of an older
        /// version does not say, and only ever sent refusals from agents.
        #[serde(default = "by_the_agent")]
        by_agent: bool,
    },
    /// A restart must wait: an update is being applied or finished too recently.
    MustWait(RestartWait),
    /// The node holding the session did not answer: the command may or may not have reached
    /// the agent.
    Unreachable,
    /// The node holding the session could not be reached at all (no connection to it could be
    /// made), or the directory could not be read: the command was not sent.
    NotSent,
}

fn by_the_agent() -> bool {
    true
}

fn now_ms() -> i64 {
    unix_ms(time::OffsetDateTime::now_utc())
}

/// Sends `command` to the session `id` of `account_id` and waits for the agent's answer.
pub async fn deliver(
    registry: &Registry,
    account_id: &str,
    id: &str,
    command: AgentCommand,
    cause: &Cause,
) -> Result<(), Undelivered> {
    let Some(session) = registry.get(account_id, id).map(|live| live.session) else {
        return Err(Undelivered::NotFound);
    };
    let refused = |refusal, by_agent| Undelivered::Refused {
        refusal,
        os: session.os.clone(),
        agent_version: session.agent_version.clone(),
        by_agent,
    };
    // The agent refuses this itself; checking here too keeps the answer right for any agent
    // that reports Windows, without a round trip.
    if command == AgentCommand::Restart && is_windows(&session.os) {
        return Err(refused(Refusal::RestartUnsupported, false));
    }
    if command == AgentCommand::Restart
        && let Some(wait) = registry.restart_wait(account_id, id, now_ms())
    {
        return Err(Undelivered::MustWait(wait));
    }
    let target = match command {
        AgentCommand::Update => session.agent_update_target.clone(),
        _ => None,
    };
    registry
        .command(account_id, id, command, target, cause)
        .await
        .map_err(|e| match e {
            CommandError::NotFound => Undelivered::NotFound,
            CommandError::Ended => Undelivered::Ended,
            CommandError::Timeout => Undelivered::Timeout(registry.timings().command_timeout),
            // The agent is applying an update the server had not heard of when it checked (it
            // was accepted in the meantime): the same answer as the server's own check. The
            // agent reports an update before acknowledging it, so its state is known by now.
            CommandError::Refused(Refusal::RestartDuringUpdate) => Undelivered::MustWait(
                registry
                    .restart_wait(account_id, id, now_ms())
                    .unwrap_or_else(|| RestartWait::Updating {
                        target: session.agent_update_target.clone().unwrap_or_default(),
                        secs: 1,
                    }),
            ),
            CommandError::Refused(refusal) => refused(refusal, true),
        })
}

/// The version an `update` of a session would move its agent to: the newest release of the
/// agent's major version in `latest` (the `--agent-latest` catalogue) if newer than
/// `agent_version`; `None` when there is none, the version does not parse, or the agent's hello
/// disabled update checks. The session's `agent_update_target`, and what `update` sends.
pub fn session_update_target(
    agent_version: &str,
    update_checks: bool,
    latest: &[Version],
) -> Option<String> {
    if !update_checks {
        return None;
    }
    Version::parse(agent_version)
        .and_then(|current| update_target(current, latest))
        .map(|target| target.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_gets_the_newest_of_its_major_unless_update_checks_are_off() {
        let latest = tunnel_core::version::parse_catalogue("3.4.1,2.9.0").unwrap();
        let target = |v: &str, checks| session_update_target(v, checks, &latest);
        assert_eq!(target("3.4.0", true).as_deref(), Some("3.4.1"));
        assert_eq!(target("2.1.0", true).as_deref(), Some("2.9.0"));
        assert_eq!(target("3.4.1", true), None);
        assert_eq!(target("4.0.0", true), None);
        assert_eq!(target("3.4", true), None);
        assert_eq!(target("3.4.0", false), None);
        assert_eq!(session_update_target("3.4.0", true, &[]), None);
    }
}
