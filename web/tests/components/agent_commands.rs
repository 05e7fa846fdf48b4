//! The agent commands of a tunnel session: confirmation, errors, and the wait after an update.

use super::dom::*;
use leptos::prelude::*;
use leptos::task::tick;
use std::cell::RefCell;
use std::rc::Rc;
use tunnel_core::resources::Ref;
use tunnel_core::resources::tunnel_session::{AgentCommand, AgentUpdateState, TunnelSession};
use tunnel_web::api::ApiError;
use tunnel_web::pages::tunnel_sessions::{Runner, SessionActions};
use tunnel_web::state::AppState;
use wasm_bindgen_test::*;
use web_sys::Element;

fn session(os: &str) -> TunnelSession {
    TunnelSession {
        id: "ts_2kQ3x9bYt5uVwXyZaBcDeFgHiJ".into(),
        uri: "http://127.0.0.1:8080/api/tunnel_sessions/ts_2kQ3x9bYt5uVwXyZaBcDeFgHiJ".into(),
        agent_version: "3.4.0".into(),
        credential: Ref {
            id: "cr_1".into(),
            uri: "u".into(),
        },
        ip: "127.0.0.1".into(),
        metadata: String::new(),
        os: os.into(),
        region: "local".into(),
        started_at: "2026-11-22T00:00:00Z".into(),
        transport: "tunnel/v2".into(),
        agent_update_target: Some("3.4.1".into()),
        agent_update_checks: true,
        agent_update_state: None,
    }
}

fn updated(secs: u64) -> Option<AgentUpdateState> {
    Some(AgentUpdateState::Updated {
        version: "3.4.1".into(),
        restart_available_in_secs: secs,
    })
}

/// A runner that records the commands and answers with `answer`.
fn recording_runner(sent: Rc<RefCell<Vec<AgentCommand>>>, answer: Result<(), ApiError>) -> Runner {
    Runner::new(move |cmd| {
        sent.borrow_mut().push(cmd);
        let answer = answer.clone();
        Box::pin(async move { answer })
    })
}

#[wasm_bindgen_test]
async fn after_an_update_restart_waits_with_a_visible_countdown() {
    let root = container();
    let sent = Rc::new(RefCell::new(Vec::new()));
    let runner = recording_runner(sent.clone(), Ok(()));
    let done = RwSignal::new(Vec::<AgentCommand>::new());
    let state = AppState::new(None);
    // The session's `agent_update_state` as the page's refresh delivers it.
    let server_state = RwSignal::new(None::<AgentUpdateState>);
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        provide_context(state);
        view! { <SessionActions session=session("linux") update_state=server_state runner=runner on_done=Callback::new(move |c| done.update(|d| d.push(c))) /> }
    });
    let root: Element = root.into();
    tick().await;
    assert!(!is_disabled(&root, ".cmd-restart"));
    assert!(text(&root, ".session-actions").contains("major version"));

    // Update asks for confirmation first, naming both versions, with the major-version caveat;
    // its confirm button is not the destructive one.
    click(&root, ".cmd-update").await;
    assert!(sent.borrow().is_empty());
    assert!(text(&root, "[role=alertdialog]").contains("Update the agent from 3.4.0 to 3.4.1?"));
    assert!(text(&root, "[role=alertdialog]").contains("stays on 3.x"));
    assert!(find(&root, "[role=alertdialog] .confirm.primary").is_some());
    assert!(find(&root, "[role=alertdialog] .confirm.danger").is_none());
    click(&root, "[role=alertdialog] .confirm").await;
    tick().await;
    assert_eq!(*sent.borrow(), [AgentCommand::Update]);
    assert_eq!(done.get_untracked(), [AgentCommand::Update]);
    assert!(find(&root, "[role=alertdialog]").is_none());

    // Accepted: the agent is applying the update, so restart is held back at once, and so is
    // a second update (the agent would refuse it).
    assert!(is_disabled(&root, ".cmd-restart"));
    assert_eq!(text(&root, ".cmd-restart"), "Restart (updating)");
    assert!(is_disabled(&root, ".cmd-update"));
    assert!(text(&root, ".countdown").contains("Agent is updating to 3.4.1"));
    // The focus, given back to the now disabled Update, goes to what the page says instead.
    sleep_ms(200).await;
    let focused = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.active_element())
        .map(|e| e.class_name())
        .unwrap_or_default();
    assert_eq!(focused, "countdown");

    // The server says the update finished: its 10 s are counted down here.
    server_state.set(updated(10));
    tick().await;
    assert!(is_disabled(&root, ".cmd-restart"));
    assert_eq!(text(&root, ".cmd-restart"), "Restart (10 s)");
    assert!(text(&root, ".countdown").contains("available in 10 s"));

    sleep_ms(1300).await;
    tick().await;
    let label = text(&root, ".cmd-restart");
    assert!(
        label == "Restart (9 s)" || label == "Restart (8 s)",
        "{label}"
    );
    assert!(is_disabled(&root, ".cmd-restart"));
    // Each refresh brings the server's own count, which replaces the local one.
    server_state.set(updated(3));
    tick().await;
    assert_eq!(text(&root, ".cmd-restart"), "Restart (3 s)");

    // When the wait is over, restart is enabled again, and the page says it is what runs the
    // new version; update stays disabled until the agent restarts.
    server_state.set(updated(0));
    sleep_ms(300).await;
    tick().await;
    assert!(!is_disabled(&root, ".cmd-restart"));
    assert_eq!(text(&root, ".cmd-restart"), "Restart");
    assert_eq!(
        text(&root, ".countdown"),
        "Agent updated to 3.4.1. Restart it to run the new version."
    );
    assert!(is_disabled(&root, ".cmd-update"));
}

