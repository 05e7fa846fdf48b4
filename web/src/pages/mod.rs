//! One module per API area, plus the sign-in screen. Pages fetch through [`crate::api::Api`],
//! validate with `tunnel-core`, and show loading, empty and error states.

pub mod credentials;
pub mod events;
pub mod sessions;
pub mod signin;
pub mod ssh_cas;
pub mod tls_edges;

use crate::api::Api;
use crate::components::loading::Load;
use crate::state::use_app;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::de::DeserializeOwned;

/// The API client of the current app.
pub fn use_api() -> Api {
    Api::new(use_app())
}

/// Fetches `path()` into a signal whenever `path` or `reload` changes.
pub fn fetch_into<T>(
    path: impl Fn() -> String + Send + Sync + 'static,
    reload: RwSignal<u32>,
) -> RwSignal<Load<T>>
where
    T: DeserializeOwned + PartialEq + Send + Sync + 'static,
{
    let api = use_api();
    let state = RwSignal::new(Load::Loading);
    Effect::new(move |_| {
        reload.track();
        let path = path();
        // A retry after a failure shows the spinner again, so the click visibly does something.
        if state.with_untracked(|s| matches!(s, Load::Failed(_))) {
            state.set(Load::Loading);
        }
        // Keep what is shown while refreshing (only a first load shows the spinner), and leave
        // the DOM alone when a refresh brings nothing new, so focus and selection survive it.
        spawn_local(async move {
            let result: Load<T> = api.get::<T>(&path).await.into();
            if state.try_with_untracked(|s| *s != result).unwrap_or(false) {
                state.try_set(result);
            }
        });
    });
    state
}

/// A timestamp as the user reads it: the RFC 3339 text without the fraction.
pub fn short_time(ts: &str) -> String {
    let ts = ts.split('.').next().unwrap_or(ts).trim_end_matches('Z');
    ts.replacen('T', " ", 1) + " UTC"
}

/// `Some(text)` for a non-empty string (optional request fields mean "not given" when empty).
pub fn non_empty(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

/// The `id` route parameter.
pub fn use_id() -> Memo<String> {
    let params = leptos_router::hooks::use_params_map();
    Memo::new(move |_| params.read().get("id").unwrap_or_default())
}
