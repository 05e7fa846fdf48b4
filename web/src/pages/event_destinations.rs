//! Event destinations (`docs/api/event_destinations.md`), as the event subscription form uses
//! them: the picker of existing destinations, and an inline form that creates a webhook
//! destination and selects it.

use crate::components::error_view::ErrorView;
use crate::components::field::message_for;
use crate::components::list::first_page;
use crate::components::loading::{Load, fetch_into};
use crate::components::submit::Submit;
use crate::components::text::message;
use crate::state::use_app;
use leptos::prelude::*;
use tunnel_core::Validate;
use tunnel_core::paths;
use tunnel_core::resources::event_destination::{
    EventDestination, EventDestinationCreate, EventDestinationList, EventTarget, WebhookTarget,
};

/// Destinations: a checkbox per existing destination (the first page), and a new webhook.
/// `pending_url` is the webhook URL typed but not added yet, which the subscription form checks
/// before saving.
#[component]
pub fn DestinationsPicker(
    selected: RwSignal<Vec<String>>,
    #[prop(into)] error: Signal<Option<String>>,
    pending_url: RwSignal<String>,
    pending_error: RwSignal<Option<String>>,
) -> impl IntoView {
    let reload = RwSignal::new(0);
    let list = fetch_into::<EventDestinationList>(|| first_page(paths::EVENT_DESTINATIONS), reload);
    let on_created = Callback::new(move |d: EventDestination| {
        selected.update(|s| s.push(d.id));
        reload.update(|r| *r += 1);
    });
    view! {
        <fieldset class="destinations">
            <legend>"Destinations"</legend>
            {move || match list.get() {
                Load::Loading => view! { <p class="loading">"Loading destinations…"</p> }.into_any(),
                Load::Failed(e) => view! { <ErrorView error=e title="Could not load destinations" /> }.into_any(),
                Load::Ready(l) if l.event_destinations.is_empty() => view! {
                    <p class="empty">"No event destinations yet; add a webhook below."</p>
                }.into_any(),
                Load::Ready(l) => view! {
                    <ul class="checks">
                        {l.event_destinations.into_iter().map(|d| {
                            let id = d.id.clone();
                            let id2 = d.id.clone();
                            let url = d.target.webhook.map(|w| w.url).unwrap_or_default();
                            view! {
                                <li><label class="check">
                                    <input type="checkbox" prop:checked=move || selected.with(|s| s.contains(&id))
                                        on:change=move |ev| {
                                            let on = event_target_checked(&ev);
                                            selected.update(|s| { s.retain(|x| *x != id2); if on { s.push(id2.clone()) } });
                                        } />
                                    " " <span class="mono">{d.id.clone()}</span> " " {url}
                                </label></li>
                            }
                        }).collect_view()}
                    </ul>
                }.into_any(),
            }}
            <p class="error" role="alert">{move || error.get().map(|m| message(&m))}</p>
            <NewWebhook on_created=on_created url=pending_url pending_error=pending_error />
        </fieldset>
    }
}

/// A small inline form for a webhook destination (not a nested `<form>`: it lives in one).
/// Enter in its field adds the webhook; it never submits the subscription form around it.
#[component]
fn NewWebhook(
    on_created: Callback<EventDestination>,
    url: RwSignal<String>,
    /// Set by the subscription form when it was saved with a URL still in this field.
    pending_error: RwSignal<Option<String>>,
) -> impl IntoView {
    let app = use_app();
    let request = Memo::new(move |_| EventDestinationCreate {
        description: None,
        metadata: None,
        format: Some("json".to_owned()),
        target: EventTarget {
            webhook: Some(WebhookTarget {
                url: url.get().trim().to_owned(),
            }),
        },
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    let create = Submit::post(paths::EVENT_DESTINATIONS, move |d: &EventDestination| {
        app.toast(
            format!("Webhook destination {} created and selected.", d.id),
            false,
        );
        url.try_set(String::new());
        pending_error.try_set(None);
        on_created.run(d.clone());
    });
    let can_add =
        move || !url.with(|u| u.trim().is_empty()) && live.with(Vec::is_empty) && !create.busy();
    let add = move || {
        if can_add() {
            create.send(request.get_untracked());
        }
    };
    let error = move || {
        if url.with(String::is_empty) {
            return None;
        }
        let server = create.error();
        live.with(|l| message_for("target.webhook.url", l, server.as_ref()))
            .or_else(|| pending_error.get())
    };
    view! {
        <div class="field new-webhook">
            <label for="webhook-url">"New webhook destination URL"</label>
            <div class="copy-row">
                <input id="webhook-url" type="url" class="mono" placeholder="https://example.com/hooks/tunnel" bind:value=url
                    aria-invalid=move || error().is_some().to_string() aria-describedby="webhook-url-error"
                    on:input=move |_| pending_error.set(None)
                    on:keydown=move |ev| if ev.key() == "Enter" {
                        ev.prevent_default();
                        add();
                    } />
                <button type="button" disabled=move || !can_add() on:click=move |_| add()>
                    {move || if create.busy() { "Adding…" } else { "Add webhook" }}
                </button>
            </div>
            <p class="error" id="webhook-url-error" role="alert">{move || error().map(|m| message(&m))}</p>
            {move || create.error().filter(|e| !e.has_field_errors()).map(|e| view! { <ErrorView error=e /> })}
        </div>
    }
}