#[wasm_bindgen_test]
async fn a_page_opened_during_the_wait_shows_it_and_a_held_back_restart_is_a_note() {
    let root = container();
    let sent = Rc::new(RefCell::new(Vec::new()));
    let body = r#"{"error_code":"ERR_TUNNEL_147","status_code":409,"msg":"The agent finished updating to 3.4.1 less than 10 seconds ago; restart it in 6 seconds so that it starts the new version.","details":{"operation_id":"op_78","retry_after_secs":6}}"#;
    let runner = recording_runner(sent.clone(), Err(ApiError::from_response(409, body, None)));
    // A reload (or another tab) in the middle of the wait: the server's state is all there is.
    let server_state = RwSignal::new(updated(7));
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        view! { <SessionActions session=session("linux") update_state=server_state runner=runner on_done=Callback::new(|_| ()) /> }
    });
    let root: Element = root.into();
    tick().await;
    assert!(is_disabled(&root, ".cmd-restart"));
    assert_eq!(text(&root, ".cmd-restart"), "Restart (7 s)");
    assert!(text(&root, ".countdown").contains("available in 7 s"));

    // A page whose state is stale sends the restart anyway; the server's 409 is the rule
    // working, shown as a note with its seconds, not as a failure.
    server_state.set(None);
    tick().await;
    assert!(!is_disabled(&root, ".cmd-restart"));
    click(&root, ".cmd-restart").await;
    click(&root, "[role=alertdialog] .confirm").await;
    tick().await;
    assert_eq!(*sent.borrow(), [AgentCommand::Restart]);
    assert!(text(&root, ".restart-wait").contains("restart it in 6 seconds"));
    assert!(find(&root, ".error-box").is_none());
}

