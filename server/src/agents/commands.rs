//! `POST /tunnel_sessions/{id}/restart|stop|update`: deliver a command over the agent channel
//! and answer 204 once the agent acknowledged it.
//!
//! 404 for a session that is gone or belongs to another account; 409 with the refusal's own
//! error code (restart on Windows, and the four update cases); 504 when no acknowledgement came
//! in time. The body is `{}` (a missing body counts as `{}`; unknown fields are a 400).
//!
//! Who decides what: the server names the update target from its `--agent-latest` catalogue
//! (same major version only, `None` when nothing newer is known); the agent, which alone knows
//! its configuration and whether it is updating, decides every update refusal and says which.
//! Restart on Windows is refused by both: here from the reported OS, and by the agent.

use super::registry::CommandError;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::json::JsonBody;
use crate::state::AppState;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::post;
use tunnel_core::agent_protocol::Refusal;
use tunnel_core::errors::ErrorCode;
use tunnel_core::ids::IdKind;
use tunnel_core::resources::tunnel_session::{AgentCommand, AgentCommandRequest, is_windows};
use tunnel_core::version::{Version, update_target};

/// The three command routes (paths relative to the API prefix).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/tunnel_sessions/{id}/restart", post(restart))
        .route("/tunnel_sessions/{id}/stop", post(stop))
        .route("/tunnel_sessions/{id}/update", post(update))
}

async fn restart(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(_): JsonBody<AgentCommandRequest>,
) -> ApiResult<StatusCode> {
    deliver(&state, &caller, &id, AgentCommand::Restart).await
}

async fn stop(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(_): JsonBody<AgentCommandRequest>,
) -> ApiResult<StatusCode> {
    deliver(&state, &caller, &id, AgentCommand::Stop).await
}

async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(_): JsonBody<AgentCommandRequest>,
) -> ApiResult<StatusCode> {
    deliver(&state, &caller, &id, AgentCommand::Update).await
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
    let current = Version::parse(&session.agent_version);
    let target = match command {
        AgentCommand::Update => current.and_then(|v| update_target(v, &state.config.agent_latest)),
        _ => None,
    };
    match state
        .registry
        .command(
            &caller.account_id,
            id,
            command,
            target.map(|v| v.to_string()),
        )
        .await
    {
        Ok(()) => Ok(StatusCode::NO_CONTENT),
        Err(CommandError::NotFound) => Err(ApiError::not_found(IdKind::TunnelSession, id)),
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
