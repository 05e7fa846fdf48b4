//! The search box of a list page (`q`, docs/api/README.md, searching). The search lives in the
//! console's URL (`/credentials?q=laptop`), so a reload, back / forward and a shared link show
//! the same results: the box follows the URL, typing puts the text in the URL once the user
//! pauses (replacing the entry, so the history is not one entry per letter), and Enter at once
//! (a new entry). [`ListPage`](super::list::ListPage) sends it to the API as `q`.

use leptos::prelude::*;
use leptos_router::NavigateOptions;
use leptos_router::hooks::{use_location, use_navigate, use_query_map};
use std::time::Duration;

/// The console URL's query parameter, named as the API's.
pub const PARAM: &str = "q";

/// How long typing pauses before the search is applied.
const PAUSE: Duration = Duration::from_millis(300);

/// The search in the URL (trimmed; empty when none).
pub fn use_search() -> Memo<String> {
    let query = use_query_map();
    Memo::new(move |_| query.with(|q| q.get(PARAM).unwrap_or_default().trim().to_owned()))
}

/// `api_path` with the search `q` (none when empty).
pub fn with_search(api_path: &str, q: &str) -> String {
    if q.is_empty() {
        return api_path.to_owned();
    }
    let sep = if api_path.contains('?') { '&' } else { '?' };
    format!(
        "{api_path}{sep}{}",
        crate::routes::query_string(&[(PARAM, q)])
    )
}

/// The box, labelled `label` (read by screen readers; the placeholder says it too).
#[component]
pub fn SearchBox(label: &'static str) -> impl IntoView {
    let current = use_search();
    let location = use_location();
    let navigate = use_navigate();
    let text = RwSignal::new(current.get_untracked());
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
        let href = with_search(&path, &q);
        navigate(
            &href,
            NavigateOptions {
                replace,
                scroll: false,
                ..NavigateOptions::default()
            },
        );
    };
    let typed = RwSignal::new(0u32);
    let go_later = go.clone();
    let on_input = move |ev: leptos::ev::Event| {
        text.set(event_target_value(&ev));
        let n = typed.get_untracked() + 1;
        typed.set(n);
        let go = go_later.clone();
        set_timeout(
            move || {
                // Only the last keystroke's timer applies it.
                if typed.try_get_untracked() == Some(n) {
                    go(true);
                }
            },
            PAUSE,
        );
    };
    let input = NodeRef::<leptos::html::Input>::new();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        // What the field holds now, even if it changed without an input event (a script or
        // an autofill clearing it).
        if let Some(el) = input.get_untracked() {
            text.set(el.value());
        }
        typed.update(|n| *n += 1);
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
