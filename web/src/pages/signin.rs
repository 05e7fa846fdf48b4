//! Sign-in: base URL and API key. The key goes to `sessionStorage` (and `localStorage` only
//! with "remember"); it is never put in a URL, so the form is handled in code, not submitted.

use crate::session::{self, Auth, DEFAULT_BASE_URL};
use crate::state::use_app;
use leptos::prelude::*;

#[component]
pub fn SignIn() -> impl IntoView {
    let app = use_app();
    let base_url = RwSignal::new(DEFAULT_BASE_URL.to_owned());
    let api_key = RwSignal::new(String::new());
    let remember = RwSignal::new(session::is_remembered());
    let error = RwSignal::new(None::<String>);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let key = api_key.get_untracked().trim().to_owned();
        let base = base_url.get_untracked().trim().to_owned();
        if key.is_empty() {
            error.set(Some("Enter an API key.".into()));
            return;
        }
        if key.chars().any(char::is_whitespace) {
            error.set(Some("An API key has no spaces.".into()));
            return;
        }
        let base = if base.is_empty() {
            DEFAULT_BASE_URL.to_owned()
        } else {
            base
        };
        app.sign_in(
            Auth {
                base_url: base,
                api_key: key,
            },
            remember.get_untracked(),
        );
    };
    view! {
        <main class="signin">
            <form class="card signin-card" on:submit=submit method="post" action="#" novalidate>
                <h1>"Tunnel Console"</h1>
                <p class="lead">"Sign in with an API key to manage credentials, SSH CAs, tunnel sessions, TLS edges and event subscriptions."</p>
                {move || app.notice.get().map(|n| view! { <p class="notice" role="status">{n}</p> })}
                <div class="field">
                    <label for="signin-base">"API base URL"</label>
                    <input id="signin-base" type="text" bind:value=base_url autocomplete="url" />
                    <p class="hint">"Default: " <code>"/api"</code> " on this server."</p>
                </div>
                <div class="field">
                    <label for="signin-key">"API key"</label>
                    <input id="signin-key" type="password" bind:value=api_key autocomplete="current-password"
                        spellcheck="false" />
                    <p class="error" role="alert">{move || error.get()}</p>
                </div>
                <label class="check">
                    <input id="signin-remember" type="checkbox" bind:checked=remember />
                    " Remember on this device"
                </label>
                <p class="hint">"Without this the key is forgotten when the tab closes. Sign out removes it."</p>
                <button type="submit" class="primary">"Sign in"</button>
            </form>
        </main>
    }
}
