//! Sign-in: the checks before entering, and where the key is stored.

use super::dom::document;
use super::dom::*;
use leptos::prelude::*;
use leptos::task::tick;
use tunnel_core::resources::api_key::Me;
use tunnel_web::pages::signin::SignIn;
use tunnel_web::session::{self, Auth, STORAGE_KEY};
use tunnel_web::state::AppState;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::Element;

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

/// An API key as the server makes them.
const KEY: &str = "2Tq1kV8mZyq3bX9cWcPvS0aLh7e_secretsecretsecret12345";

/// The sign-in screen, mounted with nothing stored and nobody signed in; it stays mounted
/// while the returned handle lives.
async fn signed_out_sign_in() -> (Element, AppState, Box<dyn std::any::Any>) {
    session::clear();
    let root = container();
    let state = AppState::new(None);
    let handle = leptos::mount::mount_to(root.clone(), move || {
        provide_context(state);
        view! { <SignIn /> }
    });
    tick().await;
    (root.into(), state, Box::new(handle))
}

#[wasm_bindgen_test]
async fn sign_in_checks_the_base_url_and_the_key_before_entering() {
    let (root, state, _handle) = signed_out_sign_in().await;

    // An empty key is refused with a message, and focus goes to the key field.
    click(&root, "button[type=submit]").await;
    assert_eq!(text(&root, "#signin-key-error"), "Enter an API key.");
    assert_eq!(
        document().active_element().map(|e| e.id()),
        Some("signin-key".into())
    );
    assert!(state.auth.get_untracked().is_none());

    // A base URL that is not http(s) or a path is refused before any request.
    type_into(&root, "#signin-key", KEY).await;
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
            .contains(KEY)
    );
}

/// Who a key acts as, as `GET /me` answers.
fn me() -> Me {
    Me {
        principal_id: "usr_1".into(),
        principal_kind: "user".into(),
        principal_name: String::new(),
        is_admin: true,
        account_id: "acct_1".into(),
        account_name: "default".into(),
        api_key_id: "ak_1".into(),
    }
}

#[wasm_bindgen_test]
async fn the_key_stays_in_session_storage_unless_remembered() {
    let (root, state, _handle) = signed_out_sign_in().await;
    state.sign_in(
        Auth {
            base_url: "/api".into(),
            api_key: KEY.into(),
        },
        false,
        me(),
    );
    assert!(stored(tab()).is_some_and(|s| s.contains(KEY)));
    assert_eq!(stored(local()), None, "not remembered unless asked");

    // Sign-out clears both stores.
    state.sign_out(Some("bye".into()));
    assert_eq!((stored(tab()), stored(local())), (None, None));
    assert!(state.auth.get_untracked().is_none());
    assert!(
        state.me.get_untracked().is_none(),
        "who was signed in is forgotten"
    );
    tick().await;
    assert_eq!(text(&root, ".notice"), "bye");

    // With "remember", localStorage holds it too, and a new tab (empty sessionStorage) finds it.
    state.sign_in(
        Auth {
            base_url: "http://127.0.0.1:9999/api/".into(),
            api_key: KEY.into(),
        },
        true,
        me(),
    );
    assert!(stored(local()).is_some_and(|s| s.contains(KEY)));
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

/// Signed out with a remembered key (revoked, say: the 401's sign-out), the next sign-in screen
/// has "Remember on this device" ticked again, as the user had chosen; the key itself is gone.
#[wasm_bindgen_test]
async fn a_sign_out_keeps_the_remember_choice() {
    let (_root, state, _handle) = signed_out_sign_in().await;
    state.sign_in(
        Auth {
            base_url: "/api".into(),
            api_key: KEY.into(),
        },
        true,
        me(),
    );
    state.sign_out(Some("revoked".into()));
    assert_eq!((stored(tab()), stored(local())), (None, None));
    let again = container();
    let _again = leptos::mount::mount_to(again.clone(), move || {
        provide_context(state);
        view! { <SignIn /> }
    });
    tick().await;
    let again: Element = again.into();
    let remember: web_sys::HtmlInputElement = get(&again, "#signin-remember").unchecked_into();
    assert!(remember.checked(), "Remember is ticked again");
}
