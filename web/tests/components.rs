//! Component tests in headless Chromium: each mounts a real component, drives it like a user
//! (typing, clicking, Esc) and checks what the DOM shows.
#![cfg(target_arch = "wasm32")]

use leptos::prelude::*;
use leptos::task::tick;
use std::cell::RefCell;
use std::rc::Rc;
use tunnel_core::acl::AclRule;
use tunnel_core::resources::Ref;
use tunnel_core::resources::ssh_ca::SshCertificateAuthorityCreate;
use tunnel_core::resources::tunnel_session::{AgentCommand, TunnelSession};
use tunnel_web::api::ApiError;
use tunnel_web::components::acl_editor::{AclEditor, AclTester};
use tunnel_web::components::error_view::ErrorView;
use tunnel_web::components::text::sentence;
use tunnel_web::components::token_dialog::TokenDialog;
use tunnel_web::pages::tunnel_sessions::{Runner, SessionActions};
use tunnel_web::pages::signin::SignIn;
use tunnel_web::pages::ssh_cas::SshCaForm;
use tunnel_web::session::{self, Auth, STORAGE_KEY};
use tunnel_web::state::AppState;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlElement, HtmlInputElement, HtmlSelectElement};

wasm_bindgen_test_configure!(run_in_browser);

fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

/// A fresh container in `<body>` to mount into.
fn container() -> HtmlElement {
    let div: HtmlElement = document().create_element("div").unwrap().unchecked_into();
    document().body().unwrap().append_child(&div).unwrap();
    div
}

fn find(root: &Element, selector: &str) -> Option<Element> {
    root.query_selector(selector).unwrap()
}

fn get(root: &Element, selector: &str) -> Element {
    find(root, selector).unwrap_or_else(|| panic!("no element matches {selector}"))
}

fn text(root: &Element, selector: &str) -> String {
    get(root, selector).text_content().unwrap_or_default()
}

fn count(root: &Element, selector: &str) -> u32 {
    root.query_selector_all(selector).unwrap().length()
}

fn bubbling(kind: &str) -> web_sys::Event {
    let init = web_sys::EventInit::new();
    init.set_bubbles(true);
    web_sys::Event::new_with_event_init_dict(kind, &init).unwrap()
}

async fn type_into(root: &Element, selector: &str, value: &str) {
    let input: HtmlInputElement = get(root, selector).unchecked_into();
    input.set_value(value);
    input.dispatch_event(&bubbling("input")).unwrap();
    tick().await;
}

async fn choose(root: &Element, selector: &str, value: &str) {
    let select: HtmlSelectElement = get(root, selector).unchecked_into();
    select.set_value(value);
    select.dispatch_event(&bubbling("change")).unwrap();
    tick().await;
}

async fn click(root: &Element, selector: &str) {
    get(root, selector).unchecked_into::<HtmlElement>().click();
    tick().await;
}

fn is_disabled(root: &Element, selector: &str) -> bool {
    get(root, selector).has_attribute("disabled")
}

async fn press_escape() {
    let init = web_sys::KeyboardEventInit::new();
    init.set_key("Escape");
    init.set_bubbles(true);
    let ev = web_sys::KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
    // Where a real key press goes: the focused element (inside an open dialog), bubbling up.
    match document().active_element() {
        Some(el) => el.dispatch_event(&ev).unwrap(),
        None => web_sys::window().unwrap().dispatch_event(&ev).unwrap(),
    };
    tick().await;
}

