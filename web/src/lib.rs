//! `tunnel-web`: the browser console of Tunnel Console (Leptos, client-side rendered).
//!
//! Code map:
//! - [`api`]: the one HTTP client (headers, error decoding, 401 → sign-in).
//! - [`session`]: where the sign-in is stored (`sessionStorage`, opt-in `localStorage`).
//! - [`state`]: app-wide signals (sign-in, toasts, the restart wait after updates).
//! - [`theme`]: light / dark / system theme.
//! - [`components`]: fields, the ACL editor, the token dialog, confirm dialog, toasts, pager.
//! - [`pages`]: one module per API area, plus sign-in.
//!
//! Only this crate knows the DOM. Every form is validated with `tunnel-core` as the user types;
//! user-supplied text is always rendered as text nodes, never as HTML.

pub mod api;
pub mod components;
pub mod pages;
pub mod session;
pub mod state;
pub mod theme;

use crate::components::toast::Toasts;
use crate::pages::signin::SignIn;
use crate::state::{AppState, use_app};
use leptos::prelude::*;
use leptos_router::components::{A, Redirect, Route, Router, Routes};
use leptos_router::path;

/// Mounts the console on `<body>` (called by `main.rs`).
pub fn mount() {
    theme::init();
    leptos::mount::mount_to_body(App);
}

/// The whole console: the sign-in screen until signed in, then the pages.
#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new(session::load());
    provide_context(state);
    view! {
        <Show when=move || state.auth.with(Option::is_some) fallback=|| view! { <SignIn /> }>
            <Console />
        </Show>
        <Toasts />
    }
}

#[component]
fn Console() -> impl IntoView {
    let app = use_app();
    let base = move || {
        app.auth
            .with(|a| a.as_ref().map(|a| a.base().to_owned()).unwrap_or_default())
    };
    view! {
        <Router>
            <header class="topbar">
                <A href="/credentials" attr:class="brand">"Tunnel Console"</A>
                <nav class="mainnav" aria-label="Main">
                    <A href="/credentials">"Credentials"</A>
                    <A href="/ssh-cas">"SSH CAs"</A>
                    <A href="/sessions">"Sessions"</A>
                    <A href="/tls-edges">"TLS edges"</A>
                    <A href="/event-subscriptions">"Events"</A>
                </nav>
                <div class="topbar-end">
                    <span class="api-base" title="API base URL">{base}</span>
                    <theme::ThemeSwitch />
                    <button type="button" class="signout"
                        on:click=move |_| app.sign_out(Some("Signed out. The API key was removed from this browser.".into()))>
                        "Sign out"
                    </button>
                </div>
            </header>
            <main id="main">
                <Routes fallback=|| view! { <p class="empty">"No such page."</p> }>
                    <Route path=path!("/") view=|| view! { <Redirect path="/credentials" /> } />
                    <Route path=path!("/credentials") view=pages::credentials::CredentialList />
                    <Route path=path!("/credentials/new") view=pages::credentials::CredentialNew />
                    <Route path=path!("/credentials/:id") view=pages::credentials::CredentialDetail />
                    <Route path=path!("/ssh-cas") view=pages::ssh_cas::SshCaList />
                    <Route path=path!("/ssh-cas/new") view=pages::ssh_cas::SshCaNew />
                    <Route path=path!("/ssh-cas/:id") view=pages::ssh_cas::SshCaDetail />
                    <Route path=path!("/sessions") view=pages::sessions::SessionList />
                    <Route path=path!("/sessions/:id") view=pages::sessions::SessionDetail />
                    <Route path=path!("/tls-edges") view=pages::tls_edges::TlsEdgeList />
                    <Route path=path!("/tls-edges/:id") view=pages::tls_edges::TlsEdgeDetail />
                    <Route path=path!("/event-subscriptions") view=pages::events::SubscriptionList />
                    <Route path=path!("/event-subscriptions/new") view=pages::events::SubscriptionNew />
                    <Route path=path!("/event-subscriptions/:id") view=pages::events::SubscriptionDetail />
                </Routes>
            </main>
        </Router>
    }
}
