//! `POST /tunnel_sessions/{id}/restart|stop|update`: deliver a command over the agent channel
//! and answer 204 once the agent acknowledged it.
//!
//! 404 for a session that is gone or belongs to another account, and for one that ended while
//! the command was in flight or already accepted stop/restart (it is going away); 409 with the
//! refusal's own error code (restart on Windows, and the four update cases); 504 only when the
//! link is up but no acknowledgement came in time. The body is `{}` (a missing body counts as
//! `{}`; unknown fields are a 400); an `id` equal to the path's is accepted and ignored, another
//! is a 400 on field `id` (DESIGN §4).
//!
//! Who decides what: the server names the update target from its `--agent-latest` catalogue
//! (same major version only, `None` when nothing newer is known); the agent, which alone knows
//! whether it is updating, decides every update refusal and says which. Restart on Windows is
//! refused by both: here from the reported OS, and by the agent.
//!
//! The target is chosen once, when the session opens ([`session_update_target`]), and shown as
//! the session's `agent_update_target`, so what a client sees before sending `update` is the
//! target the command carries. An agent whose hello disabled update checks gets none: it would
//! refuse any target, and its own refusal (update checks disabled) takes precedence over "no
//! target", so the outcome of the command does not change.

use super::registry::CommandError;
use crate::api::Path;
use crate::api::check_body_id;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::json::JsonBody;
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{MethodRouter, post};
use tunnel_core::agent_protocol::Refusal;
use tunnel_core::errors::ErrorCode;
use tunnel_core::ids::IdKind;
use tunnel_core::paths::tunnel_session_command;
use tunnel_core::resources::tunnel_session::{AgentCommand, AgentCommandRequest, is_windows};
use tunnel_core::version::{Version, update_target};

/// The three command routes (paths relative to the API prefix), built from `tunnel_core::paths`
/// with the router's `{id}` placeholder so they cannot drift from the URIs the API hands out.
pub fn router() -> Router<AppState> {
    AgentCommand::ALL
        .into_iter()
        .fold(Router::new(), |router, command| {
            router.route(
                &tunnel_session_command("{id}", command),
                command_route(command),
            )
        })
}

/// `POST …/{command}`: the body is `{}` (or names the path's own id), then the command goes out.
fn command_route(command: AgentCommand) -> MethodRouter<AppState> {
    post(
        move |State(state): State<AppState>,
              caller: Caller,
              Path(id): Path<String>,
              JsonBody(body): JsonBody<AgentCommandRequest>| async move {
            check_body_id(&body.id, &id)?;
            deliver(&state, &caller, &id, command).await
        },
    )
}

/// Sends `command` to the session and maps the outcome to the API's answer.
pub async fn deliver(
    state: &AppState,
    caller: &Caller,
    id: &str,
    command: AgentCommand,
) -> ApiResult<StatusCode> {
    let Some(session) = state.registry.get(&caller.account_id, id) else {
        return Err(ApiError::not_found(IdKind::TunnelSession, id));
    };
    // The agent refuses this itself; checking here too keeps the answer right for any agent
    // that reports Windows, without a round trip.
    if command == AgentCommand::Restart && is_windows(&session.os) {
        let msg = refusal_message(
            Refusal::RestartUnsupported,
            &session.os,
            &session.agent_version,
        );
        return Err(ApiError::new(ErrorCode::RestartUnsupported, msg)
            .with_detail("session_id", id.to_owned()));
    }
    let target = match command {
        AgentCommand::Update => session.agent_update_target.clone(),
        _ => None,
    };
    match state
        .registry
        .command(&caller.account_id, id, command, target)
        .await
    {
        Ok(()) => Ok(StatusCode::NO_CONTENT),
        Err(CommandError::NotFound) => Err(ApiError::not_found(IdKind::TunnelSession, id)),
        // Gone, not slow: a 504 would invite a retry that can only find nothing.
        Err(CommandError::Ended) => Err(ApiError::new(
            ErrorCode::NotFound,
            format!(
                "Tunnel session `{}` ended before the agent acknowledged the {} command.",
                id.chars().take(64).collect::<String>(),
                command.as_str()
            ),
        )
        .with_detail("id", id.chars().take(64).collect::<String>())),
        Err(CommandError::Timeout) => {
            let secs = state.registry.timings().command_timeout.as_secs_f64();
            Err(ApiError::new(
                ErrorCode::AgentTimeout,
                format!(
                    "The agent did not acknowledge the {} command within {secs} s.",
                    command.as_str()
                ),
            ))
        }
        Err(CommandError::Refused(refusal)) => Err(ApiError::new(
            refusal.code(),
            refusal_message(refusal, &session.os, &session.agent_version),
        )
        .with_detail("session_id", id.to_owned())),
    }
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

/// A sentence for each refusal, with what the caller can do about it.
fn refusal_message(refusal: Refusal, os: &str, version: &str) -> String {
    match refusal {
        Refusal::RestartUnsupported => {
            format!(
                "The agent runs on `{os}`; restart is not supported on Windows. Restart it by hand."
            )
        }
        Refusal::NoUpdateAvailable => {
            let major =
                Version::parse(version).map_or_else(|| "?".to_owned(), |v| v.major.to_string());
            format!(
                "No agent version newer than {version} is available in major version {major}; \
                 moving to another major version must be done manually."
            )
        }
        Refusal::UpdateChecksDisabled => {
            "The agent's configuration disabled update checks.".to_owned()
        }
        Refusal::UpdateInProgress => {
            "The agent is currently updating; try again when it has finished.".to_owned()
        }
        Refusal::UpdatedNotRestarted => {
            "The agent has already updated and must be restarted before it can update again."
                .to_owned()
        }
    }
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