async fn sleep_ms(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

// ---------------------------------------------------------------- ACL rule editor and tester

#[wasm_bindgen_test]
async fn acl_editor_checks_each_rule_as_it_is_typed() {
    let root = container();
    let rules = RwSignal::new(Vec::<String>::new());
    let server_error = RwSignal::new(None::<ApiError>);
    let _handle = leptos::mount::mount_to(
        root.clone(),
        move || view! { <AclEditor rules=rules server_error=server_error /> },
    );
    let root: Element = root.into();
    tick().await;
    assert_eq!(count(&root, ".acl-row"), 0);

    click(&root, ".add-rule").await;
    assert_eq!(count(&root, ".acl-row"), 1);
    type_into(&root, "#acl-rule-0", "bind:*.example.com").await;
    assert_eq!(rules.get_untracked(), vec!["bind:*.example.com".to_owned()]);
    assert!(text(&root, ".acl-row .rule-status").contains("sub-domains of example.com"));
    assert_eq!(
        get(&root, "#acl-rule-0")
            .get_attribute("aria-invalid")
            .as_deref(),
        Some("false")
    );

    // An invalid rule shows tunnel-core's message (the one the server sends), as a sentence
    // with the quoted rule as code.
    type_into(&root, "#acl-rule-0", "bind:exa mple.com").await;
    let expected = AclRule::parse("bind:exa mple.com").unwrap_err();
    assert_eq!(
        text(&root, ".acl-row .rule-status"),
        sentence(&expected).replace('`', "")
    );
    assert_eq!(
        text(&root, ".acl-row .rule-status code"),
        "bind:exa mple.com"
    );
    assert_eq!(
        get(&root, "#acl-rule-0")
            .get_attribute("aria-invalid")
            .as_deref(),
        Some("true")
    );

    // A second rule equal to the first is flagged on the second row only.
    type_into(&root, "#acl-rule-0", "bind:api.example.com:443").await;
    click(&root, ".add-rule").await;
    type_into(&root, "#acl-rule-1", "bind:api.example.com:443").await;
    let statuses = root.query_selector_all(".rule-status").unwrap();
    assert!(
        statuses
            .get(0)
            .unwrap()
            .text_content()
            .unwrap()
            .contains("permits the address")
    );
    assert!(
        statuses
            .get(1)
            .unwrap()
            .text_content()
            .unwrap()
            .contains("listed twice")
    );

    // Removing the first row leaves the second, now valid again.
    click(&root, ".acl-row .remove").await;
    assert_eq!(count(&root, ".acl-row"), 1);
    assert_eq!(
        rules.get_untracked(),
        vec!["bind:api.example.com:443".to_owned()]
    );
    assert!(!text(&root, ".rule-status").contains("twice"));

    // The server's message for `acl[0]` is shown on that rule.
    let body = r#"{"error_code":"ERR_TUNNEL_114","status_code":400,"msg":"rule refused by the server",
        "details":{"operation_id":"op_1","field":"acl[0]","errors":[{"field":"acl[0]","message":"rule refused by the server"}]}}"#;
    server_error.set(Some(ApiError::from_response(400, body, None)));
    tick().await;
    assert_eq!(text(&root, ".rule-status"), "Rule refused by the server.");
}

#[wasm_bindgen_test]
async fn acl_tester_says_which_rule_allows_a_bind() {
    let root = container();
    let rules = RwSignal::new(vec![
        "bind:*.example.com".to_owned(),
        "bind:env=*".to_owned(),
    ]);
    let _handle =
        leptos::mount::mount_to(root.clone(), move || view! { <AclTester rules=rules /> });
    let root: Element = root.into();
    tick().await;

    type_into(&root, "#acl-test-input", "app.example.com").await;
    let verdict = text(&root, ".acl-verdict");
    assert!(
        verdict.starts_with("Allowed") && verdict.contains("bind:*.example.com"),
        "{verdict}"
    );
    assert!(get(&root, ".acl-verdict").class_list().contains("allowed"));

    type_into(&root, "#acl-test-input", "env=prod").await;
    assert!(text(&root, ".acl-verdict").contains("bind:env=*"));

    type_into(&root, "#acl-test-input", "example.org").await;
    assert!(text(&root, ".acl-verdict").starts_with("Denied"));
    assert!(get(&root, ".acl-verdict").class_list().contains("denied"));

    type_into(&root, "#acl-test-input", "app.example.com:443").await;
    assert!(
        text(&root, ".acl-verdict").starts_with("Denied"),
        "a domain rule never permits an address"
    );

    rules.set(vec![]);
    tick().await;
    assert!(text(&root, ".acl-verdict").contains("no ACL"));
}

// ---------------------------------------------------------------- token dialog

#[wasm_bindgen_test]
async fn token_dialog_shows_the_token_once_and_closes_with_escape_or_the_button() {
    let root = container();
    let closed = RwSignal::new(0);
    let token = "2Tq1kV8mZyq3bX9cWcPvS0aLh7e_5xYhG2pN8rQwE4tU6iO1sDfZ";
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        view! { <TokenDialog token=token on_close=Callback::new(move |_| closed.update(|c| *c += 1)) /> }
    });
    let root: Element = root.into();
    tick().await;

    let input: web_sys::HtmlTextAreaElement = get(&root, "#token-value").unchecked_into();
    assert_eq!(input.value(), token);
    assert!(input.read_only());
    assert!(text(&root, ".warning").contains("you will not see it again"));
    assert_eq!(
        get(&root, "[role=dialog]")
            .get_attribute("aria-modal")
            .as_deref(),
        Some("true")
    );
    assert!(find(&root, "button.copy").is_some());
    // The close button has focus, so a stray Enter does not leave the token unseen elsewhere.
    assert_eq!(
        document().active_element().map(|e| e.class_name()),
        Some("primary done".into())
    );

    press_escape().await;
    assert_eq!(closed.get_untracked(), 1);
    click(&root, "button.done").await;
    assert_eq!(closed.get_untracked(), 2);
}

// ---------------------------------------------------------------- SSH key-type form

