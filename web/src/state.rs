//! The app-wide state: who is signed in, the sign-out notice, toasts, and names of referenced
//! resources. All signals, so the struct is `Copy` and moves freely into closures and tasks.
//! (The restart wait after an agent update is not kept here: it is the server's, read from the
//! session, so it survives a reload and is the same in every tab.)

use crate::session::{self, Auth};
use leptos::prelude::*;
use std::collections::BTreeMap;
use tunnel_core::resources::api_key::Me;

/// One short message about a completed (or failed) action.
#[derive(Debug, Clone, PartialEq)]
pub struct Toast {
    pub id: u64,
    pub text: String,
    pub error: bool,
}

#[derive(Debug, Clone, Copy)]
pub struct AppState {
    pub auth: RwSignal<Option<Auth>>,
    /// Who the key acts as (`GET /me`): read at sign-in, and again when a stored sign-in is
    /// resumed; `None` until known. Pages leave out what only admins may do by it.
    pub me: RwSignal<Option<Me>>,
    /// Shown on the sign-in screen (e.g. why the user was signed out).
    pub notice: RwSignal<Option<String>>,
    pub toasts: RwSignal<Vec<Toast>>,
    next_toast: RwSignal<u64>,
    /// Names of referenced resources by API path (`None` while loading or when not found); see
    /// `components::names`.
    pub names: RwSignal<BTreeMap<String, Option<String>>>,
    /// Now, as relative times ("3 min ago") read it: moved every [`CLOCK_TICK`] by
    /// [`AppState::start_clock`], so a page left open keeps its times true.
    pub clock: RwSignal<f64>,
    /// Each list page's URL as last shown in this tab (console path → the path with its search
    /// and order), so that leaving one of its detail pages by a delete returns to the same rows.
    list_urls: StoredValue<BTreeMap<String, String>>,
    /// Moved on by a change that ended after the user left the page that made it (a slow
    /// delete, create or bulk run): the list on show may predate it, and fetches again.
    pub changed_while_away: RwSignal<u32>,
    /// Each list's trail of page cursors (`components::pager`), by the list's URL without its
    /// cursor: a list shown again (Back from a row's page) still knows its page number and
    /// "Previous".
    pager_trails: StoredValue<BTreeMap<String, Vec<String>>>,
    /// Why the last refresh of what a page shows got no answer (the server unreachable, a 5xx):
    /// the page keeps what it showed, and a bar above it says so until the next answer
    /// (`components::loading`).
    pub refresh_failed: RwSignal<Option<String>>,
    /// Whether the key signed out last was remembered on this device: the sign-in screen that
    /// follows (a revoked key's, say) ticks "Remember" again, as the user had chosen.
    pub remembered: RwSignal<bool>,
}

/// How often the relative times move on: well under the minute they count in past the first.
pub const CLOCK_TICK: std::time::Duration = std::time::Duration::from_secs(10);

impl AppState {
    pub fn new(auth: Option<Auth>) -> AppState {
        AppState {
            auth: RwSignal::new(auth),
            me: RwSignal::new(None),
            notice: RwSignal::new(None),
            toasts: RwSignal::new(Vec::new()),
            next_toast: RwSignal::new(0),
            names: RwSignal::new(BTreeMap::new()),
            clock: RwSignal::new(now_ms()),
            list_urls: StoredValue::new(BTreeMap::new()),
            changed_while_away: RwSignal::new(0),
            pager_trails: StoredValue::new(BTreeMap::new()),
            refresh_failed: RwSignal::new(None),
            remembered: RwSignal::new(false),
        }
    }

    /// Moves [`AppState::clock`] every [`CLOCK_TICK`] for as long as the page lives (the app
    /// calls it once; tests set the clock themselves).
    pub fn start_clock(&self) {
        let clock = self.clock;
        set_interval(move || clock.set(now_ms()), CLOCK_TICK);
    }

    pub fn auth_untracked(&self) -> Option<Auth> {
        self.auth.get_untracked()
    }

