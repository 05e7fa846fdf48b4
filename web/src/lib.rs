//! `tunnel-web`: the browser console of Tunnel Console (Leptos, client-side rendered).
//!
//! Code map:
//! - [`api`]: the one HTTP client (headers, error decoding, 401 → sign-in).
//! - [`session`]: where the sign-in is stored (`sessionStorage`, opt-in `localStorage`).
//! - [`state`]: app-wide signals (sign-in and who it is, toasts, the names cache).
//! - [`theme`]: light / dark / system theme. [`keyboard`]: the keyboard shortcuts.
//! - [`components`]: the one list, fetch and submit helpers, fields, the ACL editor, dialogs,
//!   toasts, pager.
//! - [`pages`]: one module per API area (the audit log's is `activity`), plus sign-in.
//!   [`routes`]: the console's URLs and titles.
//!
//! The console's rules (sign-in storage, what is shown how) are in `docs/console.md`; the API it
//! calls is described in `docs/api/`.
//!
//! Only this crate knows the DOM. Every form is validated with `tunnel-core` as the user types;
//! user-supplied text is always rendered as text nodes, never as HTML.

pub mod api;
pub mod components;
pub mod keyboard;
pub mod pages;
pub mod routes;
pub mod session;
pub mod state;
pub mod theme;

use crate::components::toast::Toasts;
use crate::pages::signin::SignIn;
use crate::pages::{
    activity, api_keys, backends, credentials, event_destinations, event_subscriptions, ssh_cas,
    tls_edges, tunnel_sessions, users,
};
use crate::routes::segment;
use crate::state::{AppState, use_app};
use leptos::prelude::*;
use leptos_router::components::{A, Redirect, Route, Router, Routes};
use leptos_router::hooks::use_location;
use leptos_router::{ParamSegment, StaticSegment};
use std::time::Duration;
use tunnel_core::resources::api_key::Me;
use wasm_bindgen::JsCast;

/// Mounts the console on `<body>` (called by `main.rs`), replacing the static loading shell of
/// `index.html` that covers the time the WASM takes to arrive.
pub fn mount() {
    theme::init();
    if let Some(boot) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("boot"))
    {
        boot.remove();
    }
    leptos::mount::mount_to_body(App);
}

/// The whole console: the sign-in screen until signed in, then the pages.
#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new(session::load());
    state.start_clock();
    provide_context(state);
    let secrets = crate::components::token_dialog::ShowSecret::view();
    // Signing in or out replaces the whole screen, taking the focus with it: signed in, it goes
    // to the page's heading (as after a navigation); signed out, to the key field, under the
    // sentence saying why. Not at the first load, where the browser starts at the top.
    Effect::new(move |was: Option<bool>| {
        let now = state.auth.with(Option::is_some);
        if was.is_some_and(|was| was != now) {
            if now {
                set_timeout(|| focus_main_heading(0), Duration::from_millis(50));
            } else {
                crate::components::keep_focus_on("#signin-key");
            }
        }
        now
    });
    // Signed out in another tab of this browser: this one too.
    let _ = leptos::prelude::window_event_listener(leptos::ev::storage, move |ev| {
        if ev.key().as_deref() == Some(session::SIGNED_OUT_KEY)
            && state.auth.with_untracked(Option::is_some)
        {
            state.sign_out(Some(
                "Signed out in another tab: the API key was removed from this browser.".into(),
            ));
        }
    });
    view! {
        <Show when=move || state.auth.with(Option::is_some) fallback=|| view! { <SignIn /> }>
            <Console />
        </Show>
        <Toasts />
        {secrets}
    }
}

