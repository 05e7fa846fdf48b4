//! Tunnel sessions (`docs/api/tunnel_sessions.md`): the online agents, refreshed every few
//! seconds while the page is visible; detail with restart / stop / update, each confirmed.
//! While the agent applies an update, and for `UPDATE_RESTART_WAIT_SECS` after it finished,
//! restart stays disabled with a visible countdown (the restart-after-update rule of
//! `docs/api/tunnel_sessions.md`). The rule is the server's: the countdown comes from the
//! session's `agent_update_state` (seconds left when the server answered, counted down here from
//! the moment the answer arrived, so no clock has to agree with the server's), so a reload,
//! another tab or another admin sees the same wait. A restart the server holds back anyway
//! (409 `ERR_TUNNEL_146`/`147`, e.g. from a page that had not refreshed yet) shows its message
//! as a note, not as a failure.
//! Update is offered only when the session names an update target (the server's
//! `agent_update_target` extension); otherwise the page says why (up to date, or update checks
//! disabled on the agent) instead of letting the agent refuse after a confirmation.

use super::{crumbs, use_detail, when};
use crate::api::use_api;
use crate::components::activity::RecentActivity;
use crate::components::bulk::BulkAction;
use crate::components::copy::CopyValue;
use crate::components::keep_focus_on;
use crate::components::list::{ListPage, RowName};
use crate::components::loading::{Load, render_load};
use crate::components::names::RefName;
use crate::components::time::RelativeTime;
use crate::routes;
use leptos::prelude::*;
use leptos_router::components::A;
use std::time::Duration;
use tunnel_core::paths;
use tunnel_core::resources::tunnel_session::{
    AgentCommand, TunnelSession, TunnelSessionList as Page,
};
use tunnel_core::version::Version;

mod commands;

use commands::api_runner;
pub use commands::{CommandFuture, Runner, SessionActions};

/// How often lists and details refresh while the tab is visible.
const REFRESH: Duration = Duration::from_secs(3);

fn page_visible() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .is_none_or(|d| d.visibility_state() == web_sys::VisibilityState::Visible)
}

/// Bumps `reload` every [`REFRESH`] while the page is visible and `wanted` says so, and at once
/// when it becomes visible again (a hidden tab makes no requests; an ended session's page has
/// nothing left to refresh).
fn refresh_while_visible(reload: RwSignal<u32>, wanted: impl Fn() -> bool + Clone + 'static) {
    let again = wanted.clone();
    let interval = set_interval_with_handle(
        move || {
            if page_visible() && wanted() {
                reload.try_update(|r| *r += 1);
            }
        },
        REFRESH,
    );
    let visibility = window_event_listener_untyped("visibilitychange", move |_| {
        if page_visible() && again() {
            reload.try_update(|r| *r += 1);
        }
    });
    on_cleanup(move || {
        if let Ok(h) = interval {
            h.clear();
        }
        visibility.remove();
    });
}

fn restart_path(id: &str) -> String {
    paths::tunnel_session_command(id, AgentCommand::Restart)
}

fn stop_path(id: &str) -> String {
    paths::tunnel_session_command(id, AgentCommand::Stop)
}

/// What the list does to selected rows.
const BULK: &[BulkAction] = &[
    BulkAction::post(
        "Restart",
        "restarted",
        restart_path,
        "will be restarted: each agent reconnects at once with a new session.",
    ),
    BulkAction::post(
        "Stop",
        "stopped",
        stop_path,
        "will be stopped: each agent exits and does not come back until it is started again.",
    )
    .dangerous(),
];

#[component]
pub fn TunnelSessionList() -> impl IntoView {
    let reload = RwSignal::new(0);
    refresh_while_visible(reload, || true);
    let columns = &[
        "Tunnel session",
        "Credential",
        "Agent",
        "IP",
        "Region",
        "Started",
    ];
    ListPage::new(paths::TUNNEL_SESSIONS, routes::tunnel_session)
        .search("Search sessions")
        .noun("tunnel session", "tunnel sessions")
        .bulk(BULK)
        .export("tunnel-sessions")
        .title("Tunnel sessions")
        .hint("Online agents; refreshed every 3 s while this page is visible.")
        .columns(columns)
        .empty("No tunnel sessions online. Start an agent with a credential's authtoken.")
        .untitled("Agent")
        .reload(reload)
        .rows::<Page, _, _>(|s: TunnelSession| {
            let title = format!("{} agent {}", s.os, s.agent_version);
            let credential = s.credential.id;
            let cells = view! {
                <td><RefName path=paths::credential(&credential) id=credential.clone() href=routes::credential(&credential) /></td>
                <td>{s.agent_version}</td>
                <td><code>{s.ip}</code></td>
                <td>{s.region}</td>
                <td><RelativeTime ts=s.started_at.clone() /></td>
            };
            (RowName::new(s.id, title), cells)
        })
}