#[wasm_bindgen_test]
async fn ssh_form_offers_only_valid_curve_or_size_choices() {
    let root = container();
    let submitted = RwSignal::new(None::<SshCertificateAuthorityCreate>);
    let busy = RwSignal::new(false);
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        view! {
            <leptos_router::components::Router>
                <SshCaForm on_submit=Callback::new(move |r| submitted.set(Some(r))) busy=busy server_error=Signal::stored(None) />
            </leptos_router::components::Router>
        }
    });
    let root: Element = root.into();
    tick().await;

    // Key type comes first; Ed25519 has neither curve nor size.
    let first_select = get(&root, "select");
    assert_eq!(first_select.id(), "field-private_key_type");
    assert!(find(&root, "#field-elliptic_curve").is_none());
    assert!(find(&root, "#field-key_size").is_none());

    choose(&root, "#field-private_key_type", "ecdsa").await;
    assert!(find(&root, "#field-key_size").is_none());
    let curves: Vec<String> = (0..count(&root, "#field-elliptic_curve option"))
        .map(|i| {
            root.query_selector_all("#field-elliptic_curve option")
                .unwrap()
                .get(i)
                .unwrap()
                .unchecked_into::<web_sys::HtmlOptionElement>()
                .value()
        })
        .collect();
    assert_eq!(curves, ["p256", "p384", "p521"]);
    choose(&root, "#field-elliptic_curve", "p384").await;
    click(&root, "button[type=submit]").await;
    let req = submitted.get_untracked().expect("submitted");
    assert_eq!(req.private_key_type.as_deref(), Some("ecdsa"));
    assert_eq!(req.elliptic_curve.as_deref(), Some("p384"));
    assert_eq!(req.key_size, None);

    choose(&root, "#field-private_key_type", "rsa").await;
    assert!(find(&root, "#field-elliptic_curve").is_none());
    let sizes: Vec<String> = (0..count(&root, "#field-key_size option"))
        .map(|i| {
            root.query_selector_all("#field-key_size option")
                .unwrap()
                .get(i)
                .unwrap()
                .unchecked_into::<web_sys::HtmlOptionElement>()
                .value()
        })
        .collect();
    assert_eq!(sizes, ["2048", "4096"]);
    click(&root, "button[type=submit]").await;
    let req = submitted.get_untracked().unwrap();
    assert_eq!(
        (
            req.private_key_type.as_deref(),
            req.elliptic_curve.as_deref(),
            req.key_size
        ),
        (Some("rsa"), None, Some(4096))
    );

    // While an RSA 4096 key is generated the form says so and cannot be sent twice.
    busy.set(true);
    tick().await;
    assert!(text(&root, ".progress").contains("4096-bit RSA key"));
    assert!(find(&root, ".progress progress").is_some());
    assert!(is_disabled(&root, "button[type=submit]"));

    // Live validation: a too-long description blocks the submit with core's message.
    busy.set(false);
    tick().await;
    type_into(&root, "#field-description", &"x".repeat(256)).await;
    assert!(text(&root, ".field.invalid .error").contains("Description must be at most 255 bytes"));
    assert!(is_disabled(&root, "button[type=submit]"));
}

// ---------------------------------------------------------------- update countdown

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

// ---------------------------------------------------------------- API error display

#[wasm_bindgen_test]
async fn api_error_body_is_shown_with_message_code_and_operation_id_as_text() {
    let body = r#"{"error_code":"ERR_TUNNEL_114","status_code":400,"msg":"<script>alert(1)</script> is not a rule",
        "details":{"operation_id":"op_2kQ3x9","field":"acl[0]","errors":[
            {"field":"acl[0]","message":"first problem"},{"field":"description","message":"second problem"}]}}"#;
    let error = ApiError::from_response(400, body, Some("op_from_header".into()));
    assert_eq!(
        error.field_message("description").as_deref(),
        Some("second problem")
    );
    assert_eq!(
        error.operation_id(),
        Some("op_2kQ3x9"),
        "the body's id wins over the header"
    );

    let root = container();
    let shown = error.clone();
    let _handle = leptos::mount::mount_to(
        root.clone(),
        move || view! { <ErrorView error=shown.clone() /> },
    );
    let root: Element = root.into();
    tick().await;
    assert_eq!(
        text(&root, ".error-msg"),
        "<script>alert(1)</script> is not a rule."
    );
    assert!(
        find(&root, ".error-box script").is_none(),
        "user text must never become markup"
    );
    assert_eq!(text(&root, ".error-code"), "ERR_TUNNEL_114");
    assert_eq!(text(&root, ".error-status"), "400");
    assert_eq!(text(&root, ".operation-id"), "op_2kQ3x9");
    assert_eq!(count(&root, ".error-fields li"), 2);

    // The Operation-Id header fills in when the body has none; a body that is not an error body
    // still produces a readable message.
    let no_op = ApiError::from_response(
        404,
        r#"{"error_code":"ERR_TUNNEL_120","status_code":404,"msg":"gone"}"#,
        Some("op_h".into()),
    );
    assert_eq!(no_op.operation_id(), Some("op_h"));
    let raw = ApiError::from_response(502, "Bad Gateway", Some("op_x".into()));
    assert!(raw.body.is_none() && raw.message.contains("502") && raw.message.contains("op_x"));
}