#[component]
fn Console() -> impl IntoView {
    let app = use_app();
    let base = move || {
        app.auth
            .with(|a| a.as_ref().map(|a| a.base().to_owned()).unwrap_or_default())
    };
    let menu_open = RwSignal::new(false);
    let shortcuts_open = RwSignal::new(false);
    let announcer = RwSignal::new(String::new());
    // The routes are spelt with the segments of `routes`, so no route string lives here.
    let id = ParamSegment(routes::ID_PARAM);
    view! {
        <Router>
            <RouteChanges menu_open=menu_open announcer=announcer />
            <keyboard::Shortcuts open=shortcuts_open />
            // `rel=external` keeps the router out: this link only moves focus.
            <a class="skip-link" href="#main" rel="external" on:click=|ev: leptos::ev::MouseEvent| {
                ev.prevent_default();
                focus_main_heading(0);
            }>"Skip to content"</a>
            // Escape closes the phone menu (from anywhere in the header), back on its button.
            <header class="topbar" on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                if ev.key() == "Escape" && menu_open.get_untracked() {
                    menu_open.set(false);
                    components::focus_by_id("menu-toggle");
                }
            }>
                <A href=routes::CREDENTIALS exact=true attr:class="brand">{routes::PRODUCT}</A>
                <button type="button" id="menu-toggle" class="menu-toggle" aria-controls="topnav"
                    aria-expanded=move || menu_open.get().to_string()
                    on:click=move |_| menu_open.update(|o| *o = !*o)>
                    {move || if menu_open.get() { "Close menu" } else { "Menu" }}
                </button>
                <div id="topnav" class="topnav" class:open=move || menu_open.get()>
                    <MainNav />
                    <div class="topbar-end">
                        <WhoAmI base=Signal::derive(base) />
                        <keyboard::ShortcutsButton open=shortcuts_open />
                        <theme::ThemeSwitch />
                        <button type="button" class="signout"
                            on:click=move |_| {
                                app.sign_out(Some("Signed out. The API key was removed from this browser.".into()));
                                session::announce_sign_out();
                            }>
                            "Sign out"
                        </button>
                    </div>
                </div>
            </header>
            <main id="main" tabindex="-1">
                {move || app.refresh_failed.get().map(|why| view! {
                    <p class="refresh-failed" role="status">
                        "Could not refresh: " {why} " What the page shows was loaded before."
                    </p>
                })}
                <Routes fallback=|| view! { <h1>"Page not found"</h1><p class="empty">"No such page in the console."</p> }>
                    <Route path=() view=|| view! { <Redirect path=routes::CREDENTIALS /> } />
                    <Route path=StaticSegment(segment::CREDENTIALS) view=credentials::CredentialList />
                    <Route path=(StaticSegment(segment::CREDENTIALS), StaticSegment(segment::NEW)) view=credentials::CredentialNew />
                    <Route path=(StaticSegment(segment::CREDENTIALS), id) view=credentials::CredentialDetail />
                    <Route path=StaticSegment(segment::SSH_CAS) view=ssh_cas::SshCaList />
                    <Route path=(StaticSegment(segment::SSH_CAS), StaticSegment(segment::NEW)) view=ssh_cas::SshCaNew />
                    <Route path=(StaticSegment(segment::SSH_CAS), id) view=ssh_cas::SshCaDetail />
                    <Route path=StaticSegment(segment::TUNNEL_SESSIONS) view=tunnel_sessions::TunnelSessionList />
                    <Route path=(StaticSegment(segment::TUNNEL_SESSIONS), id) view=tunnel_sessions::TunnelSessionDetail />
                    <Route path=StaticSegment(segment::TLS_EDGES) view=tls_edges::TlsEdgeList />
                    <Route path=(StaticSegment(segment::TLS_EDGES), id) view=tls_edges::TlsEdgeDetail />
                    <Route path=StaticSegment(segment::BACKENDS) view=backends::BackendList />
                    <Route path=(StaticSegment(segment::BACKENDS), StaticSegment(segment::NEW)) view=backends::BackendNew />
                    <Route path=(StaticSegment(segment::BACKENDS), id) view=backends::BackendDetail />
                    <Route path=StaticSegment(segment::EVENT_SUBSCRIPTIONS) view=event_subscriptions::EventSubscriptionList />
                    <Route path=(StaticSegment(segment::EVENT_SUBSCRIPTIONS), StaticSegment(segment::NEW)) view=event_subscriptions::EventSubscriptionNew />
                    <Route path=(StaticSegment(segment::EVENT_SUBSCRIPTIONS), id) view=event_subscriptions::EventSubscriptionDetail />
                    <Route path=StaticSegment(segment::EVENT_DESTINATIONS) view=event_destinations::EventDestinationList />
                    <Route path=(StaticSegment(segment::EVENT_DESTINATIONS), StaticSegment(segment::NEW)) view=event_destinations::EventDestinationNew />
                    <Route path=(StaticSegment(segment::EVENT_DESTINATIONS), id) view=event_destinations::EventDestinationDetail />
                    <Route path=StaticSegment(segment::ACTIVITY) view=activity::ActivityPage />
                    <Route path=(StaticSegment(segment::ACTIVITY), id) view=activity::ActivityEvent />
                    <Route path=StaticSegment(segment::API_KEYS) view=api_keys::ApiKeyList />
                    <Route path=(StaticSegment(segment::API_KEYS), StaticSegment(segment::NEW)) view=api_keys::ApiKeyNew />
                    <Route path=(StaticSegment(segment::API_KEYS), id) view=api_keys::ApiKeyDetail />
                    <Route path=StaticSegment(segment::USERS) view=users::UserList />
                    <Route path=(StaticSegment(segment::USERS), id) view=users::UserDetail />
                </Routes>
            </main>
            <p id="route-announcer" class="sr-only" aria-live="polite" aria-atomic="true">{move || announcer.get()}</p>
        </Router>
    }
}

