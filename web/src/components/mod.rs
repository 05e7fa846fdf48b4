//! Reusable pieces of the console. They live in the lib so the browser tests can mount them.
//!
//! - [`list`]: the one list page (fetch, pager, states, table and row links) and `PAGE_SIZE`;
//!   [`search`]: its search box, the search kept in the URL; [`bulk`]: selecting rows and
//!   acting on them; [`export`]: every page of a list to a CSV or JSON file; [`picker`]: the
//!   search field of pickers.
//! - [`loading`]: the one fetch helper and the loading / ready / failed states.
//! - [`submit`]: the one way to send a change (busy, server errors, success), on `Action`.
//! - [`confirm`]: confirmation dialogs and the delete flow of the detail pages.
//! - [`field`], [`acl_editor`], [`names`], [`copy`], [`text`], [`error_view`]: what forms and
//!   pages are made of; [`dialog`], [`token_dialog`], [`toast`], [`pager`]: the rest.
//! - [`time`]: relative times ("3 min ago", exact on hover) and the time filters' conversions;
//!   [`activity`]: audit-log events as pages show them, and a resource's recent activity.

pub mod acl_editor;
pub mod activity;
pub mod bulk;
pub mod confirm;
pub mod copy;
pub mod dialog;
pub mod error_view;
pub mod export;
pub mod field;
pub mod list;
pub mod loading;
pub mod names;
pub mod pager;
pub mod picker;
pub mod search;
pub mod submit;
pub mod text;
pub mod time;
pub mod toast;
pub mod token_dialog;

use leptos::prelude::{
    WindowListenerHandle, document, request_animation_frame, set_timeout, window_event_listener,
};
use leptos::task::spawn_local;

/// The page being built, to tell later whether the user is still on it: what it started (a
/// delete, a create) may end after they moved on. Gone once the router unmounts it, even if
/// the user came back to the same path since (another instance of the page, which knows
/// nothing of what this one started); and the router's location must still be its path (the
/// location, which outlives the page, has the new path while a page is built, the browser's
/// address may not yet).
#[derive(Debug, Clone)]
pub struct ThisPage {
    app: crate::state::AppState,
    pathname: leptos::prelude::Memo<String>,
    page: std::sync::Arc<str>,
    gone: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl ThisPage {
    pub fn new() -> ThisPage {
        use leptos::prelude::GetUntracked as _;
        let pathname = leptos_router::hooks::use_location().pathname;
        let gone = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let unmounted = gone.clone();
        leptos::prelude::on_cleanup(move || {
            unmounted.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        ThisPage {
            app: crate::state::use_app(),
            pathname,
            page: pathname.get_untracked().into(),
            gone,
        }
    }

    /// Says that something this page started changed data after the user left it: the list
    /// on show now fetches again (`AppState::changed_while_away`).
    pub fn changed_while_away(&self) {
        use leptos::prelude::Update as _;
        self.app.changed_while_away.update(|n| *n += 1);
    }

    /// Whether the console still shows this page.
    pub fn still_shown(&self) -> bool {
        use leptos::prelude::WithUntracked as _;
        !self.gone.load(std::sync::atomic::Ordering::Relaxed)
            && self
                .pathname
                .try_with_untracked(|now| *now == *self.page)
                .unwrap_or(false)
    }
}

impl Default for ThisPage {
    fn default() -> ThisPage {
        ThisPage::new()
    }
}

/// What a page calls to go to `href` once something it started is done (a delete, a stop):
/// only if the user is still on it. One who moved on meanwhile stays where they are, with
/// what they were typing there.
pub fn use_leave_when_done() -> impl Fn(&str) + Clone {
    let navigate = leptos_router::hooks::use_navigate();
    let page = ThisPage::new();
    move |href| {
        if page.still_shown() {
            navigate(href, leptos_router::NavigateOptions::default());
        } else {
            page.changed_while_away();
        }
    }
}

/// What a create page calls to open the page of what it created: the detail page takes the
/// create form's place in the history, so Back returns where the user came from (the list),
/// not to an emptied form that would only create a second one. Only while the user is still on
/// the create page: one who moved on meanwhile stays where they went (the toast says it was
/// created), and their page keeps its place in the history.
pub fn use_open_created() -> impl Fn(&str) + Clone {
    let navigate = leptos_router::hooks::use_navigate();
    let page = ThisPage::new();
    move |href| {
        if page.still_shown() {
            navigate(
                href,
                leptos_router::NavigateOptions {
                    replace: true,
                    ..Default::default()
                },
            );
        } else {
            page.changed_while_away();
        }
    }
}

/// Copies text to the clipboard; the promise is awaited so the caller can say "Copied".
pub async fn copy_to_clipboard(text: &str) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let promise = window.navigator().clipboard().write_text(text);
    wasm_bindgen_futures::JsFuture::from(promise).await.is_ok()
}

/// Copies `text` and then tells `done` whether it worked (every copy button of the console).
pub fn copy_then(text: String, done: impl FnOnce(bool) + 'static) {
    // Fire and forget: a click starts the copy and nothing waits for it; `done` only changes
    // the button's label (with `try_`, as the button may be gone by then).
    spawn_local(async move { done(copy_to_clipboard(&text).await) });
}

/// Runs only the last of quick successive calls, once [`PAUSE`] has passed without another:
/// what typing in a search field, or walking a select with the arrow keys, applies. A handle
/// (`Copy`, usable in event handlers); [`Pause::cancel`] drops what is pending (Enter applies
/// at once).
#[derive(Debug, Clone, Copy)]
pub struct Pause {
    last: leptos::prelude::StoredValue<u32>,
}

/// How long typing (or walking a list) pauses before what it chose is applied.
pub const PAUSE: std::time::Duration = std::time::Duration::from_millis(300);

impl Pause {
    pub fn new() -> Pause {
        Pause {
            last: leptos::prelude::StoredValue::new(0),
        }
    }

    /// Runs `f` after the pause, unless another call (or a cancel) comes first.
    pub fn then(self, f: impl FnOnce() + 'static) {
        use leptos::prelude::{GetValue, SetValue};
        let n = self.last.get_value() + 1;
        self.last.set_value(n);
        set_timeout(
            move || {
                if self.last.try_get_value() == Some(n) {
                    f();
                }
            },
            PAUSE,
        );
    }

    /// Drops what is pending.
    pub fn cancel(self) {
        use leptos::prelude::UpdateValue;
        self.last.update_value(|n| *n += 1);
    }
}

impl Default for Pause {
    fn default() -> Pause {
        Pause::new()
    }
}

/// Moves focus to the element with this id, if it is there (a field the user must look at, a
/// field just added).
pub fn focus_by_id(id: &str) {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
        .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok())
    {
        let _ = el.focus();
    }
}

/// [`focus_by_id`] once the view changed now is rendered (a row just added is not in the
/// document until the next frame).
pub fn focus_next_frame(id: String) {
    request_animation_frame(move || focus_by_id(&id));
}

/// Puts the focus on the first element matching `selector` whenever, during the next two
/// seconds, it is left on nothing (the page's body): an action that removed the focused element
/// (a closed editor, a dialog whose opener went away) and the reload that rebuilds the view
/// after it would otherwise leave a keyboard or screen-reader user at the top of the page. A
/// focus put anywhere else is left alone, and the user's next key or pointer press (or scroll)
/// ends it: what they do next wins (a click on the page's background leaves the focus on
/// nothing).
pub fn keep_focus_on(selector: &'static str) {
    until_the_user_acts(40, move || {
        if focused().is_none()
            && let Some(el) = document()
                .query_selector(selector)
                .ok()
                .flatten()
                .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok())
        {
            // A heading takes the focus only once made focusable; it may be one the page
            // rendered since the last step (a loaded page replacing its error).
            if matches!(el.tag_name().as_str(), "H1" | "H2" | "H3") && !el.has_attribute("tabindex")
            {
                let _ = el.set_attribute("tabindex", "-1");
            }
            let _ = el.focus();
        }
    });
}

