//! Tunnel-group backends (`docs/api/backends.md`): the list (search, bulk delete, export),
//! create, and the detail page with the live tunnels the backend selects, edit (description,
//! metadata, labels) and delete (refused by the API while a TLS edge uses the backend).
//!
//! [`NewBackendForm`] is also on a TLS edge's page, so an edge can get a backend without
//! leaving it.

use super::{
    detail_page, edit_actions, editable_head, identity_props, non_empty, split_list, title_or,
};
use crate::components::bulk::BulkAction;
use crate::components::confirm::ConfirmedDelete;
use crate::components::field::{TextField, list_message_for};
use crate::components::list::{ListPage, RowName};
use crate::components::submit::Submit;
use crate::components::time::RelativeTime;
use crate::components::use_open_created;
use crate::routes;
use crate::state::use_app;
use leptos::prelude::*;
use leptos_router::components::A;
use std::collections::BTreeMap;
use tunnel_core::paths;
use tunnel_core::resources::backend::{
    TunnelGroupBackend, TunnelGroupBackendCreate, TunnelGroupBackendList as Page,
    TunnelGroupBackendUpdate,
};
use tunnel_core::{FieldError, Validate};

/// What the list does to selected rows.
const BULK: &[BulkAction] = &[BulkAction::delete(
    paths::tunnel_group_backend,
    "will be deleted. A backend a TLS edge uses is refused until that edge's backend module is removed. This cannot be undone.",
)];

#[component]
pub fn BackendList() -> impl IntoView {
    ListPage::new(paths::TUNNEL_GROUP_BACKENDS, routes::backend)
        .search("Search backends")
        .noun("backend", "backends")
        .bulk(BULK)
        .export("tunnel-group-backends")
        .title("Tunnel-group backends")
        .create(routes::BACKEND_NEW, "New backend")
        .lead("Each backend serves the live tunnels whose agents bound all of its labels; a TLS edge sends its traffic to one.")
        .columns(&["Backend", "Labels", "Tunnels online", "Created"])
        .empty("No backends yet. Create one, then pick it on a TLS edge.")
        .untitled("Untitled backend")
        .rows::<Page, _, _>(|b: TunnelGroupBackend| {
            let tunnels = b.tunnels.len();
            let cells = view! {
                <td><Labels labels=b.labels /></td>
                <td>{tunnels}</td>
                <td><RelativeTime ts=b.created_at.clone() /></td>
            };
            (RowName::new(b.id, b.description), cells)
        })
}

/// The labels as `key=value` items, or "None: selects no tunnel".
#[component]
fn Labels(labels: BTreeMap<String, String>) -> impl IntoView {
    if labels.is_empty() {
        return view! { <span class="muted">"None: selects no tunnel"</span> }.into_any();
    }
    view! {
        <ul class="inline-list">
            {labels.into_iter().map(|(k, v)| view! { <li><code>{format!("{k}={v}")}</code></li> }).collect_view()}
        </ul>
    }
    .into_any()
}

/// Labels as the form shows them: `key=value, key=value`.
fn labels_text(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses `key=value` pairs separated by commas or lines. A key given twice is an error: a
/// backend has one value per key, and keeping either would silently drop the other.
fn parse_labels(text: &str) -> Result<BTreeMap<String, String>, String> {
    // Inserted one by one: collecting into the map would sort the pairs first, and the sort's
    // code is large in the WASM.
    let mut labels = BTreeMap::new();
    for pair in split_list(text) {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(format!(
                "Write each label as key=value; \u{201c}{pair}\u{201d} is not."
            ));
        };
        let key = k.trim();
        if labels.insert(key.to_owned(), v.trim().to_owned()).is_some() {
            return Err(format!(
                "The label key \u{201c}{key}\u{201d} is given twice; a backend has one value per key."
            ));
        }
    }
    Ok(labels)
}

/// The errors of a labels field: its parse error, or the request's own.
fn errors_of<T: Validate>(request: &Result<T, String>) -> Vec<FieldError> {
    match request {
        Ok(r) => r.field_errors(),
        Err(m) => vec![FieldError::new("labels", m.clone())],
    }
}

#[component]
pub fn BackendNew() -> impl IntoView {
    let open_created = use_open_created();
    let created = Callback::new(move |b: TunnelGroupBackend| {
        open_created(&routes::backend(&b.id));
    });
    view! {
        <p class="crumbs"><A href=routes::BACKENDS exact=true>"Backends"</A>" / new"</p>
        <h1>"New tunnel-group backend"</h1>
        <NewBackendForm on_created=created titled=false />
    }
}

/// The create form; `on_created` gets the new backend. `titled`: with its own heading (on a
/// TLS edge's page).
#[component]
pub fn NewBackendForm(on_created: Callback<TunnelGroupBackend>, titled: bool) -> impl IntoView {
    let app = use_app();
    let description = RwSignal::new(String::new());
    let metadata = RwSignal::new(String::new());
    let labels = RwSignal::new(String::new());
    let request = Memo::new(move |_| {
        parse_labels(&labels.get()).map(|l| TunnelGroupBackendCreate {
            description: non_empty(description.get()),
            metadata: non_empty(metadata.get()),
            labels: Some(l).filter(|l| !l.is_empty()),
        })
    });
    let live = Memo::new(move |_| request.with(errors_of));
    let create = Submit::post(
        paths::TUNNEL_GROUP_BACKENDS,
        move |b: &TunnelGroupBackend| {
            app.toast(format!("Tunnel-group backend {} created.", b.id), false);
            description.try_set(String::new());
            metadata.try_set(String::new());
            labels.try_set(String::new());
            on_created.run(b.clone());
        },
    );
    let valid = move || live.with(Vec::is_empty);
    let ready = move || {
        request
            .get_untracked()
            .ok()
            .filter(|_| live.with_untracked(Vec::is_empty))
    };
    view! {
        <form class="card form" on:submit=create.on_submit(ready) novalidate aria-label="New tunnel-group backend">
            {titled.then(|| view! { <h2>"New tunnel-group backend"</h2> })}
            <TextField name="backend-description" label="Description" value=description error=create.message(live, "description") />
            <TextField name="backend-metadata" label="Metadata" value=metadata error=create.message(live, "metadata") multiline=true />
            <TextField name="labels" label="Labels" value=labels error=create.message_by(list_message_for, live, "labels") placeholder="env=prod, app=web"
                hint="Tunnels whose agents bound all of these labels serve this backend." />
            {create.failure("The backend was not created")}
            <div class="actions"><button type="submit" class="primary" disabled=move || !valid() aria-disabled=move || create.busy().to_string()>"Create backend"</button></div>
        </form>
    }
}