/// Who is signed in (`GET /me`): the name, whether an admin, and the account; the user or bot id
/// and the API base URL on hover. A resumed sign-in (a reload) reads it again; until it is
/// known, only the base URL shows.
/// The top bar's sections. Not `<A>`, which marks a section's link as the current page on
/// every page under it too ([`routes::section_current`] tells the two apart); the router
/// still takes these links' clicks.
#[component]
fn MainNav() -> impl IntoView {
    let pathname = use_location().pathname;
    view! {
        <nav class="mainnav" aria-label="Main">
            {routes::SECTIONS
                .iter()
                .map(|(href, label)| {
                    let current = move || pathname.with(|p| routes::section_current(href, p));
                    view! { <a href=*href aria-current=current>{*label}</a> }
                })
                .collect_view()}
        </nav>
    }
}

#[component]
fn WhoAmI(base: Signal<String>) -> impl IntoView {
    let app = use_app();
    let api = crate::api::use_api();
    Effect::new(move |_| {
        if app.auth.with(Option::is_some) && app.me.with_untracked(Option::is_none) {
            leptos::task::spawn_local(async move {
                // A 401 signs out (the client does); any other failure leaves it unknown.
                if let Ok(me) = api.get::<Me>(tunnel_core::paths::ME).await {
                    app.me.try_set(Some(me));
                }
            });
        }
    });
    move || match app.me.get() {
        Some(me) => {
            let role = if me.is_admin { "admin" } else { "member" };
            // A named user shows the name first, the role after it (left to the title on a
            // narrow desktop); an unnamed one shows the role.
            let principal = format!("{} {}", me.principal_kind, me.principal_id);
            let (shown, role_after, who) = if me.principal_name.is_empty() {
                (role.to_owned(), None, format!("{principal} ({role})"))
            } else {
                let who = format!("{} ({principal}, {role})", me.principal_name);
                (me.principal_name.clone(), Some(format!(" · {role}")), who)
            };
            let title = format!(
                "Signed in as {who} of account {} ({}), through {}",
                me.account_name,
                me.account_id,
                base.get()
            );
            // The id is long and says little at a glance: the name, role and account show, the
            // whole of it is on hover and for screen readers.
            view! {
                <span class="whoami" title=title.clone() aria-label=title>
                    {shown}{role_after.map(|r| view! { <span class="role">{r}</span> })}
                    <span class="account">" · " {me.account_name}</span>
                </span>
            }
            .into_any()
        }
        None => {
            view! { <span class="api-base" title="API base URL">{base.get()}</span> }.into_any()
        }
    }
}

/// On every route change: the page's title in `document.title`, the menu closed, and after the
/// first page, focus on the new page's heading with its title announced, so keyboard and screen
/// reader users land on what changed instead of the nav link they used.
#[component]
fn RouteChanges(menu_open: RwSignal<bool>, announcer: RwSignal<String>) -> impl IntoView {
    let location = use_location();
    let app = use_app();
    Effect::new(move |previous: Option<String>| {
        let path = location.pathname.get();
        let title = routes::title(&path);
        if let Some(document) = web_sys::window().and_then(|w| w.document()) {
            document.set_title(&title);
        }
        menu_open.set(false);
        if previous.is_some_and(|p| p != path) {
            // The bar spoke of the page left behind.
            app.refresh_failed.set(None);
            announcer.set(title);
            // After the new route has rendered, so the old page's heading is gone.
            set_timeout(|| focus_main_heading(0), Duration::from_millis(50));
        }
        path
    });
}

/// Moves focus to the heading of the page in `<main>` (or to `<main>` itself when the page has
/// none yet): detail pages render their heading once their data arrives, so this retries a few
/// times before settling for `<main>`. Not when the focus is already on something of the new
/// page (the user tabbed or clicked into it, or a shortcut put it there, before this ran): the
/// old page's elements are gone by then, so that is where they chose to be.
fn focus_main_heading(attempt: u32) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let in_page = document.active_element().is_some_and(|active| {
        active.id() != "main" && active.closest("main").ok().flatten().is_some()
    });
    if in_page {
        return;
    }
    let target = document
        .query_selector("main h1")
        .ok()
        .flatten()
        .or_else(|| {
            (attempt >= 15)
                .then(|| document.get_element_by_id("main"))
                .flatten()
        });
    match target.and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok()) {
        Some(el) => {
            if !el.has_attribute("tabindex") {
                let _ = el.set_attribute("tabindex", "-1");
            }
            let _ = el.focus();
        }
        None => set_timeout(
            move || focus_main_heading(attempt + 1),
            Duration::from_millis(100),
        ),
    }
}
