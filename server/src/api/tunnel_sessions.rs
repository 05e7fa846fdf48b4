//! Tunnel sessions (docs/api/tunnel_sessions.md): list and get, read from the directory of live
//! sessions of every node (`agents::Sessions`; not stored resources, so not the generic resource
//! handlers; the list page is built the same way), and the agent commands
//! `POST /tunnel_sessions/{id}/restart|stop|update`, which the agent service delivers wherever
//! the agent is connected (`agents::sessions`, `agents::commands`) and this module answers.
//!
//! Sessions are served as the registry holds them, with the `agent_update_target` and
//! `agent_update_checks` extensions the channel set when the session opened.
//!
//! A command is answered 204 once the agent acknowledged it; 404 for a session that is gone or
//! belongs to another account, and for one that ended while the command was in flight or
//! already accepted stop/restart (it is going away); 409 with the refusal's own error code
//! (restart on Windows, and the four update cases); 409 with `Retry-After` for a restart while the
//! agent applies an update or less than the wait after it finished; 504 only when the link is up but no
//! acknowledgement came in time, or the node holding the session did not answer. The body is `{}` (a missing body counts as `{}`; unknown
//! fields are a 400); an `id` equal to the path's is accepted and ignored, another is a 400 on
//! field `id` (docs/api/README.md).
//!
//! Every command that reached the agent is recorded in the audit log as
//! `tunnel_session_<command>_requested.v0`, with who sent it and its `result` (`accepted`,
//! `refused` with the refusal's code, `timed_out`, or `ended` when the session went first); a
//! command refused before anything was sent (no such session, a restart that must wait) is a
//! rejected request and records nothing.

use super::resource::Page;
use super::{Change, Path};
use crate::agents::RestartWait;
use crate::agents::commands::Undelivered;
use crate::agents::journal;
use crate::agents::updates::ceil_secs;
use crate::auth::Caller;
use crate::error::{self, ApiError, ApiResult};
use crate::paging;
use crate::response::Json;
use crate::state::AppState;
use crate::store::Cause;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::routing::{MethodRouter, get, post};
use tunnel_core::agent_protocol::Refusal;
use tunnel_core::errors::ErrorCode;
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::tunnel_session::{
    AgentCommand, AgentCommandRequest, TunnelSession, TunnelSessionList,
};
use tunnel_core::version::Version;

