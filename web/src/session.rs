//! Sign-in storage: where the base URL and API key live between page loads.
//!
//! Rules (`docs/console.md`): the key is kept in `sessionStorage` (gone when the tab closes);
//! only when the user opts in to "remember" is it also kept in `localStorage`. It is never put
//! in a URL. Signing out clears both stores, so a remembered key cannot come back, and signs
//! out the console's other tabs ([`announce_sign_out`]).

use serde::{Deserialize, Serialize};

/// The storage key under which the sign-in is kept (in both stores).
pub const STORAGE_KEY: &str = "tunnel-console.auth";
/// The base URL used when the user does not give one: the API of the origin serving the console.
pub const DEFAULT_BASE_URL: &str = "/api";

/// What the console needs to call the API.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Auth {
    pub base_url: String,
    pub api_key: String,
}

/// Without the key: whatever prints an `Auth` (a panic message, a log line) must not show it.
impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .finish()
    }
}

impl Auth {
    /// The base URL without a trailing slash, so paths from `tunnel_core::paths` append cleanly.
    pub fn base(&self) -> &str {
        let base = self.base_url.trim();
        let base = if base.is_empty() {
            DEFAULT_BASE_URL
        } else {
            base
        };
        base.trim_end_matches('/')
    }
}

fn session_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok()?
}

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

fn read(store: Option<web_sys::Storage>) -> Option<Auth> {
    let text = store?.get_item(STORAGE_KEY).ok()??;
    serde_json::from_str(&text).ok()
}

/// Keeps the sign-in for this tab, and in `localStorage` too only when `remember` is set.
pub fn save(auth: &Auth, remember: bool) {
    let Ok(text) = serde_json::to_string(auth) else {
        return;
    };
    if let Some(store) = session_storage() {
        let _ = store.set_item(STORAGE_KEY, &text);
    }
    if let Some(store) = local_storage() {
        // Not remembering also forgets an older remembered key: the user's latest choice wins.
        let _ = if remember {
            store.set_item(STORAGE_KEY, &text)
        } else {
            store.remove_item(STORAGE_KEY)
        };
    }
}

/// The sign-in of this tab, else a remembered one (copied into this tab's session).
pub fn load() -> Option<Auth> {
    if let Some(auth) = read(session_storage()) {
        return Some(auth);
    }
    let auth = read(local_storage())?;
    if let (Some(store), Ok(text)) = (session_storage(), serde_json::to_string(&auth)) {
        let _ = store.set_item(STORAGE_KEY, &text);
    }
    Some(auth)
}

/// Whether a remembered sign-in exists (the sign-in form pre-ticks "remember" then).
pub fn is_remembered() -> bool {
    read(local_storage()).is_some()
}

/// The `localStorage` entry a sign-out writes, so every other tab of the console in this
/// browser hears it (a `storage` event) and signs out too: "Sign out" leaves the browser, not
/// one tab, whose siblings would go on with the key (each tab keeps its own copy).
pub const SIGNED_OUT_KEY: &str = "tunnel-console.signed-out";

/// Tells the console's other tabs that the user signed out (see [`SIGNED_OUT_KEY`]).
pub fn announce_sign_out() {
    if let Some(store) = local_storage() {
        // A new value each time: an unchanged one raises no event.
        let _ = store.set_item(SIGNED_OUT_KEY, &js_sys::Date::now().to_string());
    }
}

/// Forgets the sign-in everywhere.
pub fn clear() {
    for store in [session_storage(), local_storage()].into_iter().flatten() {
        let _ = store.remove_item(STORAGE_KEY);
    }
}

#[cfg(test)]
mod tests {
    use super::Auth;

    #[test]
    fn debug_shows_the_base_url_not_the_key() {
        let auth = Auth {
            base_url: "https://tunnels.example/api".into(),
            api_key: "key-7c1e-secret".into(),
        };
        let shown = format!("{auth:?}");
        assert!(shown.contains("https://tunnels.example/api"), "{shown}");
        assert!(!shown.contains("key-7c1e-secret"), "{shown}");
    }
}
