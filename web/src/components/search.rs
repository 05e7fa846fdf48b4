//! The search box of a list page (`q`, docs/api/README.md, searching). The search lives in the
//! console's URL (`/credentials?q=laptop`), so a reload, back / forward and a shared link show
//! the same results: the box follows the URL, typing puts the text in the URL once the user
//! pauses (replacing the entry, so the history is not one entry per letter), and Enter at once
//! (a new entry). [`ListPage`](super::list::ListPage) sends it to the API as `q`.
//!
//! The order of the list (`order=oldest`, the API's extension; newest first when absent) lives
//! beside it in the URL and is chosen with [`OrderSelect`]. Changing either keeps the other and
//! goes back to the first page.

use super::Pause;
use leptos::prelude::*;
use leptos_router::NavigateOptions;
use leptos_router::hooks::{use_location, use_navigate, use_query_map};

/// The console URL's query parameter, named as the API's.
pub const PARAM: &str = "q";

/// The console URL's query parameter of the order, named as the API's.
pub const ORDER_PARAM: &str = "order";

/// Whether the URL asks for the oldest first.
pub fn use_oldest_first() -> Memo<bool> {
    let query = use_query_map();
    Memo::new(move |_| query.with(|q| q.get(ORDER_PARAM).as_deref() == Some("oldest")))
}

/// `path` with the search `q` (none when empty) and the order (none when newest first): a
/// console URL, or an API path, at its first page.
pub fn with_list_query(path: &str, q: &str, oldest_first: bool) -> String {
    let order = if oldest_first { "oldest" } else { "" };
    let query = crate::routes::query_string(&[(PARAM, q), (ORDER_PARAM, order)]);
    if query.is_empty() {
        return path.to_owned();
    }
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}{query}")
}

/// The search in the URL (trimmed; empty when none).
pub fn use_search() -> Memo<String> {
    let query = use_query_map();
    Memo::new(move |_| query.with(|q| q.get(PARAM).unwrap_or_default().trim().to_owned()))
}

/// `api_path` with the search `q` (none when empty).
pub fn with_search(api_path: &str, q: &str) -> String {
    with_list_query(api_path, q, false)
}

/// The box, labelled `label` (read by screen readers; the placeholder says it too).
#[component]
pub fn SearchBox(label: &'static str) -> impl IntoView {
    let current = use_search();
    let oldest_first = use_oldest_first();
    let location = use_location();
    let navigate = use_navigate();
    let text = RwSignal::new(current.get_untracked());
    // Leaving a detail page by a delete returns to this list as it is now shown.
    let app = crate::state::use_app();
    Effect::new(move |_| {
        let list = location.pathname.get();
        let href = with_list_query(&list, &current.get(), oldest_first.get());
        app.remember_list(list, href);
    });
    // Back / forward (or a link) changes the URL: the box shows that entry's search.
    Effect::new(move |_| {
        let q = current.get();
        if text.get_untracked().trim() != q {
            text.set(q);
        }
    });
    let go = move |replace: bool| {
        let q = text.get_untracked().trim().to_owned();
        if q == current.get_untracked() {
            return;
        }
        let path = location.pathname.get_untracked();
        let href = with_list_query(&path, &q, oldest_first.get_untracked());
        navigate(
            &href,
            NavigateOptions {
                replace,
                scroll: false,
                ..NavigateOptions::default()
            },
        );
    };
    // Typing applies the search once it pauses, in place of the entry (one history entry per
    // search, not per keystroke).
    let pause = Pause::new();
    let go_later = go.clone();
    let on_input = move |ev: leptos::ev::Event| {
        text.set(event_target_value(&ev));
        let go = go_later.clone();
        pause.then(move || go(true));
    };
    let input = NodeRef::<leptos::html::Input>::new();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        // What the field holds now, even if it changed without an input event (a script or
        // an autofill clearing it).
        if let Some(el) = input.get_untracked() {
            text.set(el.value());
        }
        pause.cancel();
        go(false);
    };
    view! {
        <form class="search" role="search" on:submit=submit>
            <label for="list-search" class="sr-only">{label}</label>
            <input id="list-search" type="search" name=PARAM placeholder=label autocomplete="off" node_ref=input
                spellcheck="false" maxlength="255"
                prop:value=move || text.get() on:input=on_input />
        </form>
    }
}

/// The order of the list: newest first (the API's order) or oldest first.
#[component]
pub fn OrderSelect() -> impl IntoView {
    let oldest_first = use_oldest_first();
    let q = use_search();
    let location = use_location();
    let navigate = use_navigate();
    let change = move |ev: leptos::ev::Event| {
        let oldest = event_target_value(&ev) == "oldest";
        if oldest == oldest_first.get_untracked() {
            return;
        }
        let path = location.pathname.get_untracked();
        navigate(
            &with_list_query(&path, &q.get_untracked(), oldest),
            NavigateOptions {
                scroll: false,
                ..NavigateOptions::default()
            },
        );
    };
    let value = move || {
        if oldest_first.get() {
            "oldest"
        } else {
            "newest"
        }
    };
    view! {
        <div class="order">
            <label for="list-order" class="sr-only">"Order"</label>
            <select id="list-order" name=ORDER_PARAM on:change=change prop:value=value>
                <option value="newest">"Newest first"</option>
                <option value="oldest">"Oldest first"</option>
            </select>
        </div>
    }
}
