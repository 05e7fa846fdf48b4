//! TLS edges (`docs/api/tls_edges.md`) and their backend module: list and create edges, and per
//! edge view, replace (backend picker from the tunnel-group backends, enabled switch, on by
//! default) and delete the module. Tunnel-group backends (`docs/api/backends.md`) can be
//! created here too, so the flow needs nothing else.

use super::backends::NewBackendForm;
use super::{
    detail_page, edit_actions, editable_head, identity_props, non_empty, split_list, title_or,
};
use crate::api::Method;
use crate::components::confirm::ConfirmedDelete;
use crate::components::error_view::ErrorView;
use crate::components::field::{TextField, list_message_for, message_for};
use crate::components::keep_focus_on;
use crate::components::list::{ListPage, RowName};
use crate::components::loading::{Load, LoadWords, fetch_into, render_load_as};
use crate::components::names::RefName;
use crate::components::picker::PickerSearch;
use crate::components::submit::Submit;
use crate::components::time::RelativeTime;
use crate::routes;
use crate::state::use_app;
use leptos::prelude::*;
use tunnel_core::paths;
use tunnel_core::resources::backend::{TunnelGroupBackend, TunnelGroupBackendList};
use tunnel_core::resources::tls_edge::{
    TlsEdge, TlsEdgeBackend, TlsEdgeBackendReplace, TlsEdgeCreate, TlsEdgeList as Page,
    TlsEdgeUpdate,
};
use tunnel_core::{FieldError, Validate};

#[component]
pub fn TlsEdgeList() -> impl IntoView {
    let reload = RwSignal::new(0);
    let list = ListPage::new(paths::TLS_EDGES, routes::tls_edge)
        .search("Search TLS edges")
        .noun("TLS edge", "TLS edges")
        .export("tls-edges")
        .title("TLS edges")
        .lead("Pick an edge to set the tunnel-group backend that serves its traffic.")
        .columns(&["TLS edge", "Host:ports", "Backend", "Created"])
        .empty("No TLS edges yet. Create one below.")
        .untitled("Untitled TLS edge")
        .reload(reload)
        .rows::<Page, _, _>(|e: TlsEdge| {
            let backend = match e.backend {
                Some(b) => view! {
                    <RefName path=paths::tunnel_group_backend(&b.backend.id) id=b.backend.id.clone() href=routes::backend(&b.backend.id) />
                    {(!b.enabled).then_some(" (disabled)")}
                }
                .into_any(),
                None => view! { <span class="muted">"None"</span> }.into_any(),
            };
            let cells = view! {
                <td><ul class="inline-list">{e.hostports.into_iter().map(|h| view! { <li><code>{h}</code></li> }).collect_view()}</ul></td>
                <td>{backend}</td>
                <td><RelativeTime ts=e.created_at.clone() /></td>
            };
            (RowName::new(e.id, e.description), cells)
        });
    view! {
        {list}
        <NewEdgeForm reload=reload />
    }
}

