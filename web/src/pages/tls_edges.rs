//! TLS edges and their backend module: list and create edges, and per edge view, replace
//! (backend picker from the tunnel-group backends, enabled switch, on by default) and delete the
//! module. Tunnel-group backends can be created here too, so the flow needs nothing else.

use super::{fetch_into, non_empty, short_time, use_api, use_id};
use crate::api::ApiError;
use crate::components::confirm::ConfirmDialog;
use crate::components::copy::CopyValue;
use crate::components::error_view::ErrorView;
use crate::components::field::{TextField, message_for};
use crate::components::list::{NameCell, PAGE_SIZE, resource_list};
use crate::components::loading::{Load, render_load};
use crate::components::names::RefName;
use crate::routes;
use crate::state::use_app;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::components::A;
use std::collections::BTreeMap;
use tunnel_core::paths;
use tunnel_core::resources::backend::{
    TunnelGroupBackend, TunnelGroupBackendCreate, TunnelGroupBackendList,
};
use tunnel_core::resources::tls_edge::{
    TlsEdge, TlsEdgeBackend, TlsEdgeBackendReplace, TlsEdgeCreate, TlsEdgeList as Page,
};
use tunnel_core::{FieldError, Validate};

/// Splits a comma- or newline-separated list, dropping empty entries.
fn split_list(text: &str) -> Vec<String> {
    text.split([',', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

#[component]
pub fn TlsEdgeList() -> impl IntoView {
    let reload = RwSignal::new(0);
    let list = resource_list::<Page, _, _>(
        paths::TLS_EDGES,
        reload,
        &["TLS edge", "Host:ports", "Backend", "Created"],
        "No TLS edges yet. Create one below.",
        |e: TlsEdge| {
            view! {
                <tr data-id=e.id.clone()>
                    <NameCell href=routes::tls_edge(&e.id) name=e.description id=e.id.clone() untitled="Untitled TLS edge" />
                    <td><ul class="inline-list">{e.hostports.into_iter().map(|h| view! { <li><code>{h}</code></li> }).collect_view()}</ul></td>
                    <td>{match e.backend {
                        Some(b) => view! {
                            <RefName path=paths::tunnel_group_backend(&b.backend.id) id=b.backend.id.clone() />
                            {(!b.enabled).then_some(" (disabled)")}
                        }.into_any(),
                        None => view! { <span class="muted">"None"</span> }.into_any(),
                    }}</td>
                    <td class="time">{short_time(&e.created_at)}</td>
                </tr>
            }
        },
    );
    view! {
        <div class="page-head"><h1>"TLS edges"</h1></div>
        <p class="lead">"Pick an edge to set the tunnel-group backend that serves its traffic."</p>
        {list}
        <NewEdgeForm reload=reload />
    }
}

#[component]
fn NewEdgeForm(reload: RwSignal<u32>) -> impl IntoView {
    let api = use_api();
    let app = use_app();
    let description = RwSignal::new(String::new());
    let hostports = RwSignal::new(String::new());
    let server_error = RwSignal::new(None::<ApiError>);
    let busy = RwSignal::new(false);
    let request = Memo::new(move |_| TlsEdgeCreate {
        description: non_empty(description.get()),
        metadata: None,
        hostports: Some(split_list(&hostports.get())).filter(|h| !h.is_empty()),
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    let host_msg = Signal::derive(move || {
        live.with(|l| {
            l.iter()
                .find(|e| e.field.starts_with("hostports"))
                .map(|e| e.message.clone())
        })
        .or_else(|| server_error.with(|s| s.as_ref().and_then(|s| s.field_message("hostports"))))
    });
    let desc_msg = Signal::derive(move || {
        live.with(|l| server_error.with(|s| message_for("description", l, s.as_ref())))
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if !live.with(Vec::is_empty) || busy.get_untracked() {
            return;
        }
        busy.set(true);
        server_error.set(None);
        let body = request.get_untracked();
        spawn_local(async move {
            let result: Result<TlsEdge, ApiError> = api.post(paths::TLS_EDGES, &body).await;
            busy.try_set(false);
            match result {
                Ok(e) => {
                    app.toast(format!("TLS edge {} created.", e.id), false);
                    description.try_set(String::new());
                    hostports.try_set(String::new());
                    server_error.try_set(None);
                    reload.try_update(|r| *r += 1);
                }
                Err(e) => {
                    server_error.try_set(Some(e));
                }
            }
        });
    };
    view! {
        <form class="card form" on:submit=submit novalidate aria-labelledby="new-edge-title">
            <h2 id="new-edge-title">"New TLS edge"</h2>
            <TextField name="description" label="Description" value=description error=desc_msg />
            <TextField name="hostports" label="Host:ports" value=hostports error=host_msg
                placeholder="app.example.com:443" hint="Comma-separated host:port pairs." />
            {move || server_error.get().map(|e| view! { <ErrorView error=e title="The edge was not created" /> })}
            <div class="actions">
                <button type="submit" class="primary" disabled=move || busy.get() || !live.with(Vec::is_empty)>"Create TLS edge"</button>
            </div>
        </form>
    }
}

#[component]
pub fn TlsEdgeDetail() -> impl IntoView {
    let id = use_id();
    let reload = RwSignal::new(0);
    let edge = fetch_into::<TlsEdge>(move || paths::tls_edge(&id.get()), reload);
    let backends_reload = RwSignal::new(0);
    let backends = fetch_into::<TunnelGroupBackendList>(
        move || {
            format!(
                "{}{}",
                paths::TUNNEL_GROUP_BACKENDS,
                paths::list_query(Some(PAGE_SIZE), None)
            )
        },
        backends_reload,
    );
    view! {
        <p class="crumbs"><A href=routes::TLS_EDGES>"TLS edges"</A>" / " <span class="mono">{move || id.get()}</span></p>
        {move || render_load(edge.get(), reload, move |e: TlsEdge| view! {
            <h1>{if e.description.is_empty() { e.id.clone() } else { e.description.clone() }}</h1>
            <dl class="props card">
                <dt>"ID"</dt><dd><CopyValue value=e.id.clone() what="ID" /></dd>
                <dt>"Host:ports"</dt><dd class="mono">{e.hostports.join(", ")}</dd>
                <dt>"Created"</dt><dd>{short_time(&e.created_at)}</dd>
            </dl>
            <BackendModule edge_id=e.id.clone() module=e.backend.clone() backends=backends reload=reload />
        })}
        <NewBackendForm reload=backends_reload />
    }
}

#[component]
fn BackendModule(
    edge_id: String,
    module: Option<TlsEdgeBackend>,
    backends: RwSignal<Load<TunnelGroupBackendList>>,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let api = use_api();
    let app = use_app();
    let edge_id = StoredValue::new(edge_id);
    let backend_id = RwSignal::new(
        module
            .as_ref()
            .map(|m| m.backend.id.clone())
            .unwrap_or_default(),
    );
    let enabled = RwSignal::new(module.as_ref().is_none_or(|m| m.enabled));
    let server_error = RwSignal::new(None::<ApiError>);
    let confirm_delete = RwSignal::new(false);
    let busy = RwSignal::new(false);
    let request = Memo::new(move |_| TlsEdgeBackendReplace {
        id: None,
        enabled: Some(enabled.get()),
        backend_id: backend_id.get(),
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    // "Required" is not an error until something was chosen or sent: the picker starts empty.
    let backend_msg = Signal::derive(move || {
        let live: Vec<FieldError> = if backend_id.with(String::is_empty) {
            Vec::new()
        } else {
            live.get()
        };
        server_error.with(|s| message_for("backend_id", &live, s.as_ref()))
    });
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if !live.with(Vec::is_empty) || busy.get_untracked() {
            return;
        }
        busy.set(true);
        server_error.set(None);
        let body = request.get_untracked();
        let path = paths::tls_edge_backend(&edge_id.get_value());
        spawn_local(async move {
            let result: Result<TlsEdgeBackend, ApiError> = api.put(&path, &body).await;
            busy.try_set(false);
            match result {
                Ok(m) => {
                    app.toast(format!("Backend module set to {}.", m.backend.id), false);
                    reload.try_update(|r| *r += 1);
                }
                Err(e) => {
                    server_error.try_set(Some(e));
                }
            }
        });
    };
    let do_delete = Callback::new(move |_| {
        confirm_delete.set(false);
        let path = paths::tls_edge_backend(&edge_id.get_value());
        spawn_local(async move {
            match api.delete(&path).await {
                Ok(()) => {
                    app.toast("Backend module deleted.", false);
                    reload.try_update(|r| *r += 1);
                }
                Err(e) => {
                    server_error.try_set(Some(e));
                }
            }
        });
    });
    let has_module = module.is_some();
    let current = match &module {
        Some(m) => view! {
            <p>"Backend " <span class="mono">{m.backend.id.clone()}</span> ", "
                <strong>{if m.enabled { "enabled" } else { "disabled" }}</strong> "."</p>
        }
        .into_any(),
        None => view! { <p class="empty">"No backend module: this edge has no backend yet."</p> }
            .into_any(),
    };
    view! {
        <section class="card" aria-labelledby="module-title">
            <h2 id="module-title">"Backend module"</h2>
            {current}
            <form class="form" on:submit=save novalidate>
                <div class="field" class:invalid=move || backend_msg.with(Option::is_some)>
                    <label for="field-backend_id">"Tunnel-group backend"</label>
                    {move || match backends.get() {
                        Load::Loading => view! { <p class="loading">"Loading backends…"</p> }.into_any(),
                        Load::Failed(e) => view! { <ErrorView error=e title="Could not load backends" /> }.into_any(),
                        Load::Ready(list) => view! {
                            <select id="field-backend_id" on:change=move |ev| backend_id.set(event_target_value(&ev))>
                                <option value="" selected=move || backend_id.with(String::is_empty)>"Choose a backend…"</option>
                                {list.backends.into_iter().map(|b: TunnelGroupBackend| {
                                    let id = b.id.clone();
                                    let labels = b.labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
                                    let text = format!("{} — {}{}", b.id, if b.description.is_empty() { "no description" } else { &b.description },
                                        if labels.is_empty() { String::new() } else { format!(" [{labels}]") });
                                    view! { <option value=b.id.clone() selected=move || backend_id.with(|s| *s == id)>{text}</option> }
                                }).collect_view()}
                            </select>
                        }.into_any(),
                    }}
                    <p class="error" role="alert">{backend_msg}</p>
                </div>
                <label class="check switch">
                    <input id="field-enabled" type="checkbox" role="switch" bind:checked=enabled />
                    " Enabled (applied to traffic)"
                </label>
                {move || server_error.get().map(|e| view! { <ErrorView error=e /> })}
                <div class="actions">
                    <button type="submit" class="primary" disabled=move || busy.get() || !live.with(Vec::is_empty)>"Replace backend module"</button>
                    {has_module.then(|| view! {
                        <button type="button" class="danger" on:click=move |_| confirm_delete.set(true)>"Delete module"</button>
                    })}
                </div>
            </form>
            {move || confirm_delete.get().then(|| view! {
                <ConfirmDialog title="Delete the backend module?"
                    message=format!("Edge {} will have no backend; its traffic will not reach any tunnel.", edge_id.get_value())
                    confirm_label="Delete module" on_confirm=do_delete
                    on_cancel=Callback::new(move |_| confirm_delete.set(false)) />
            })}
        </section>
    }
}

/// Parses `key=value` pairs separated by commas.
fn parse_labels(text: &str) -> Result<BTreeMap<String, String>, String> {
    split_list(text)
        .into_iter()
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) => Ok((k.trim().to_owned(), v.trim().to_owned())),
            None => Err(format!(
                "Write each label as key=value; \u{201c}{pair}\u{201d} is not."
            )),
        })
        .collect()
}

#[component]
fn NewBackendForm(reload: RwSignal<u32>) -> impl IntoView {
    let api = use_api();
    let app = use_app();
    let description = RwSignal::new(String::new());
    let labels = RwSignal::new(String::new());
    let server_error = RwSignal::new(None::<ApiError>);
    let request = Memo::new(move |_| {
        parse_labels(&labels.get()).map(|l| TunnelGroupBackendCreate {
            description: non_empty(description.get()),
            metadata: None,
            labels: Some(l).filter(|l| !l.is_empty()),
        })
    });
    let live = Memo::new(move |_| match request.get() {
        Ok(r) => r.field_errors(),
        Err(m) => vec![FieldError::new("labels", m)],
    });
    let labels_msg = Signal::derive(move || {
        live.with(|l| {
            l.iter()
                .find(|e| e.field.starts_with("labels"))
                .map(|e| e.message.clone())
        })
        .or_else(|| server_error.with(|s| s.as_ref().and_then(|s| s.field_message("labels"))))
    });
    let desc_msg = Signal::derive(move || {
        live.with(|l| server_error.with(|s| message_for("description", l, s.as_ref())))
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let Ok(body) = request.get_untracked() else {
            return;
        };
        if !live.with_untracked(Vec::is_empty) {
            return;
        }
        spawn_local(async move {
            let result: Result<TunnelGroupBackend, ApiError> =
                api.post(paths::TUNNEL_GROUP_BACKENDS, &body).await;
            match result {
                Ok(b) => {
                    app.toast(
                        format!("Tunnel-group backend {} created; pick it above.", b.id),
                        false,
                    );
                    description.try_set(String::new());
                    labels.try_set(String::new());
                    server_error.try_set(None);
                    reload.try_update(|r| *r += 1);
                }
                Err(e) => {
                    server_error.try_set(Some(e));
                }
            }
        });
    };
    view! {
        <form class="card form" on:submit=submit novalidate aria-labelledby="new-backend-title">
            <h2 id="new-backend-title">"New tunnel-group backend"</h2>
            <TextField name="backend-description" label="Description" value=description error=desc_msg />
            <TextField name="labels" label="Labels" value=labels error=labels_msg placeholder="env=prod, app=web"
                hint="Tunnels carrying all of these labels serve this backend." />
            {move || server_error.get().map(|e| view! { <ErrorView error=e title="The backend was not created" /> })}
            <div class="actions"><button type="submit" disabled=move || !live.with(Vec::is_empty)>"Create backend"</button></div>
        </form>
    }
}
