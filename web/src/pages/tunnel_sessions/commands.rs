//! The agent commands of a session's detail page: restart, stop and update, each confirmed in
//! words saying what is sent; restart held back (with its countdown) while the server says the
//! agent is updating or just updated; a command the server holds back shown as a note.

use super::UpdateStatus;
use crate::api::{Api, ApiError};
use crate::components::confirm::ConfirmDialog;
use crate::components::error_view::ErrorView;
use crate::components::keep_focus_on;
use crate::components::submit::Submit;
use crate::state::{now_ms, use_app};
use leptos::prelude::*;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use tunnel_core::ErrorCode;
use tunnel_core::limits::UPDATE_RESTART_WAIT_SECS;
use tunnel_core::paths;
use tunnel_core::resources::tunnel_session::{
    AgentCommand, AgentUpdateState, TunnelSession, is_windows,
};

/// The future of one agent command.
pub type CommandFuture = Pin<Box<dyn Future<Output = Result<(), ApiError>>>>;
type RunFn = Box<dyn Fn(AgentCommand) -> CommandFuture>;

/// Sends an agent command. A handle (`Copy`, usable in reactive closures); the real one calls the
/// API, tests pass their own.
#[derive(Debug, Clone, Copy)]
pub struct Runner(StoredValue<RunFn, LocalStorage>);

impl Runner {
    pub fn new(run: impl Fn(AgentCommand) -> CommandFuture + 'static) -> Runner {
        Runner(StoredValue::new_local(Box::new(run)))
    }

    fn run(&self, cmd: AgentCommand) -> Option<CommandFuture> {
        self.0.try_with_value(|f| f(cmd))
    }
}

pub(super) fn api_runner(api: Api, id: String) -> Runner {
    Runner::new(move |cmd| {
        let path = paths::tunnel_session_command(&id, cmd);
        Box::pin(async move { api.post_no_content(&path).await })
    })
}

/// Whole seconds (rounded up) from `now_ms` to `deadline_ms`, 0 once it has passed.
fn seconds_left(deadline_ms: f64, now_ms: f64) -> u64 {
    ((deadline_ms - now_ms) / 1000.0).ceil().max(0.0) as u64
}

/// Why restart is held back after an update, if it is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RestartHold {
    /// The agent applies its update to this version.
    Updating(String),
    /// The update finished; restart is allowed in this many seconds.
    Wait(u64),
}

/// The hold at `now_ms`, from the update state the server reported at `received_ms` (local
/// time of the answer: the server's seconds are counted down from then).
fn restart_hold(
    state: Option<&AgentUpdateState>,
    received_ms: f64,
    now_ms: f64,
) -> Option<RestartHold> {
    match state? {
        AgentUpdateState::Updating { target } => Some(RestartHold::Updating(target.clone())),
        AgentUpdateState::Updated {
            restart_available_in_secs,
            ..
        } => {
            let deadline = received_ms + (*restart_available_in_secs * 1000) as f64;
            // The ticking clock may lag an answer that just arrived: never count from before it.
            let left = seconds_left(deadline, now_ms.max(received_ms));
            (left > 0).then_some(RestartHold::Wait(left))
        }
    }
}

/// Whether an error is the server holding a restart back after an update (not a failure: the
/// rule working).
fn is_restart_wait(error: &ApiError) -> bool {
    [ErrorCode::RestartDuringUpdate, ErrorCode::RestartTooSoon]
        .iter()
        .any(|c| error.code() == Some(c.as_str()))
}

fn label(cmd: AgentCommand) -> &'static str {
    match cmd {
        AgentCommand::Restart => "Restart",
        AgentCommand::Stop => "Stop",
        AgentCommand::Update => "Update",
    }
}

/// The question of the confirmation; for update it names both versions.
fn confirm_title(cmd: AgentCommand, version: &str, target: Option<&str>) -> String {
    match (cmd, target) {
        (AgentCommand::Update, Some(target)) => {
            format!("Update the agent from {version} to {target}?")
        }
        _ => format!("{} this agent?", label(cmd)),
    }
}

