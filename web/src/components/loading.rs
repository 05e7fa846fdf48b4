//! Loading: the one fetch helper of the console ([`fetch_into`], used by every list, detail
//! and picker) and the three states of what it fetched: loading, ready, failed.

use crate::api::{Api, ApiError, use_api};
use crate::components::error_view::ErrorView;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::de::DeserializeOwned;
use std::rc::Rc;

#[derive(Debug, Clone, PartialEq)]
pub enum Load<T> {
    Loading,
    Ready(T),
    Failed(ApiError),
}

impl<T> Load<T> {
    pub fn ready(&self) -> Option<&T> {
        match self {
            Load::Ready(t) => Some(t),
            _ => None,
        }
    }

    /// The same state, with `f` of what is ready.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Load<U> {
        match self {
            Load::Loading => Load::Loading,
            Load::Ready(t) => Load::Ready(f(t)),
            Load::Failed(e) => Load::Failed(e),
        }
    }
}

impl<T> From<Result<T, ApiError>> for Load<T> {
    fn from(r: Result<T, ApiError>) -> Load<T> {
        match r {
            Ok(t) => Load::Ready(t),
            Err(e) => Load::Failed(e),
        }
    }
}

#[component]
pub fn Spinner(#[prop(into)] label: String) -> impl IntoView {
    view! { <p class="loading" role="status" aria-live="polite"><span class="spinner" aria-hidden="true"></span>{label}</p> }
}

/// The words of a load's three states, and where Retry leaves the focus.
#[derive(Debug)]
pub struct LoadWords {
    /// Beside the spinner while loading.
    pub loading: &'static str,
    /// The error box's title.
    pub failed: &'static str,
    /// A CSS selector of what the load brings back (a picker's search field, a section's
    /// heading); by default ([`ErrorView`]'s) the page's heading.
    pub refocus: Option<&'static str>,
}

/// A page's own load: a list or a resource.
pub const PAGE_LOAD: LoadWords = LoadWords {
    loading: "Loading…",
    failed: "Could not load",
    refocus: None,
};

/// Renders `state`: a spinner, the error with a Retry button (which bumps `reload`), or
/// `ready(value)`, in a page's words ([`PAGE_LOAD`]).
pub fn render_load<T, V>(
    state: Load<T>,
    reload: RwSignal<u32>,
    ready: impl FnOnce(T) -> V,
) -> AnyView
where
    V: IntoView + 'static,
{
    render_load_as(state, reload, &PAGE_LOAD, ready)
}

/// [`render_load`] in the words of a part of a page (a picker, a section), so that every load
/// of the console shows the same spinner, error box and Retry.
pub fn render_load_as<T, V>(
    state: Load<T>,
    reload: RwSignal<u32>,
    words: &LoadWords,
    ready: impl FnOnce(T) -> V,
) -> AnyView
where
    V: IntoView + 'static,
{
    match state {
        Load::Loading => view! { <Spinner label=words.loading /> }.into_any(),
        Load::Failed(error) => {
            let retry = Callback::new(move |_| reload.update(|r| *r += 1));
            view! { <ErrorView error=error title=words.failed retry=retry refocus=words.refocus /> }
                .into_any()
        }
        Load::Ready(value) => ready(value).into_any(),
    }
}

/// Fetches API `path()` into a signal, again whenever `path` or `reload` changes.
///
/// Not a `LocalResource`: a refresh keeps what is shown (only a first load shows the spinner),
/// and an answer equal to what is shown leaves the signal, and so the DOM, alone, so focus and
/// selection survive the tunnel-session list's refresh every few seconds.
///
/// Only the handling of `T` (decode, compare, store) is generic; the effect and the request
/// are in [`fetch_text`], compiled once for the many types the console fetches.
pub fn fetch_into<T>(
    path: impl Fn() -> String + 'static,
    reload: RwSignal<u32>,
) -> RwSignal<Load<T>>
where
    T: DeserializeOwned + PartialEq + Send + Sync + 'static,
{
    let state = RwSignal::new(Load::Loading);
    let app = crate::state::use_app();
    // The path of what is shown, so that a failed refresh of it can be told from a failed load
    // of something else (another page of a list, another id).
    let shown: Rc<std::cell::RefCell<Option<String>>> = Rc::default();
    fetch_text(
        Box::new(path),
        reload,
        Rc::new(move |step| match step {
            // A retry after a failure shows the spinner again, so the click visibly does
            // something.
            Fetch::Started => {
                if state.with_untracked(|s| matches!(s, Load::Failed(_))) {
                    state.set(Load::Loading);
                }
            }
            // With `try_`: the page may be gone by the time the answer lands.
            Fetch::Answered(path, text) => {
                let result: Load<T> = text.and_then(|text| Api::decode(&text)).into();
                let refreshed = shown.borrow().as_deref() == Some(path.as_str())
                    && state
                        .try_with_untracked(|s| matches!(s, Load::Ready(_)))
                        .unwrap_or(false);
                // A refresh of what is shown that got no answer about it (the server out of
                // reach, or failing) keeps it: rebuilding the page as an error would close its
                // dialogs and drop the focus over a blip that the next refresh may not see.
                if let Load::Failed(e) = &result
                    && refreshed
                    && (e.status == 0 || e.status >= 500)
                {
                    app.refresh_failed.try_set(Some(e.message.clone()));
                    return;
                }
                if app.refresh_failed.try_with_untracked(Option::is_some) == Some(true) {
                    app.refresh_failed.try_set(None);
                }
                *shown.borrow_mut() = matches!(result, Load::Ready(_)).then_some(path);
                if state.try_with_untracked(|s| *s != result).unwrap_or(false) {
                    state.try_set(result);
                }
            }
        }),
    );
    state
}

/// A step of [`fetch_text`], handed to the typed side of [`fetch_into`].
enum Fetch {
    /// A request is about to leave.
    Started,
    /// The answer to the request of a path: the body, or why there is none.
    Answered(String, Result<String, ApiError>),
}

/// The untyped side of [`fetch_into`]: on every change of `path` or `reload`, `GET path()` and
/// hand its body to `step`.
fn fetch_text(path: Box<dyn Fn() -> String>, reload: RwSignal<u32>, step: Rc<dyn Fn(Fetch)>) {
    let api = use_api();
    Effect::new(move |_| {
        reload.track();
        let path = path();
        step(Fetch::Started);
        // Fire and forget: nothing waits for the load; its answer lands through `step`, and
        // the effect starts the next one.
        let step = Rc::clone(&step);
        spawn_local(async move {
            let answer = api.get_text(&path).await;
            step(Fetch::Answered(path, answer));
        });
    });
}
