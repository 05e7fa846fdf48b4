//! Reusable pieces of the console. They live in the lib so the browser tests can mount them.

pub mod acl_editor;
pub mod confirm;
pub mod error_view;
pub mod field;
pub mod loading;
pub mod pager;
pub mod toast;
pub mod token_dialog;

use leptos::prelude::*;

/// Calls `on_escape` when Escape is pressed anywhere while the caller is mounted: dialogs close
/// with Esc even when focus is not inside them.
pub fn close_on_escape(on_escape: Callback<()>) {
    let handle = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() == "Escape" {
            on_escape.run(());
        }
    });
    on_cleanup(move || handle.remove());
}

/// Copies text to the clipboard; the promise is awaited so the caller can say "Copied".
pub async fn copy_to_clipboard(text: &str) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let promise = window.navigator().clipboard().write_text(text);
    wasm_bindgen_futures::JsFuture::from(promise).await.is_ok()
}
