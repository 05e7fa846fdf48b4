//! One module per API area (named as the API names it), plus the sign-in screen. Pages fetch
//! with [`crate::components::loading::fetch_into`], list with
//! [`crate::components::list::ListPage`], send changes with
//! [`crate::components::submit::Submit`], and validate with `tunnel-core` as the user types.
//!
//! This module holds what several pages share: the detail-page frame and small text helpers.

pub mod activity;
pub mod api_keys;
pub mod backends;
pub mod credentials;
pub mod event_destinations;
pub mod event_subscriptions;
pub mod signin;
pub mod ssh_cas;
pub mod tls_edges;
pub mod tunnel_sessions;
pub mod users;

use crate::components::activity::RecentActivity;
use crate::components::confirm::ConfirmedDelete;
use crate::components::copy::CopyValue;
use crate::components::keep_focus_on;
use crate::components::loading::{Load, fetch_into, render_load};
use crate::components::time::RelativeTime;
use crate::routes;
use leptos::prelude::*;
use leptos_router::components::A;
use serde::de::DeserializeOwned;

/// A time on a detail page: relative ("3 min ago", the exact local and UTC time on hover),
/// then the exact UTC time. Lists show only the relative part.
pub fn when(ts: &str) -> impl IntoView + use<> {
    view! { <RelativeTime ts=ts.to_owned() />" · " {short_time(ts)} }
}

/// A timestamp as the user reads it: the RFC 3339 text without the fraction.
pub fn short_time(ts: &str) -> String {
    let ts = ts.split('.').next().unwrap_or(ts).trim_end_matches('Z');
    ts.replacen('T', " ", 1) + " UTC"
}

