//! The console's routes: each URL shows its page. The router is spelt with the segments of
//! `routes`, so this checks that they add up to the URLs users have.

use super::dom::*;
use leptos::task::tick;
use tunnel_web::App;
use tunnel_web::session::{self, Auth};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;
use web_sys::Element;

/// Mounts the whole console at `path` (signed in to an API that does not answer, so every
/// page shows its frame and a load error) and returns the text of `selector` once it shows.
async fn text_at(path: &str, selector: &str) -> String {
    let history = web_sys::window().unwrap().history().unwrap();
    history
        .push_state_with_url(&JsValue::NULL, "", Some(path))
        .unwrap();
    let root = container();
    let _handle = leptos::mount::mount_to(root.clone(), App);
    let root: Element = root.into();
    tick().await;
    wait_until(&format!("{selector} at {path}"), || {
        find(&root, selector).is_some()
    })
    .await;
    text(&root, selector)
}

#[wasm_bindgen_test]
async fn every_console_url_shows_its_page() {
    let location = web_sys::window().unwrap().location();
    let test_page = location.pathname().unwrap() + &location.search().unwrap();
    session::save(
        &Auth {
            base_url: "http://127.0.0.1:9/api".into(),
            api_key: "2Tq1kV8mZyq3bX9cWcPvS0aLh7e_secretsecretsecret12345".into(),
        },
        false,
    );
    let headings = [
        ("/credentials", "Credentials"),
        ("/credentials/new", "New credential"),
        ("/ssh-cas", "SSH certificate authorities"),
        ("/ssh-cas/new", "New SSH certificate authority"),
        ("/sessions", "Tunnel sessions"),
        ("/tls-edges", "TLS edges"),
        ("/event-subscriptions", "Event subscriptions"),
        ("/event-subscriptions/new", "New event subscription"),
        ("/event-destinations", "Event destinations"),
        ("/event-destinations/new", "New event destination"),
        ("/activity", "Activity"),
        ("/activity?type=credential_created.v0", "Activity"),
        ("/nowhere", "Page not found"),
    ];
    for (path, heading) in headings {
        assert_eq!(text_at(path, "main h1").await, heading, "{path}");
    }
    // A detail page names the id from its URL in the breadcrumb, under its list.
    for (path, list) in [
        ("/credentials/cr_1", "Credentials"),
        ("/ssh-cas/ca_1", "SSH CAs"),
        ("/sessions/ts_1", "Sessions"),
        ("/tls-edges/edgtls_1", "TLS edges"),
        ("/event-subscriptions/esb_1", "Event subscriptions"),
        ("/event-destinations/ed_1", "Event destinations"),
        ("/activity/ev_1", "Activity"),
    ] {
        let crumbs = text_at(path, "main .crumbs").await;
        let id = path.rsplit('/').next().unwrap();
        assert_eq!(crumbs, format!("{list} / {id}"), "{path}");
    }
    // The root goes to the first section.
    let root_heading = text_at("/", "main h1").await;
    assert_eq!(root_heading, "Credentials");
    session::clear();
    web_sys::window()
        .unwrap()
        .history()
        .unwrap()
        .replace_state_with_url(&JsValue::NULL, "", Some(&test_page))
        .unwrap();
}