#[component]
pub fn TunnelSessionDetail() -> impl IntoView {
    let reload = RwSignal::new(0);
    let (id, session) = use_detail::<TunnelSession>(paths::tunnel_session, reload);
    // A session that is not found has ended for good (a reconnecting agent gets a new id):
    // asking again every few seconds would only be answered 404 again.
    let ended =
        Memo::new(move |_| session.with(|s| matches!(s, Load::Failed(e) if e.status == 404)));
    refresh_while_visible(reload, move || !ended.get_untracked());
    // The session ending under the user's eyes takes its commands (and an open confirmation)
    // away: the focus goes to the sentence saying so rather than to nothing.
    Effect::new(move |_| {
        if ended.get() {
            keep_focus_on(".session-ended");
        }
    });
    let app = crate::state::use_app();
    let api = use_api();
    let activity_reload = RwSignal::new(0);
    let leave = crate::components::use_leave_when_done();
    let on_done = Callback::new(move |cmd: AgentCommand| {
        if matches!(cmd, AgentCommand::Stop | AgentCommand::Restart) {
            // The session is gone: back to the list, unless the user moved on meanwhile.
            leave(&app.list_url(routes::TUNNEL_SESSIONS));
        } else {
            // The command's event is recorded before the answer: show it now.
            activity_reload.try_update(|r| *r += 1);
        }
    });
    // Keep the actions mounted across refreshes (their countdown and dialogs live there); only
    // the session's fields are re-rendered. The update state changes with every refresh while
    // a wait runs, so it reaches the actions as a signal of its own instead of remounting them.
    let current = Memo::new(move |_| {
        session.with(|s| {
            s.ready().cloned().map(|mut s| {
                s.agent_update_state = None;
                s
            })
        })
    });
    let update_state =
        Memo::new(move |_| session.with(|s| s.ready().and_then(|s| s.agent_update_state.clone())));
    let online = Memo::new(move |_| session.with(|s| s.ready().is_some()));
    view! {
        {crumbs(routes::TUNNEL_SESSIONS, "Sessions", id)}
        {move || match session.get() {
            Load::Failed(e) if e.status == 404 => view! {
                <h1>"Not online"</h1>
                <p class="empty session-ended" role="status" tabindex="-1">"No session with this id is online: the agent stopped, disconnected, or restarted under a new session id."</p>
                // The way back, as on every page whose resource is not there.
                <p><A href=routes::TUNNEL_SESSIONS exact=true attr:class="button">"Back to Sessions"</A></p>
            }.into_any(),
            other => render_load(other, reload, |s: TunnelSession| view! { <SessionProps session=s /> }).into_any(),
        }}
        {move || current.get().map(|s| {
            let runner = api_runner(api, s.id.clone());
            view! { <SessionActions session=s update_state=update_state runner=runner on_done=on_done /> }
        })}
        // Not on the 3-second refresh: the activity is fetched once per session shown, and
        // again after a command that leaves the session in place.
        {move || online.get().then(|| view! { <RecentActivity object_id=id.get() reload=activity_reload /> })}
    }
}

#[component]
fn SessionProps(session: TunnelSession) -> impl IntoView {
    let update_target = update_target_text(&session);
    view! {
        <h1 class="mono">{session.id.clone()}</h1>
        <dl class="props card">
            <dt>"ID"</dt><dd><CopyValue value=session.id.clone() what="ID" /></dd>
            <dt>"URI"</dt><dd><CopyValue value=session.uri what="URI" /></dd>
            <dt>"Agent version"</dt><dd>{session.agent_version}</dd>
            <dt>"Update target"</dt><dd class="update-target">{update_target}</dd>
            <dt>"OS"</dt><dd>{session.os}</dd>
            <dt>"IP"</dt><dd class="mono">{session.ip}</dd>
            <dt>"Region"</dt><dd>{session.region}</dd>
            <dt>"Transport"</dt><dd>{session.transport}</dd>
            <dt>"Started"</dt><dd>{when(&session.started_at)}</dd>
            <dt>"Credential"</dt><dd><RefName path=paths::credential(&session.credential.id) id=session.credential.id.clone() href=routes::credential(&session.credential.id) /></dd>
            <dt>"Metadata"</dt><dd><pre class="mono">{session.metadata}</pre></dd>
        </dl>
    }
}

/// Where the agent stands on updates, as the server sees it (`agent_update_checks`, then
/// `agent_update_target`): what `update` would do, before anyone asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum UpdateStatus {
    /// The agent's hello disabled update checks: it refuses every update.
    ChecksDisabled,
    /// The server would move the agent to this version.
    Available(String),
    /// Nothing newer in the agent's major version (`None`: the version does not parse, so no
    /// major version can be named).
    UpToDate { major: Option<u32> },
}

impl UpdateStatus {
    fn of(session: &TunnelSession) -> UpdateStatus {
        if !session.agent_update_checks {
            return UpdateStatus::ChecksDisabled;
        }
        match &session.agent_update_target {
            Some(target) => UpdateStatus::Available(target.clone()),
            None => UpdateStatus::UpToDate {
                major: Version::parse(&session.agent_version).map(|v| v.major),
            },
        }
    }

    /// The sentence next to the commands; when no update is possible it is also the reason
    /// the Update button is disabled.
    fn sentence(&self) -> String {
        match self {
            UpdateStatus::ChecksDisabled => {
                "Update checks are disabled on this agent, so it cannot be updated from here. Start it without --no-update-check to allow updates.".to_owned()
            }
            UpdateStatus::Available(target) => format!("Update available: {target}"),
            UpdateStatus::UpToDate { major: Some(major) } => {
                // Said as known: the server may list no version of this major at all.
                format!("Up to date: no newer {major}.* version is known, so there is nothing to update to.")
            }
            UpdateStatus::UpToDate { major: None } => {
                "No newer version is known for this agent version: there is nothing to update to."
                    .to_owned()
            }
        }
    }
}

/// The value of the "Update target" property.
fn update_target_text(session: &TunnelSession) -> String {
    match UpdateStatus::of(session) {
        UpdateStatus::Available(target) => target,
        UpdateStatus::UpToDate { .. } => "None (up to date)".to_owned(),
        UpdateStatus::ChecksDisabled => {
            "None (update checks are disabled on this agent)".to_owned()
        }
    }
}
