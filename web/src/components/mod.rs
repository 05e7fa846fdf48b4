//! Reusable pieces of the console. They live in the lib so the browser tests can mount them.

pub mod acl_editor;
pub mod confirm;
pub mod copy;
pub mod dialog;
pub mod error_view;
pub mod field;
pub mod list;
pub mod loading;
pub mod names;
pub mod pager;
pub mod text;
pub mod toast;
pub mod token_dialog;

/// Copies text to the clipboard; the promise is awaited so the caller can say "Copied".
pub async fn copy_to_clipboard(text: &str) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let promise = window.navigator().clipboard().write_text(text);
    wasm_bindgen_futures::JsFuture::from(promise).await.is_ok()
}