/// The list and get routes, and the three command routes, built from `tunnel_core::paths` with
/// the router's `{id}` placeholder so they cannot drift from the URIs the API hands out.
pub fn router() -> Router<AppState> {
    let router = Router::new()
        .route(paths::TUNNEL_SESSIONS, get(list))
        .route(&paths::tunnel_session("{id}"), get(read));
    AgentCommand::ALL
        .into_iter()
        .fold(router, |router, command| {
            router.route(
                &paths::tunnel_session_command("{id}", command),
                command_route(command),
            )
        })
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<Page<TunnelSessionList>>> {
    let page = paging::parse(query.as_deref(), &[IdKind::TunnelSession])?;
    let (sessions, more) = state.sessions().list(&caller.account_id, &page).await?;
    let path = paths::TUNNEL_SESSIONS;
    Ok(Json(Page::new(&state, path, &page, sessions, more)))
}

async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<TunnelSession>> {
    state
        .sessions()
        .get(&caller.account_id, &id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found(IdKind::TunnelSession, &id))
}

/// `POST …/{command}`: the body is `{}` (or names the path's own id), then the command goes out.
fn command_route(command: AgentCommand) -> MethodRouter<AppState> {
    post(move |change: Change<AgentCommandRequest>| async move {
        let Change {
            state,
            caller,
            cause,
            id,
            ..
        } = change;
        let account = &caller.account_id;
        let sessions = state.sessions();
        let before = sessions.get(account, &id).await?;
        let outcome = sessions.command(account, &id, command, &cause).await;
        if let (Some(session), Some(result)) = (before, recorded_result(command, &outcome)) {
            record_command(&state, account, command, session, cause, result).await;
        }
        outcome.map_err(|why| {
            let wait = state.registry.timings().update_restart_wait;
            undelivered(&id, command, why, ceil_secs(wait))
        })?;
        ApiResult::Ok(StatusCode::NO_CONTENT)
    })
}

/// The `result` (and refusal code) a command's event records here; `None` for a command refused
/// before anything was sent, which records nothing, and for an accepted stop or restart, which
/// the node holding the session recorded with the end it caused (`agents::channel`).
fn recorded_result(
    command: AgentCommand,
    outcome: &Result<(), Undelivered>,
) -> Option<(&'static str, Option<ErrorCode>)> {
    match outcome {
        Ok(()) if command != AgentCommand::Update => None,
        Ok(()) => Some(("accepted", None)),
        Err(Undelivered::Refused {
            refusal,
            by_agent: true,
            ..
        }) => Some(("refused", Some(refusal.code()))),
        // Whether it reached the agent is unknown, as after a timeout.
        Err(Undelivered::Timeout(_) | Undelivered::Unreachable) => Some(("timed_out", None)),
        Err(Undelivered::Ended) => Some(("ended", None)),
        Err(
            Undelivered::NotFound
            | Undelivered::NotSent
            | Undelivered::MustWait(_)
            | Undelivered::Refused {
                by_agent: false, ..
            },
        ) => None,
    }
}

/// Records the command sent to `session`. The command has already reached the agent, so a
/// failure to record it is logged rather than turned into the answer.
async fn record_command(
    state: &AppState,
    account_id: &str,
    command: AgentCommand,
    session: TunnelSession,
    cause: Cause,
    (result, code): (&str, Option<ErrorCode>),
) {
    let event = journal::command_requested(&session, command, cause, result, code);
    if let Err(e) = state.store.record_event(account_id, event).await {
        tracing::error!(error = %e, session_id = %session.id, "could not record an agent command");
    }
}

/// The answer to a command the agent did not accept.
/// `wait_secs` is the server's wait after an update (`UPDATE_RESTART_WAIT_SECS` unless a test
/// shortened it), named in the answer to a restart during an update.
fn undelivered(id: &str, command: AgentCommand, why: Undelivered, wait_secs: u64) -> ApiError {
    let shown = error::quoted(id);
    match why {
        Undelivered::NotFound => ApiError::not_found(IdKind::TunnelSession, id),
        // Gone, not slow: a 504 would invite a retry that can only find nothing.
        Undelivered::Ended => ApiError::new(
            ErrorCode::NotFound,
            format!(
                "Tunnel session `{shown}` ended before the agent acknowledged the {} command.",
                command.as_str()
            ),
        )
        .with_detail("id", shown),
        Undelivered::Timeout(after) => ApiError::new(
            ErrorCode::AgentTimeout,
            format!(
                "The agent did not acknowledge the {} command within {} s.",
                command.as_str(),
                after.as_secs_f64()
            ),
        ),
        Undelivered::Unreachable => ApiError::new(
            ErrorCode::AgentTimeout,
            format!(
                "The server node holding tunnel session `{shown}` did not answer; the {} command \
                 may not have reached the agent. Try again.",
                command.as_str()
            ),
        ),
        Undelivered::NotSent => ApiError::new(
            ErrorCode::AgentTimeout,
            format!(
                "The server node holding tunnel session `{shown}` cannot be reached; the {} \
                 command was not sent. Try again.",
                command.as_str()
            ),
        ),
        Undelivered::Refused {
            refusal,
            os,
            agent_version,
            ..
        } => ApiError::new(
            refusal.code(),
            refusal_message(refusal, &os, &agent_version),
        )
        .with_detail("session_id", id.to_owned()),
        Undelivered::MustWait(wait) => {
            restart_wait_error(wait, wait_secs).with_detail("session_id", id.to_owned())
        }
    }
}

/// The 409 of a restart that must wait: its own code, the seconds left in the message, and
/// `Retry-After` with them.
fn restart_wait_error(wait: RestartWait, wait_secs: u64) -> ApiError {
    let s = |secs: u64| if secs == 1 { "" } else { "s" };
    match wait {
        RestartWait::Updating { target, secs } => ApiError::new(
            ErrorCode::RestartDuringUpdate,
            format!(
                "The agent is applying its update{}; restarting now would lose it. \
                 The update should finish in about {secs} second{}; restart is available {} \
                 seconds after it has finished.",
                if target.is_empty() {
                    String::new()
                } else {
                    format!(" to {target}")
                },
                s(secs),
                wait_secs
            ),
        )
        .with_retry_after(secs),
        RestartWait::TooSoon { version, secs } => ApiError::new(
            ErrorCode::RestartTooSoon,
            format!(
                "The agent finished updating to {version} less than {wait_secs} seconds ago; \
                 restart it in {secs} second{} so that it starts the new version.",
                s(secs)
            ),
        )
        .with_retry_after(secs),
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
        // Answered as `Undelivered::MustWait` by the agent service; worded here for completeness.
        Refusal::RestartDuringUpdate => {
            "The agent is applying an update; restart it once the update has finished.".to_owned()
        }
        Refusal::UpdatedNotRestarted => {
            "The agent has already updated and must be restarted before it can update again."
                .to_owned()
        }
    }
}