#[component]
fn NewEdgeForm(reload: RwSignal<u32>) -> impl IntoView {
    let app = use_app();
    let description = RwSignal::new(String::new());
    let hostports = RwSignal::new(String::new());
    let request = Memo::new(move |_| TlsEdgeCreate {
        description: non_empty(description.get()),
        metadata: None,
        hostports: Some(split_list(&hostports.get())).filter(|h| !h.is_empty()),
        ..TlsEdgeCreate::default()
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    let create = Submit::post(paths::TLS_EDGES, move |e: &TlsEdge| {
        app.toast(format!("TLS edge {} created.", e.id), false);
        description.try_set(String::new());
        hostports.try_set(String::new());
        reload.try_update(|r| *r += 1);
    });
    let valid = move || live.with(Vec::is_empty);
    view! {
        <form class="card form" data-create="" on:submit=create.on_submit(move || valid().then(|| request.get_untracked())) novalidate aria-labelledby="new-edge-title">
            <h2 id="new-edge-title">"New TLS edge"</h2>
            <TextField name="description" label="Description" value=description error=create.message(live, "description") />
            <TextField name="hostports" label="Host:ports" value=hostports error=create.message_by(list_message_for, live, "hostports")
                placeholder="app.example.com:443" hint="Comma-separated host:port pairs." />
            {create.failure("The edge was not created")}
            <div class="actions">
                <button type="submit" class="primary" disabled=move || !valid() aria-disabled=move || create.busy().to_string()>"Create TLS edge"</button>
            </div>
        </form>
    }
}

#[component]
pub fn TlsEdgeDetail() -> impl IntoView {
    let backends_reload = RwSignal::new(0);
    // A backend made here is for this edge: the picker chooses it (the user still confirms
    // with "Replace backend module").
    let made_here = RwSignal::new(None::<String>);
    let search = PickerSearch::new();
    let backends = fetch_into::<TunnelGroupBackendList>(
        move || search.first_page(paths::TUNNEL_GROUP_BACKENDS),
        backends_reload,
    );
    detail_page(
        routes::TLS_EDGES,
        "TLS edges",
        paths::tls_edge,
        move |e: TlsEdge, reload| {
            let id = e.id.clone();
            let delete = ConfirmedDelete::back_to_list(
                paths::tls_edge(&id),
                format!("TLS edge {id} deleted."),
                routes::TLS_EDGES,
            );
            let editing = RwSignal::new(false);
            let edit = e.clone();
            view! {
                {editable_head(title_or(&e.description, &e.id), editing, delete, "The TLS edge was not deleted")}
                <dl class="props card">
                    {identity_props(e.id.clone(), e.uri.clone(), &e.created_at)}
                    <dt>"Host:ports"</dt><dd class="mono">{e.hostports.join(", ")}</dd>
                    <dt>"Description"</dt><dd>{e.description.clone()}</dd>
                    <dt>"Metadata"</dt><dd><pre class="mono">{e.metadata.clone()}</pre></dd>
                </dl>
                {move || editing.get().then(|| view! { <TlsEdgeEdit edge=edit.clone() editing=editing reload=reload /> })}
                <BackendModule edge_id=e.id.clone() module=e.backend.clone() backends=backends backends_reload=backends_reload search=search reload=reload made_here=made_here />
                {delete.dialog(
                    "Delete this TLS edge?",
                    format!("TLS edge {id} and its backend module will be deleted; the backend itself stays. This cannot be undone."),
                    "Delete TLS edge",
                )}
                // Only with an edge to attach it to: not under a Not found or a failed load.
                <NewBackendForm on_created=Callback::new(move |b: TunnelGroupBackend| {
                    made_here.set(Some(b.id));
                    backends_reload.update(|r| *r += 1);
                }) titled=true />
            }
        },
    )
}

#[component]
fn BackendModule(
    edge_id: String,
    module: Option<TlsEdgeBackend>,
    backends: RwSignal<Load<TunnelGroupBackendList>>,
    /// Fetches the backends again (the picker's Retry).
    backends_reload: RwSignal<u32>,
    search: PickerSearch,
    reload: RwSignal<u32>,
    made_here: RwSignal<Option<String>>,
) -> impl IntoView {
    let app = use_app();
    let path = paths::tls_edge_backend(&edge_id);
    let backend_id = RwSignal::new(
        module
            .as_ref()
            .map(|m| m.backend.id.clone())
            .unwrap_or_default(),
    );
    // Taken once: a later rebuild of this section starts from the edge's module again.
    Effect::new(move |_| {
        if let Some(id) = made_here.get() {
            backend_id.set(id);
            made_here.set(None);
        }
    });
    let enabled = RwSignal::new(module.as_ref().is_none_or(|m| m.enabled));
    let request = Memo::new(move |_| TlsEdgeBackendReplace {
        id: None,
        enabled: Some(enabled.get()),
        backend_id: backend_id.get(),
        module: None,
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    // The reload rebuilds this section, taking the focused button with it: the focus goes back
    // to the button after a replace, and to the (now empty) picker after a delete.
    let save = Submit::request(Method::PUT, path.clone(), move |m: &TlsEdgeBackend| {
        app.toast(format!("Backend module set to {}.", m.backend.id), false);
        reload.try_update(|r| *r += 1);
        keep_focus_on("#replace-module");
    });
    let delete = ConfirmedDelete::new(path, move || {
        app.toast("Backend module deleted.", false);
        reload.try_update(|r| *r += 1);
        keep_focus_on("#field-backend_id");
    });
    // The form shows the error of the last replace or delete, whichever failed.
    let error = move || save.error().or_else(|| delete.error());
    // "Required" is not an error until something was chosen or sent: the picker starts empty.
    let backend_msg = Signal::derive(move || {
        let live: Vec<FieldError> = if backend_id.with(String::is_empty) {
            Vec::new()
        } else {
            live.get()
        };
        message_for("backend_id", &live, save.error().as_ref())
    });
    let valid = move || live.with(Vec::is_empty);
    let has_module = module.is_some();
    let current = match &module {
        Some(m) => view! {
            <dl class="props">
                <dt>"Backend"</dt>
                <dd><RefName path=paths::tunnel_group_backend(&m.backend.id) id=m.backend.id.clone() href=routes::backend(&m.backend.id) /></dd>
                <dt>"Module"</dt>
                <dd>{if m.enabled { "Enabled: applied to traffic" } else { "Disabled: not applied to traffic" }}</dd>
            </dl>
        }
        .into_any(),
        None => view! { <p class="empty">"No backend module: this edge has no backend yet."</p> }
            .into_any(),
    };
    view! {
        <section class="card" aria-labelledby="module-title">
            <h2 id="module-title">"Backend module"</h2>
            {current}
            <form class="form" on:submit=save.on_submit(move || valid().then(|| request.get_untracked())) novalidate>
                <div class="field" class:invalid=move || backend_msg.with(Option::is_some)>
                    <label for="field-backend_id">"Tunnel-group backend"</label>
                    {search.field("backend-search", "Find backends by id, description or label")}
                    {move || render_load_as(backends.get(), backends_reload, &BACKENDS_LOAD, move |list: TunnelGroupBackendList| {
                        let choices = list.backends.into_iter().map(backend_choice).collect();
                        view! {
                            <select id="field-backend_id" on:change=move |ev| backend_id.set(event_target_value(&ev))>
                                {search.options(backend_id, choices, "Choose a backend…".to_owned(), "No backend matches the search")}
                            </select>
                        }
                    })}
                    <p class="error" role="alert">{backend_msg}</p>
                </div>
                <label class="check switch">
                    <input id="field-enabled" type="checkbox" role="switch" bind:checked=enabled />
                    " Enabled (applied to traffic)"
                </label>
                {move || error().map(|e| view! { <ErrorView error=e /> })}
                <div class="actions">
                    <button type="submit" id="replace-module" class="primary" disabled=move || !valid() aria-disabled=move || save.busy().to_string()>"Replace backend module"</button>
                    {has_module.then(|| view! {
                        {delete.button("Delete module")}
                    })}
                </div>
            </form>
            {delete.dialog(
                "Delete the backend module?",
                format!("Edge {edge_id} will have no backend; its traffic will not reach any tunnel."),
                "Delete module",
            )}
        </section>
    }
}

/// The backend picker's load.
const BACKENDS_LOAD: LoadWords = LoadWords {
    loading: "Loading backends…",
    failed: "Could not load backends",
    refocus: Some("#backend-search"),
};

/// One choice of the backend picker: the id, the description and the labels.
fn backend_choice(b: TunnelGroupBackend) -> (String, String) {
    let labels = b
        .labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let description = if b.description.is_empty() {
        "no description"
    } else {
        &b.description
    };
    let labels = if labels.is_empty() {
        String::new()
    } else {
        format!(" [{labels}]")
    };
    let text = format!("{} — {description}{labels}", b.id);
    (b.id, text)
}

#[component]
fn TlsEdgeEdit(edge: TlsEdge, editing: RwSignal<bool>, reload: RwSignal<u32>) -> impl IntoView {
    let app = use_app();
    let description = RwSignal::new(edge.description.clone());
    let metadata = RwSignal::new(edge.metadata.clone());
    let hostports = RwSignal::new(edge.hostports.join(", "));
    let path = paths::tls_edge(&edge.id);
    let original = StoredValue::new(edge);
    // Only changed fields are sent: PATCH leaves the others as they are.
    let request = Memo::new(move |_| {
        original.with_value(|o| TlsEdgeUpdate {
            description: Some(description.get()).filter(|d| *d != o.description),
            metadata: Some(metadata.get()).filter(|m| *m != o.metadata),
            hostports: Some(split_list(&hostports.get())).filter(|h| *h != o.hostports),
            ..TlsEdgeUpdate::default()
        })
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    let unchanged = move || {
        request.with(|r| r.description.is_none() && r.metadata.is_none() && r.hostports.is_none())
    };
    let save = Submit::patch(path, reload, move |_: &TlsEdge| {
        app.toast("TLS edge saved.", false);
        editing.try_set(false);
        reload.try_update(|r| *r += 1);
    });
    let valid = move || live.with(Vec::is_empty);
    view! {
        <form class="card form" on:submit=save.on_submit(move || valid().then(|| request.get_untracked())) novalidate aria-label="Edit TLS edge">
            <h2>"Edit"</h2>
            <TextField name="description" label="Description" value=description error=save.message(live, "description") />
            <TextField name="metadata" label="Metadata" value=metadata error=save.message(live, "metadata") multiline=true />
            <TextField name="hostports" label="Host:ports" value=hostports error=save.message_by(list_message_for, live, "hostports")
                hint="Comma-separated host:port pairs; replaces the list." />
            {save.failure("The TLS edge was not saved")}
            {edit_actions(editing, move || save.busy(), move || unchanged() || !valid())}
        </form>
    }
}