/// Restart, stop and update for one session, with the agent's version and update target,
/// confirmation, caveats, errors, and the wait after an update. `update_state` is the session's
/// `agent_update_state` as last read from the server (the page's refresh keeps it current).
#[component]
pub fn SessionActions(
    session: TunnelSession,
    #[prop(into)] update_state: Signal<Option<AgentUpdateState>>,
    runner: Runner,
    on_done: Callback<AgentCommand>,
) -> impl IntoView {
    let app = use_app();
    let windows = is_windows(&session.os);
    let major = session
        .agent_version
        .split('.')
        .next()
        .unwrap_or("")
        .to_owned();
    let version = StoredValue::new(session.agent_version.clone());
    let status = UpdateStatus::of(&session);
    // Only a target the server would send can succeed; without one Update stays disabled and
    // the status sentence says why (the agent would answer 409 after a confirmation).
    let target = StoredValue::new(match &status {
        UpdateStatus::Available(target) => Some(target.clone()),
        _ => None,
    });
    let id = StoredValue::new(session.id.clone());
    let confirm = RwSignal::new(None::<AgentCommand>);
    let now = RwSignal::new(now_ms());
    let tick = set_interval_with_handle(move || now.set(now_ms()), Duration::from_millis(250));
    on_cleanup(move || {
        if let Ok(h) = tick {
            h.clear();
        }
    });
    // The server's update state and the local time it arrived; a new answer replaces both.
    let known = RwSignal::new((update_state.get_untracked(), now_ms()));
    Effect::new(move |_| {
        let state = update_state.get();
        known.set((state, now_ms()));
    });
    // A memo: the clock ticks four times a second, but what shows the hold (the button's label
    // and state, the countdown) reruns only when the whole-second value changes.
    let hold =
        Memo::new(move |_| known.with(|(state, at)| restart_hold(state.as_ref(), *at, now.get())));
    let session_id = session.id.clone();
    let command = Submit::new(
        move |cmd: &AgentCommand| {
            let cmd = *cmd;
            let sent = runner.run(cmd);
            async move {
                match sent {
                    Some(sent) => sent.await.map(|()| cmd),
                    None => Err(ApiError::network("The page was closed.")),
                }
            }
        },
        move |cmd: &AgentCommand| {
            let id = &session_id;
            let text = match cmd {
                AgentCommand::Update => {
                    // The agent told the server before the 204: show it at once rather than at
                    // the next refresh, which brings the server's own state.
                    if let Some(target) = target.get_value() {
                        known.try_set((Some(AgentUpdateState::Updating { target }), now_ms()));
                    }
                    format!(
                        "Agent of {id} is updating. Restart it {UPDATE_RESTART_WAIT_SECS} s after the update has finished to run the new code."
                    )
                }
                AgentCommand::Restart => {
                    format!("Agent of {id} restarted; it reconnects under a new session id.")
                }
                AgentCommand::Stop => format!("Agent of {id} stopped."),
            };
            app.toast(text, false);
            on_done.run(*cmd);
        },
    );
    // Which command was sent last, for the busy button's label.
    let sent = RwSignal::new(None::<AgentCommand>);
    let run = move |cmd: AgentCommand| {
        confirm.set(None);
        sent.set(Some(cmd));
        command.send(cmd);
        // The dialog gives the focus back to the command's button, which is disabled while the
        // command runs (and, after an update, until the agent restarts): the focus would drop
        // to the page. It goes back to the button once enabled (a failed command), else to what
        // the page says of the update. A restart or stop leaves for the list, which focuses its
        // heading.
        keep_focus_on(match cmd {
            AgentCommand::Restart => ".session-actions .cmd-restart:enabled",
            AgentCommand::Update => {
                ".session-actions .cmd-update:enabled, .session-actions .countdown:not(:empty)"
            }
            AgentCommand::Stop => ".session-actions .cmd-stop:enabled",
        });
    };
    // An update the agent is applying, or has applied and waits for a restart to run: another
    // would be refused (409), so Update waits for the restart too.
    let updated = Memo::new(move |_| known.with(|(state, _)| state.is_some()));
    let button = move |cmd: AgentCommand| {
        let disabled = move || {
            command.busy()
                || match cmd {
                    AgentCommand::Restart => windows || hold.get().is_some(),
                    AgentCommand::Update => target.with_value(Option::is_none) || updated.get(),
                    AgentCommand::Stop => false,
                }
        };
        let busy = move || command.busy().then(|| sent.get()).flatten();
        let text = move || match (busy(), cmd) {
            (Some(b), _) if b == cmd => format!("{}…", label(cmd)),
            (_, AgentCommand::Restart) => match hold.get() {
                Some(RestartHold::Wait(left)) => format!("Restart ({left} s)"),
                Some(RestartHold::Updating(_)) => "Restart (updating)".to_owned(),
                None => label(cmd).to_owned(),
            },
            _ => label(cmd).to_owned(),
        };
        // Only stop is destructive (the agent does not come back by itself); restart and
        // update are disruptive but recoverable, so they are not styled as danger.
        view! {
            <button type="button" class=format!("cmd-{}", cmd.as_str()) class:danger=cmd == AgentCommand::Stop
                aria-describedby=(cmd == AgentCommand::Update).then_some("update-status")
                disabled=disabled on:click=move |_| confirm.set(Some(cmd))>{text}</button>
        }
    };
    let notes = move |cmd: AgentCommand| -> Vec<String> {
        match cmd {
            AgentCommand::Restart => vec!["The agent replaces its own process and reconnects under a new session id; this page then returns to the list.".into()],
            AgentCommand::Stop => vec!["The agent exits. It will not come back until someone starts it again on its host.".into()],
            AgentCommand::Update => vec![
                format!("Update never crosses a major version: this agent stays on {major}.x. A new major version must be installed by hand."),
                format!("After a successful update, wait at least {UPDATE_RESTART_WAIT_SECS} seconds, then restart the agent so it runs the new code."),
            ],
        }
    };
    view! {
        <section class="card session-actions" aria-labelledby="actions-title">
            <h2 id="actions-title">"Agent commands"</h2>
            <p class="agent-version">"Agent version " {version.get_value()}</p>
            <p id="update-status" class="update-status">{status.sentence()}</p>
            <div class="actions">
                {button(AgentCommand::Restart)}
                {button(AgentCommand::Update)}
                {button(AgentCommand::Stop)}
            </div>
            {windows.then(|| view! { <p class="note">"Restart is not supported for agents on Windows; stop it and start it again on the host instead."</p> })}
            <p class="note">"Update moves the agent to the latest version of its own major version only; a new major version is a manual install."</p>
            <p class="countdown" role="timer" aria-live="polite" tabindex="-1">
                {move || match hold.get() {
                    Some(RestartHold::Wait(left)) => Some(format!(
                        "Agent updated. Restart is available in {left} s, so that the agent can start the new code.")),
                    Some(RestartHold::Updating(target)) => Some(format!(
                        "Agent is updating to {target}. Restart is available {UPDATE_RESTART_WAIT_SECS} s after the update has finished.")),
                    // The wait is over: the new version runs once the agent restarts.
                    None => known.with(|(state, _)| match state {
                        Some(AgentUpdateState::Updated { version, .. }) => Some(format!(
                            "Agent updated to {version}. Restart it to run the new version.")),
                        _ => None,
                    }),
                }}
            </p>
            {move || command.error().map(|e| if is_restart_wait(&e) {
                view! { <p class="note restart-wait" role="status">{e.message}</p> }.into_any()
            } else {
                view! { <ErrorView error=e title="The agent command failed" /> }.into_any()
            })}
            {move || confirm.get().map(|cmd| view! {
                <ConfirmDialog
                    title=confirm_title(cmd, &version.get_value(), target.get_value().as_deref())
                    message=format!("This sends the {} command to the agent of session {}.", cmd.as_str(), id.get_value())
                    confirm_label=label(cmd)
                    safe=matches!(cmd, AgentCommand::Restart | AgentCommand::Update)
                    notes=notes(cmd)
                    on_confirm=Callback::new(move |_| run(cmd))
                    on_cancel=Callback::new(move |_| confirm.set(None)) />
            })}
        </section>
    }
}