#[wasm_bindgen_test]
async fn windows_agents_cannot_restart_and_command_errors_are_shown() {
    let root = container();
    let sent = Rc::new(RefCell::new(Vec::new()));
    let body = r#"{"error_code":"ERR_TUNNEL_141","status_code":409,"msg":"No newer agent version of the same major version is available.","details":{"operation_id":"op_77"}}"#;
    let runner = recording_runner(sent.clone(), Err(ApiError::from_response(409, body, None)));
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        view! { <SessionActions session=session("windows") update_state=RwSignal::new(None) runner=runner on_done=Callback::new(|_| ()) /> }
    });
    let root: Element = root.into();
    tick().await;
    assert!(is_disabled(&root, ".cmd-restart"));
    assert!(text(&root, ".session-actions").contains("not supported for agents on Windows"));

    click(&root, ".cmd-update").await;
    // Esc cancels the confirmation without sending anything.
    press_escape().await;
    assert!(find(&root, "[role=alertdialog]").is_none());
    assert!(sent.borrow().is_empty());

    click(&root, ".cmd-update").await;
    click(&root, "[role=alertdialog] .confirm").await;
    tick().await;
    assert_eq!(*sent.borrow(), [AgentCommand::Update]);
    assert!(text(&root, ".error-box").contains("No newer agent version"));
    assert_eq!(text(&root, ".error-code"), "ERR_TUNNEL_141");
    assert_eq!(text(&root, ".operation-id"), "op_77");
    // A failed update starts no countdown.
    assert_eq!(text(&root, ".countdown"), "");
}

#[wasm_bindgen_test]
async fn update_is_offered_only_with_a_target_and_says_why_not() {
    let sent = Rc::new(RefCell::new(Vec::new()));
    let mount = |session: TunnelSession| {
        let root = container();
        let runner = recording_runner(sent.clone(), Ok(()));
        let state = AppState::new(None);
        let handle = leptos::mount::mount_to(root.clone(), move || {
            provide_context(state);
            view! { <SessionActions session=session.clone() update_state=RwSignal::new(None) runner=runner on_done=Callback::new(|_| ()) /> }
        });
        (Element::from(root), handle)
    };

    // A target: Update is enabled and the target is named.
    let (root, _with_target) = mount(session("linux"));
    tick().await;
    assert!(text(&root, ".agent-version").contains("Agent version 3.4.0"));
    assert_eq!(text(&root, ".update-status"), "Update available: 3.4.1");
    assert!(!is_disabled(&root, ".cmd-update"));
    // Restart and update are not styled as destructive; stop is.
    assert!(!get(&root, ".cmd-restart").class_list().contains("danger"));
    assert!(!get(&root, ".cmd-update").class_list().contains("danger"));
    assert!(get(&root, ".cmd-stop").class_list().contains("danger"));

    // No target: disabled, and the reason is on the page as text, not only in a tooltip.
    let mut latest = session("linux");
    latest.agent_version = "3.4.1".into();
    latest.agent_update_target = None;
    let (root, _up_to_date) = mount(latest);
    tick().await;
    assert!(text(&root, ".agent-version").contains("Agent version 3.4.1"));
    assert!(
        text(&root, ".update-status").contains("Up to date: no newer 3.* version is known"),
        "{}",
        text(&root, ".update-status")
    );
    assert!(is_disabled(&root, ".cmd-update"));
    assert_eq!(
        get(&root, ".cmd-update")
            .get_attribute("aria-describedby")
            .as_deref(),
        Some("update-status")
    );
    click(&root, ".cmd-update").await;
    assert!(find(&root, "[role=alertdialog]").is_none());
    // Restart is still offered, with a confirm button that is not red.
    click(&root, ".cmd-restart").await;
    assert!(find(&root, "[role=alertdialog] .confirm.primary").is_some());
    assert!(find(&root, "[role=alertdialog] .confirm.danger").is_none());
    assert!(text(&root, "[role=alertdialog]").contains("Restart this agent?"));
    press_escape().await;

    // Update checks disabled on the agent: disabled too, and it says so.
    let mut disabled = session("linux");
    disabled.agent_update_target = None;
    disabled.agent_update_checks = false;
    let (root, _checks_off) = mount(disabled);
    tick().await;
    assert!(text(&root, ".update-status").contains("Update checks are disabled on this agent"));
    assert!(is_disabled(&root, ".cmd-update"));
    assert!(sent.borrow().is_empty());
}
