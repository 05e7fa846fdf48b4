//! The three states of anything fetched: loading, ready, failed.

use crate::api::ApiError;
use crate::components::error_view::ErrorView;
use leptos::prelude::*;

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

/// Renders `state`: a spinner, the error with a Retry button (which bumps `reload`), or
/// `ready(value)`.
pub fn render_load<T, V>(
    state: Load<T>,
    reload: RwSignal<u32>,
    ready: impl FnOnce(T) -> V,
) -> AnyView
where
    V: IntoView + 'static,
{
    match state {
        Load::Loading => view! { <Spinner label="Loading…" /> }.into_any(),
        Load::Failed(error) => {
            let retry = Callback::new(move |_| reload.update(|r| *r += 1));
            view! { <ErrorView error=error title="Could not load" retry=retry /> }.into_any()
        }
        Load::Ready(value) => ready(value).into_any(),
    }
}
