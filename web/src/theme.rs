//! Light and dark themes. By default the page follows `prefers-color-scheme` (pure CSS); the
//! switch overrides it by setting `data-theme` on `<html>`, and the choice is kept in
//! `localStorage` (it is not a secret).

use leptos::prelude::*;

const STORAGE_KEY: &str = "tunnel-console.theme";

/// `auto` follows the system; `light` and `dark` override it.
pub const THEMES: [&str; 3] = ["auto", "light", "dark"];

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

fn apply(theme: &str) {
    let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    else {
        return;
    };
    let _ = if theme == "auto" {
        root.remove_attribute("data-theme")
    } else {
        root.set_attribute("data-theme", theme)
    };
}

/// Applies the saved theme; called once at start so there is no flash of the wrong theme later.
pub fn init() {
    let saved = storage()
        .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten())
        .unwrap_or_default();
    if THEMES.contains(&saved.as_str()) {
        apply(&saved);
    }
}

/// A select: system / light / dark.
#[component]
pub fn ThemeSwitch() -> impl IntoView {
    let current = storage()
        .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten())
        .filter(|t| THEMES.contains(&t.as_str()))
        .unwrap_or_else(|| "auto".to_owned());
    let theme = RwSignal::new(current);
    let on_change = move |ev| {
        let value = event_target_value(&ev);
        apply(&value);
        if let Some(s) = storage() {
            let _ = s.set_item(STORAGE_KEY, &value);
        }
        theme.set(value);
    };
    view! {
        <label class="theme-switch">
            <span class="sr-only">"Theme"</span>
            <select on:change=on_change aria-label="Theme">
                <option value="auto" selected=move || theme.get() == "auto">"System"</option>
                <option value="light" selected=move || theme.get() == "light">"Light"</option>
                <option value="dark" selected=move || theme.get() == "dark">"Dark"</option>
            </select>
        </label>
    }
}
