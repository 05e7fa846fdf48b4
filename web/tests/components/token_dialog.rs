//! The once-only authtoken dialog.

use super::dom::document;
use super::dom::*;
use leptos::prelude::*;
use leptos::task::tick;
use tunnel_web::components::token_dialog::TokenDialog;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::Element;

#[wasm_bindgen_test]
async fn token_dialog_shows_the_token_once_and_closes_with_the_button_or_a_second_escape() {
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
    // The copy button has focus: a stray Enter copies the token rather than closing over it.
    assert_eq!(
        document().active_element().map(|e| e.class_name()),
        Some("copy".into())
    );

    // Not copied yet: the first Escape only warns, the second closes.
    press_escape().await;
    assert_eq!(closed.get_untracked(), 0);
    assert!(
        text(&root, ".copied").contains("press Escape again"),
        "{}",
        text(&root, ".copied")
    );
    press_escape().await;
    assert_eq!(closed.get_untracked(), 1);
    // The button closes at once.
    click(&root, "button.done").await;
    assert_eq!(closed.get_untracked(), 2);
}

#[wasm_bindgen_test]
async fn token_dialog_copy_outcome_replaces_the_escape_warning() {
    let root = container();
    let closed = RwSignal::new(0);
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        view! { <TokenDialog token="tok_1" on_close=Callback::new(move |_| closed.update(|c| *c += 1)) /> }
    });
    let root: Element = root.into();
    tick().await;

    // Warned, then Copy: what the copy did replaces the warning. The browser may refuse the
    // clipboard to a click without a user's gesture; either way the next Escape acts on it.
    press_escape().await;
    assert!(text(&root, ".copied").contains("press Escape again"));
    click(&root, "button.copy").await;
    wait_until("the copy's outcome", || {
        let status = text(&root, ".copied");
        status.contains("Copied") || status.contains("Could not copy")
    })
    .await;
    let copied = text(&root, ".copied").contains("Copied");
    press_escape().await;
    if copied {
        assert_eq!(closed.get_untracked(), 1, "copied: one Escape closes");
    } else {
        assert_eq!(
            closed.get_untracked(),
            0,
            "not copied: the Escape warns afresh"
        );
        assert!(text(&root, ".copied").contains("press Escape again"));
    }
}
