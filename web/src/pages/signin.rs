//! Sign-in: base URL and API key. The key goes to `sessionStorage` (and `localStorage` only
//! with "remember"); it is never put in a URL, so the form is handled in code, not submitted.

use crate::api::{SignInProblem, check_sign_in};
use crate::components::submit::Submit;
use crate::session::{self, Auth, DEFAULT_BASE_URL};
use crate::state::use_app;
use leptos::prelude::*;
use tunnel_core::resources::api_key::Me;

#[component]
pub fn SignIn() -> impl IntoView {
    let app = use_app();
    // The tab says what is asked, whatever the address (signed out, every path shows this);
    // once signed in, the page's own title replaces it (`RouteChanges`).
    if let Some(document) = web_sys::window().and_then(|w| w.document()) {
        document.set_title(&format!("Sign in · {}", crate::routes::PRODUCT));
    }
    let base_url = RwSignal::new(DEFAULT_BASE_URL.to_owned());
    let api_key = RwSignal::new(String::new());
    let remember = RwSignal::new(session::is_remembered() || app.remembered.get_untracked());
    let base_error = RwSignal::new(None::<String>);
    let key_error = RwSignal::new(None::<String>);
    let base_ref = NodeRef::<leptos::html::Input>::new();
    let key_ref = NodeRef::<leptos::html::Input>::new();
    let fail = move |problem: SignInProblem| {
        let (message, error, field) = match problem {
            SignInProblem::BaseUrl(m) => (m, base_error, base_ref),
            SignInProblem::ApiKey(m) => (m, key_error, key_ref),
        };
        error.try_set(Some(message));
        if let Some(input) = field.get_untracked() {
            let _ = input.focus();
        }
    };
    // The check: the API must answer this key before the console opens.
    let check = Submit::new(
        |auth: &Auth| {
            let auth = auth.clone();
            async move { check_sign_in(&auth).await.map(|me| (auth, me)) }
        },
        move |(auth, me): &(Auth, Me)| {
            app.sign_in(auth.clone(), remember.get_untracked(), me.clone())
        },
    );
    // A refused check lands on the field at fault, with focus there.
    Effect::new(move |_| {
        if let Some(problem) = check.error() {
            fail(problem);
        }
    });
    let ready = move || {
        base_error.set(None);
        key_error.set(None);
        let key = api_key.get_untracked().trim().to_owned();
        let base = base_url.get_untracked().trim().to_owned();
        if key.is_empty() {
            fail(SignInProblem::ApiKey("Enter an API key.".into()));
            return None;
        }
        if key.chars().any(char::is_whitespace) {
            fail(SignInProblem::ApiKey("An API key has no spaces.".into()));
            return None;
        }
        Some(Auth {
            base_url: if base.is_empty() {
                DEFAULT_BASE_URL.to_owned()
            } else {
                base
            },
            api_key: key,
        })
    };
    let busy = move || check.busy();
    view! {
        <main class="signin">
            <form class="card signin-card" on:submit=check.on_submit(ready) method="post" action="#" novalidate>
                <h1>"Tunnel Console"</h1>
                <p class="lead">"Sign in with an API key to manage credentials, SSH CAs, tunnel sessions, TLS edges and event subscriptions."</p>
                {move || app.notice.get().map(|n| view! { <p class="notice" role="status">{n}</p> })}
                <div class="field" class:invalid=move || base_error.with(Option::is_some)>
                    <label for="signin-base">"API base URL"</label>
                    <input id="signin-base" type="text" bind:value=base_url autocomplete="url" node_ref=base_ref
                        aria-invalid=move || base_error.with(Option::is_some).to_string()
                        aria-describedby="signin-base-hint signin-base-error" />
                    <p class="hint" id="signin-base-hint">"Default: " <code>"/api"</code> " on this server."</p>
                    <p class="error" id="signin-base-error" role="alert">{move || base_error.get()}</p>
                </div>
                <div class="field" class:invalid=move || key_error.with(Option::is_some)>
                    <label for="signin-key">"API key"</label>
                    <input id="signin-key" type="password" bind:value=api_key autocomplete="current-password"
                        spellcheck="false" node_ref=key_ref
                        aria-invalid=move || key_error.with(Option::is_some).to_string()
                        aria-describedby="signin-key-error" />
                    <p class="error" id="signin-key-error" role="alert">{move || key_error.get()}</p>
                </div>
                <label class="check">
                    <input id="signin-remember" type="checkbox" bind:checked=remember />
                    " Remember on this device"
                </label>
                <p class="hint">"Without this the key is forgotten when the tab closes. Sign out removes it."</p>
                <button type="submit" class="primary" disabled=busy>
                    {move || if busy() { "Checking…" } else { "Sign in" }}
                </button>
            </form>
        </main>
    }
}
