//! Audit-log events as the console shows them: relative times with the exact time on hover,
//! and an event's actor, object and changes.

use super::dom::*;
use leptos::prelude::*;
use leptos::task::tick;
use leptos_router::components::Router;
use tunnel_core::resources::event::{Actor, Event};
use tunnel_web::components::activity::{actor_view, changes_view, object_view};
use tunnel_web::components::time::{
    RelativeTime, from_local_input, parse_ms, relative, to_local_input,
};
use tunnel_web::state::AppState;
use wasm_bindgen_test::*;
use web_sys::Element;

#[wasm_bindgen_test]
fn relative_times_read_naturally_in_the_browser() {
    let now = parse_ms("2026-11-22T10:00:00Z").unwrap();
    let at = |ts: &str| relative(parse_ms(ts).unwrap(), now);
    assert_eq!(at("2026-11-22T09:59:58Z"), "just now");
    assert_eq!(at("2026-11-22T09:59:15.500Z"), "44 s ago");
    assert_eq!(at("2026-11-22T09:57:00Z"), "3 min ago");
    assert_eq!(at("2026-11-22T07:00:00+01:00"), "4 h ago");
    assert_eq!(at("2026-11-20T09:00:00Z"), "2 days ago");
    assert_eq!(at("2026-09-01T00:00:00Z"), "2026-09-01");
    assert_eq!(parse_ms("not a time"), None);
}

#[wasm_bindgen_test]
fn time_filters_go_through_local_time_and_back() {
    let local = to_local_input("2026-11-22T09:30:00Z");
    assert_eq!(local.len(), "2026-11-22T09:30".len(), "{local}");
    assert_eq!(
        from_local_input(&local).as_deref(),
        Some("2026-11-22T09:30:00Z")
    );
    assert_eq!(from_local_input(""), None);
    assert_eq!(from_local_input("nonsense"), None);
}

#[wasm_bindgen_test]
async fn relative_time_has_the_exact_time_on_hover() {
    let root = container();
    let _handle = leptos::mount::mount_to(root.clone(), || {
        view! { <RelativeTime ts="2026-11-22T09:30:00Z" /> }
    });
    let root: Element = root.into();
    tick().await;
    let time = get(&root, "time");
    assert_eq!(
        time.get_attribute("datetime").as_deref(),
        Some("2026-11-22T09:30:00Z")
    );
    let title = time.get_attribute("title").unwrap_or_default();
    assert!(title.contains("local (UTC"), "{title}");
    assert!(title.ends_with("2026-11-22 09:30:00 UTC"), "{title}");
}

#[wasm_bindgen_test]
async fn relative_times_move_on_with_the_clock() {
    let app = AppState::new(None);
    let now = js_sys::Date::now();
    let ts = String::from(js_sys::Date::new(&(now - 2.0 * 60_000.0).into()).to_iso_string());
    let root = container();
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        provide_context(app);
        view! { <RelativeTime ts=ts.clone() /> }
    });
    let root: Element = root.into();
    tick().await;
    assert_eq!(text(&root, "time"), "2 min ago");
    // A page left open: the clock moves on, and so does the time.
    app.clock.set(now + 5.0 * 60_000.0);
    tick().await;
    assert_eq!(text(&root, "time"), "7 min ago");
}

fn event(actor: Actor, object: serde_json::Value) -> Event {
    serde_json::from_value(serde_json::json!({
        "id": "ev_1", "uri": "/api/events/ev_1", "type": "credential_updated.v0",
        "occurred_at": "2026-11-22T09:30:00Z", "actor": actor, "operation_id": "op_1",
        "object_id": "cr_1", "object": object, "changed_fields": ["description", "acl"],
        "details": {"reason": "replaced by the user"},
    }))
    .unwrap()
}

#[wasm_bindgen_test]
async fn an_event_names_its_actor_links_its_object_and_lists_its_changes() {
    let root = container();
    let user = event(
        Actor::principal("usr_1", "ak_1"),
        serde_json::json!({"description": "laptop"}),
    );
    let bot = event(Actor::principal("bot_2", "ak_2"), serde_json::json!({}));
    // The user's name is already known (fetched once per app); the bot's cannot be fetched
    // (signed out), so it shows its id.
    let state = AppState::new(None);
    state.names.update(|n| {
        n.insert("/users/usr_1".into(), Some("Grace Hopper".into()));
    });
    let agent = event(Actor::agent("cr_9"), serde_json::json!({"description": ""}));
    let mut deleted = event(Actor::system(), serde_json::json!({"description": "gone"}));
    deleted.event_type = "credential_deleted.v0".into();
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        provide_context(state);
        view! {
            <Router>
                <p id="user">{actor_view(&user.actor)}</p>
                <p id="bot">{actor_view(&bot.actor)}</p>
                <p id="agent">{actor_view(&agent.actor)}</p>
                <p id="system">{actor_view(&Actor::system())}</p>
                <p id="named">{object_view(&user)}</p>
                <p id="unnamed">{object_view(&agent)}</p>
                <p id="changes">{changes_view(&user)}</p>
                <p id="deleted">{object_view(&deleted)}</p>
            </Router>
        }
    });
    let root: Element = root.into();
    tick().await;
    assert_eq!(text(&root, "#user .name"), "Grace Hopper");
    assert_eq!(text(&root, "#user code.id"), "usr_1");
    assert!(text(&root, "#user").starts_with("user "));
    assert_eq!(
        get(&root, "#user a").get_attribute("href").as_deref(),
        Some("/users/usr_1")
    );
    assert_eq!(text(&root, "#bot"), "bot bot_2");
    assert_eq!(
        get(&root, "#bot a").get_attribute("href").as_deref(),
        Some("/users/bot_2")
    );
    assert_eq!(text(&root, "#agent"), "agent cr_9");
    assert_eq!(
        get(&root, "#agent a").get_attribute("href").as_deref(),
        Some("/credentials/cr_9")
    );
    assert_eq!(text(&root, "#system"), "system");
    assert_eq!(text(&root, "#named a"), "laptop");
    assert_eq!(
        get(&root, "#named a").get_attribute("href").as_deref(),
        Some("/credentials/cr_1")
    );
    assert_eq!(text(&root, "#named code.id"), "cr_1");
    assert_eq!(text(&root, "#unnamed a"), "cr_1");
    assert_eq!(text(&root, "#deleted .name"), "gone");
    assert!(
        find(&root, "#deleted a").is_none(),
        "a deleted object has no page"
    );
    let changes = text(&root, "#changes");
    assert!(changes.contains("Changed: description, acl"), "{changes}");
    assert!(
        changes.contains("reason: replaced by the user"),
        "{changes}"
    );
}