    /// Signs in for this tab (and remembers when asked), as `me`.
    pub fn sign_in(&self, auth: Auth, remember: bool, me: Me) {
        session::save(&auth, remember);
        self.notice.set(None);
        self.me.set(Some(me));
        self.auth.set(Some(auth));
    }

    /// Whether the signed-in principal is known to be an admin (`false` while unknown, so
    /// admin-only controls appear once it is known rather than vanish).
    pub fn is_admin(&self) -> bool {
        self.me.with(|me| me.as_ref().is_some_and(|me| me.is_admin))
    }

    /// Forgets the key everywhere and returns to the sign-in screen, with `notice` shown there.
    pub fn sign_out(&self, notice: Option<String>) {
        self.remembered.set(session::is_remembered());
        session::clear();
        // Another key may see other resources: forget the names fetched with this one.
        self.names.set(BTreeMap::new());
        self.list_urls.set_value(BTreeMap::new());
        self.me.set(None);
        self.refresh_failed.set(None);
        self.notice.set(notice);
        self.auth.set(None);
    }

    /// Whether `api_key_id` is the key this console is signed in with (untracked).
    pub fn is_own_key(&self, api_key_id: &str) -> bool {
        self.me
            .with_untracked(|me| me.as_ref().is_some_and(|me| me.api_key_id == api_key_id))
    }

    /// Signs out after the user deleted the key this console was signed in with, saying so:
    /// the next request would be refused with a 401 that says only "unknown or revoked".
    pub fn sign_out_own_key_deleted(&self) {
        self.sign_out(Some(
            "You deleted the API key this console was signed in with. Sign in with another key."
                .into(),
        ));
    }

    /// Shows a toast for a few seconds; the same text already showing is not shown twice.
    pub fn toast(&self, text: impl Into<String>, error: bool) {
        let text = text.into();
        let showing = self
            .toasts
            .with_untracked(|t| t.iter().any(|x| x.text == text && x.error == error));
        if showing {
            return;
        }
        let id = self.next_toast.get_untracked();
        self.next_toast.set(id + 1);
        self.toasts.update(|t| t.push(Toast { id, text, error }));
        let toasts = self.toasts;
        set_timeout(
            move || {
                toasts
                    .try_update(|t| t.retain(|x| x.id != id))
                    .unwrap_or_default()
            },
            std::time::Duration::from_millis(if error { 8000 } else { 4000 }),
        );
    }

    /// Forgets the cached name of the resource at API `path` (changed or deleted here), so
    /// the next reference to it fetches it again.
    pub fn forget_name(&self, path: &str) {
        if self.names.with_untracked(|n| n.contains_key(path)) {
            self.names.update(|n| {
                n.remove(path);
            });
        }
    }

    /// Remembers that the list page at console path `list` shows `href` (its search and order).
    pub fn remember_list(&self, list: String, href: String) {
        self.list_urls.update_value(|urls| {
            urls.insert(list, href);
        });
    }

    /// The list page at console path `list` as last shown in this tab (its search and order),
    /// or its plain path when it was not shown yet.
    pub fn list_url(&self, list: &str) -> String {
        self.list_urls
            .with_value(|urls| urls.get(list).cloned())
            .unwrap_or_else(|| list.to_owned())
    }

    /// The trail of page cursors of the list at `list` (its URL without the cursor), as last
    /// kept in this tab.
    pub fn pager_trail(&self, list: &str) -> Option<Vec<String>> {
        self.pager_trails.with_value(|t| t.get(list).cloned())
    }

    /// Keeps the trail of page cursors of the list at `list`.
    pub fn keep_pager_trail(&self, list: String, trail: Vec<String>) {
        self.pager_trails.update_value(|t| {
            t.insert(list, trail);
        });
    }

    pub fn dismiss_toast(&self, id: u64) {
        self.toasts.update(|t| t.retain(|x| x.id != id));
    }
}

/// The app state from context; components mounted alone (tests) get a fresh one.
pub fn use_app() -> AppState {
    use_context::<AppState>().unwrap_or_else(|| {
        let state = AppState::new(None);
        provide_context(state);
        state
    })
}

/// The current time in ms since the epoch.
pub fn now_ms() -> f64 {
    js_sys::Date::now()
}