/// The element holding the focus; `None` when the focus is on nothing (the page's body).
pub fn focused() -> Option<web_sys::Element> {
    let doc = document();
    doc.active_element().filter(|active| {
        !doc.body()
            .is_some_and(|body| body.is_same_node(Some(active.as_ref())))
    })
}

/// Runs `step` on the next frame and then every 50 ms, `times` times in all, until the user
/// presses a key or a pointer, or scrolls: a fix-up of the view after an action (the focus, the
/// scroll) must not fight what the user does next.
pub fn until_the_user_acts(times: u32, step: impl Fn() + 'static) {
    use std::cell::Cell;
    use std::rc::Rc;
    let acted = Rc::new(Cell::new(false));
    let flag = |acted: &Rc<Cell<bool>>| {
        let acted = acted.clone();
        move || acted.set(true)
    };
    let (key, pointer, wheel, touch) = (flag(&acted), flag(&acted), flag(&acted), flag(&acted));
    let listeners = [
        window_event_listener(leptos::ev::keydown, move |_| key()),
        window_event_listener(leptos::ev::pointerdown, move |_| pointer()),
        window_event_listener(leptos::ev::wheel, move |_| wheel()),
        window_event_listener(leptos::ev::touchstart, move |_| touch()),
    ];
    fn check(
        left: u32,
        step: Rc<dyn Fn()>,
        acted: Rc<Cell<bool>>,
        listeners: [WindowListenerHandle; 4],
    ) {
        if acted.get() || left == 0 {
            for listener in listeners {
                listener.remove();
            }
            return;
        }
        step();
        set_timeout(
            move || check(left - 1, step, acted, listeners),
            std::time::Duration::from_millis(50),
        );
    }
    let step: Rc<dyn Fn()> = Rc::new(step);
    request_animation_frame(move || check(times, step, acted, listeners));
}