#[component]
pub fn BackendDetail() -> impl IntoView {
    detail_page(
        routes::BACKENDS,
        "Backends",
        paths::tunnel_group_backend,
        backend_view,
    )
}

/// A loaded backend: its properties and live tunnels, the editor (on demand) and delete.
fn backend_view(b: TunnelGroupBackend, reload: RwSignal<u32>) -> impl IntoView {
    let editing = RwSignal::new(false);
    let id = b.id.clone();
    let delete = ConfirmedDelete::back_to_list(
        paths::tunnel_group_backend(&id),
        format!("Backend {id} deleted."),
        routes::BACKENDS,
    );
    let tunnels = if b.tunnels.is_empty() {
        view! { <span class="muted">"None online"</span> }.into_any()
    } else {
        view! {
            <ul class="inline-list">
                {b.tunnels.clone().into_iter().map(|t| view! {
                    <li><A href=routes::tunnel_session(&t.id)><code>{t.id}</code></A></li>
                }).collect_view()}
            </ul>
        }
        .into_any()
    };
    let edit = b.clone();
    view! {
        {editable_head(title_or(&b.description, "Tunnel-group backend"), editing, delete, "The backend was not deleted")}
        <dl class="props card">
            {identity_props(b.id.clone(), b.uri.clone(), &b.created_at)}
            <dt>"Description"</dt><dd>{b.description.clone()}</dd>
            <dt>"Metadata"</dt><dd><pre class="mono">{b.metadata.clone()}</pre></dd>
            <dt>"Labels"</dt><dd><Labels labels=b.labels.clone() /></dd>
            <dt>"Tunnels online"</dt><dd>{tunnels}</dd>
        </dl>
        {move || editing.get().then(|| view! { <BackendEdit backend=edit.clone() editing=editing reload=reload /> })}
        {delete.dialog(
            "Delete this backend?",
            format!("Backend {id} will be deleted. A TLS edge that uses it must drop it first. This cannot be undone."),
            "Delete backend",
        )}
    }
}

#[component]
fn BackendEdit(
    backend: TunnelGroupBackend,
    editing: RwSignal<bool>,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let app = use_app();
    let description = RwSignal::new(backend.description.clone());
    let metadata = RwSignal::new(backend.metadata.clone());
    let labels = RwSignal::new(labels_text(&backend.labels));
    let path = paths::tunnel_group_backend(&backend.id);
    let original = StoredValue::new(backend);
    // Only changed fields are sent: PATCH leaves the others as they are.
    let request = Memo::new(move |_| {
        let parsed = parse_labels(&labels.get())?;
        Ok(original.with_value(|o| TunnelGroupBackendUpdate {
            id: None,
            description: Some(description.get()).filter(|d| *d != o.description),
            metadata: Some(metadata.get()).filter(|m| *m != o.metadata),
            labels: Some(parsed).filter(|l| *l != o.labels),
        }))
    });
    let live = Memo::new(move |_| request.with(errors_of));
    let unchanged = move || {
        request.with(|r| {
            r.as_ref().is_ok_and(|r| {
                r.description.is_none() && r.metadata.is_none() && r.labels.is_none()
            })
        })
    };
    let save = Submit::patch(path, reload, move |_: &TunnelGroupBackend| {
        app.toast("Backend saved.", false);
        editing.try_set(false);
        reload.try_update(|r| *r += 1);
    });
    let valid = move || live.with(Vec::is_empty);
    let ready = move || {
        request
            .get_untracked()
            .ok()
            .filter(|_| live.with_untracked(Vec::is_empty))
    };
    view! {
        <form class="card form" on:submit=save.on_submit(ready) novalidate aria-label="Edit backend">
            <h2>"Edit"</h2>
            <TextField name="description" label="Description" value=description error=save.message(live, "description") />
            <TextField name="metadata" label="Metadata" value=metadata error=save.message(live, "metadata") multiline=true />
            <TextField name="labels" label="Labels" value=labels error=save.message_by(list_message_for, live, "labels")
                hint="Replaces every label. Tunnels whose agents bound all of them serve this backend." />
            {save.failure("The backend was not saved")}
            {edit_actions(editing, move || save.busy(), move || unchanged() || !valid())}
        </form>
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::parse_labels;

    #[test]
    fn labels_parse_and_a_key_given_twice_is_refused() {
        let parsed = parse_labels("env=prod, app = web\nregion=eu").unwrap();
        assert_eq!(parsed.len(), 3);
        assert_eq!(parsed["app"], "web");
        let error = parse_labels("region=eu-west, region=us").unwrap_err();
        assert!(
            error.contains("region") && error.contains("twice"),
            "{error}"
        );
        assert!(parse_labels("env").is_err());
    }
}