/// Splits a comma- or newline-separated list, dropping empty entries.
pub fn split_list(text: &str) -> Vec<String> {
    text.split([',', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `Some(text)` for a non-empty string (optional request fields mean "not given" when empty).
pub fn non_empty(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

/// The id route parameter.
pub fn use_id() -> Memo<String> {
    let params = leptos_router::hooks::use_params_map();
    Memo::new(move |_| params.read().get(routes::ID_PARAM).unwrap_or_default())
}

/// A detail page's resource: fetched from `api_path(id)` for the id in the URL, again when
/// `reload` changes. Returns the id and the loaded resource.
pub fn use_detail<T>(
    api_path: fn(&str) -> String,
    reload: RwSignal<u32>,
) -> (Memo<String>, RwSignal<Load<T>>)
where
    T: DeserializeOwned + PartialEq + Clone + Send + Sync + 'static,
{
    let id = use_id();
    // Encoded: an id from the address bar may hold anything, and a trailing space would be
    // dropped from the request's URL, asking for the list's path with a slash instead.
    let request = move || api_path(&String::from(js_sys::encode_uri_component(&id.get())));
    (id, fetch_into::<T>(request, reload))
}

/// The frame of a detail page: the breadcrumb back to the list, then `view` of the resource
/// once it is loaded (the spinner, or the error with Retry, until then): `show(resource,
/// reload)`, where bumping `reload` fetches the resource again after a change. Under it, once
/// the resource is there, its recent activity (fetched again with the resource, so a save
/// shows its event).
pub fn detail_page<T, V>(
    list_route: &'static str,
    list_label: &'static str,
    api_path: fn(&str) -> String,
    show: impl Fn(T, RwSignal<u32>) -> V + Send + Sync + 'static,
) -> impl IntoView
where
    T: DeserializeOwned + PartialEq + Clone + Send + Sync + 'static,
    V: IntoView + 'static,
{
    let reload = RwSignal::new(0);
    let (id, resource) = use_detail::<T>(api_path, reload);
    let loaded = Memo::new(move |_| resource.with(|r| r.ready().is_some()));
    view! {
        {crumbs(list_route, list_label, id)}
        {move || detail_load(resource.get(), reload, list_route, list_label, |r: T| show(r, reload))}
        {move || loaded.get().then(|| view! { <RecentActivity object_id=id.get() reload=reload /> })}
    }
}

/// A detail page's resource as [`render_load`] shows it, except that no such resource (deleted,
/// a mistyped or stale link) is said as a page of its own, with the way back to `list_route`,
/// not as a failed load to retry.
pub fn detail_load<T, V: IntoView + 'static>(
    state: Load<T>,
    reload: RwSignal<u32>,
    list_route: &'static str,
    list_label: &'static str,
    show: impl FnOnce(T) -> V,
) -> AnyView {
    match state {
        Load::Failed(error) if error.status == 404 => view! {
            <h1>"Not found"</h1>
            <p class="lead">{crate::components::text::message(&error.message)}</p>
            <p><A href=list_route exact=true attr:class="button">{format!("Back to {list_label}")}</A></p>
        }
        .into_any(),
        // The page's heading stays while its load failed, so that the page still has one
        // (screen readers list pages by it) and Retry has where to leave the focus.
        failed @ Load::Failed(_) => {
            let path = leptos_router::hooks::use_location().pathname.get_untracked();
            view! {
                <h1>{crate::routes::heading(&path)}</h1>
                {render_load(failed, reload, show)}
            }
            .into_any()
        }
        other => render_load(other, reload, show),
    }
}

/// The breadcrumb of a detail page: the list it belongs to, then the id.
pub fn crumbs(list_route: &'static str, list_label: &'static str, id: Memo<String>) -> AnyView {
    view! {
        <p class="crumbs"><A href=list_route exact=true>{list_label}</A>" / " <span class="mono">{move || id.get()}</span></p>
    }
    .into_any()
}

/// The first properties of a detail page (inside its `<dl>`): the id and uri, each with a copy
/// button, and when the resource was created.
pub fn identity_props(id: String, uri: String, created_at: &str) -> impl IntoView + use<> {
    view! {
        <dt>"ID"</dt><dd><CopyValue value=id what="ID" /></dd>
        <dt>"URI"</dt><dd><CopyValue value=uri what="URI" /></dd>
        <dt>"Created"</dt><dd>{when(created_at)}</dd>
    }
}

/// The head of an editable detail page: its title, the button that opens and closes the
/// editor, Delete, and under them why a delete failed (`not_deleted` its title).
pub fn editable_head(
    title: String,
    editing: RwSignal<bool>,
    delete: ConfirmedDelete,
    not_deleted: &'static str,
) -> impl IntoView {
    // Closing the editor (saved, or Cancel) removes the focused field or button, and a save
    // reloads the page: the focus goes back to the Edit button.
    Effect::new(move |was_editing: Option<bool>| {
        let now = editing.get();
        if was_editing == Some(true) && !now {
            keep_focus_on("#edit-toggle");
        }
        now
    });
    view! {
        <div class="page-head">
            <h1>{title}</h1>
            <div class="actions">
                <button type="button" id="edit-toggle" on:click=move |_| editing.update(|e| *e = !*e)>
                    {move || if editing.get() { "Close editor" } else { "Edit" }}
                </button>
                {delete.button("Delete")}
            </div>
        </div>
        {delete.failure(not_deleted)}
    }
}

/// The buttons under a detail page's editor: Cancel (closes it), and Save changes, disabled
/// while there is nothing valid to save (`blocked`), and unavailable while saving (`busy`:
/// `aria-disabled`, so that the focus stays on it; the submit sends once).
pub fn edit_actions(
    editing: RwSignal<bool>,
    busy: impl Fn() -> bool + Copy + Send + Sync + 'static,
    blocked: impl Fn() -> bool + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <div class="actions">
            <button type="button" on:click=move |_| editing.set(false)>"Cancel"</button>
            <button type="submit" class="primary" disabled=blocked aria-disabled=move || busy().to_string()>
                {move || if busy() { "Saving…" } else { "Save changes" }}
            </button>
        </div>
    }
}

/// The heading of a detail page: the description, or `untitled` when there is none.
pub fn title_or(description: &str, untitled: &str) -> String {
    if description.is_empty() {
        untitled.to_owned()
    } else {
        description.to_owned()
    }
}