// ---------------------------------------------------------------- sign-in storage rules

fn stored(storage: web_sys::Storage) -> Option<String> {
    storage.get_item(STORAGE_KEY).unwrap()
}

fn local() -> web_sys::Storage {
    web_sys::window().unwrap().local_storage().unwrap().unwrap()
}

fn tab() -> web_sys::Storage {
    web_sys::window()
        .unwrap()
        .session_storage()
        .unwrap()
        .unwrap()
}

#[wasm_bindgen_test]
async fn sign_in_checks_the_base_url_and_the_key_before_entering() {
    session::clear();
    let root = container();
    let state = AppState::new(None);
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        provide_context(state);
        view! { <SignIn /> }
    });
    let root: Element = root.into();
    tick().await;
    let key = "2Tq1kV8mZyq3bX9cWcPvS0aLh7e_secretsecretsecret12345";

    // An empty key is refused with a message, and focus goes to the key field.
    click(&root, "button[type=submit]").await;
    assert_eq!(text(&root, "#signin-key-error"), "Enter an API key.");
    assert_eq!(
        document().active_element().map(|e| e.id()),
        Some("signin-key".into())
    );
    assert!(state.auth.get_untracked().is_none());

    // A base URL that is not http(s) or a path is refused before any request.
    type_into(&root, "#signin-key", key).await;
    type_into(&root, "#signin-base", "javascript:alert(1)").await;
    click(&root, "button[type=submit]").await;
    wait_until("the base URL error", || {
        !text(&root, "#signin-base-error").is_empty()
    })
    .await;
    assert!(text(&root, "#signin-base-error").contains("http://"));
    assert_eq!(
        document().active_element().map(|e| e.id()),
        Some("signin-base".into())
    );
    assert!(state.auth.get_untracked().is_none());

    // Nothing listens there: "cannot reach", on the base URL field, and still signed out.
    type_into(&root, "#signin-base", "http://127.0.0.1:9/api").await;
    click(&root, "button[type=submit]").await;
    wait_until("the unreachable error", || {
        text(&root, "#signin-base-error").contains("Cannot reach")
    })
    .await;
    assert!(!text(&root, "#signin-base-error").contains("TypeError"));
    assert!(state.auth.get_untracked().is_none());
    assert!(
        !web_sys::window()
            .unwrap()
            .location()
            .href()
            .unwrap()
            .contains(key)
    );
}

/// Polls `done` for up to 5 s.
async fn wait_until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..100 {
        if done() {
            return;
        }
        sleep_ms(50).await;
    }
    panic!("timed out waiting for {what}");
}

#[wasm_bindgen_test]
async fn the_key_stays_in_session_storage_unless_remembered() {
    session::clear();
    let root = container();
    let state = AppState::new(None);
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        provide_context(state);
        view! { <SignIn /> }
    });
    let root: Element = root.into();
    tick().await;
    let key = "2Tq1kV8mZyq3bX9cWcPvS0aLh7e_secretsecretsecret12345";
    state.sign_in(
        Auth {
            base_url: "/api".into(),
            api_key: key.into(),
        },
        false,
    );
    assert!(stored(tab()).is_some_and(|s| s.contains(key)));
    assert_eq!(stored(local()), None, "not remembered unless asked");

    // Sign-out clears both stores.
    state.sign_out(Some("bye".into()));
    assert_eq!((stored(tab()), stored(local())), (None, None));
    assert!(state.auth.get_untracked().is_none());
    tick().await;
    assert_eq!(text(&root, ".notice"), "bye");

    // With "remember", localStorage holds it too, and a new tab (empty sessionStorage) finds it.
    state.sign_in(
        Auth {
            base_url: "http://127.0.0.1:9999/api/".into(),
            api_key: key.into(),
        },
        true,
    );
    assert!(stored(local()).is_some_and(|s| s.contains(key)));
    tab().remove_item(STORAGE_KEY).unwrap();
    let loaded = session::load().expect("remembered");
    assert_eq!(loaded.base(), "http://127.0.0.1:9999/api");
    assert!(
        stored(tab()).is_some(),
        "a remembered key is copied into the tab's session"
    );

    // Signing in again without "remember" forgets the remembered key.
    session::save(&loaded, false);
    assert_eq!(stored(local()), None);
    session::clear();
    assert_eq!(session::load(), None);
}
