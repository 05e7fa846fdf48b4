//! The agent commands of a tunnel session: confirmation, errors, and the wait after an update.

use super::dom::*;
use leptos::prelude::*;
use leptos::task::tick;
use std::cell::RefCell;
use std::rc::Rc;
use tunnel_core::resources::Ref;
use tunnel_core::resources::tunnel_session::{AgentCommand, TunnelSession};
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
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        provide_context(state);
        view! { <SessionActions session=session("linux") runner=runner on_done=Callback::new(move |c| done.update(|d| d.push(c))) /> }
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

    // When the wait is over, restart is enabled again and the countdown disappears.
    state.restart_after.update(|m| {
        m.insert(session("linux").id, js_sys::Date::now() - 1.0);
    });
    sleep_ms(300).await;
    tick().await;
    assert!(!is_disabled(&root, ".cmd-restart"));
    assert_eq!(text(&root, ".cmd-restart"), "Restart");
    assert_eq!(text(&root, ".countdown"), "");
}

#[wasm_bindgen_test]
async fn windows_agents_cannot_restart_and_command_errors_are_shown() {
    let root = container();
    let sent = Rc::new(RefCell::new(Vec::new()));
    let body = r#"{"error_code":"ERR_TUNNEL_141","status_code":409,"msg":"No newer agent version of the same major version is available.","details":{"operation_id":"op_77"}}"#;
    let runner = recording_runner(sent.clone(), Err(ApiError::from_response(409, body, None)));
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        view! { <SessionActions session=session("windows") runner=runner on_done=Callback::new(|_| ()) /> }
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
            view! { <SessionActions session=session.clone() runner=runner on_done=Callback::new(|_| ()) /> }
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
        text(&root, ".update-status").contains("Up to date (latest 3.* version)"),
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
