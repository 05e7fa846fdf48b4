//! Event subscriptions: list, create and edit with sources (catalogue picker plus free entry in
//! the `<name>.v<N>` form) and destinations (picker, plus a form for a new webhook destination);
//! edits send only what changed; delete.

use super::{fetch_into, non_empty, short_time, use_api, use_id};
use crate::api::ApiError;
use crate::components::confirm::ConfirmDialog;
use crate::components::copy::CopyValue;
use crate::components::error_view::ErrorView;
use crate::components::field::{TextField, message_for};
use crate::components::list::{NameCell, PAGE_SIZE, resource_list};
use crate::components::loading::{Load, render_load};
use crate::components::names::RefName;
use crate::components::text::message;
use crate::routes;
use crate::state::use_app;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::NavigateOptions;
use leptos_router::components::A;
use leptos_router::hooks::use_navigate;
use tunnel_core::event_types::{CATALOGUE, check_form};
use tunnel_core::paths;
use tunnel_core::resources::event_destination::{
    EventDestination, EventDestinationCreate, EventDestinationList, EventTarget, WebhookTarget,
};
use tunnel_core::resources::event_subscription::{
    EventSourceReplace, EventSubscription, EventSubscriptionCreate, EventSubscriptionList as Page,
    EventSubscriptionUpdate,
};
use tunnel_core::{FieldError, Validate};

#[component]
pub fn SubscriptionList() -> impl IntoView {
    let list = resource_list::<Page, _, _>(
        paths::EVENT_SUBSCRIPTIONS,
        RwSignal::new(0),
        &["Event subscription", "Sources", "Destinations", "Created"],
        "No event subscriptions yet.",
        |s: EventSubscription| {
            view! {
                <tr data-id=s.id.clone()>
                    <NameCell href=routes::event_subscription(&s.id) name=s.description id=s.id.clone() untitled="Untitled subscription" />
                    <td>{if s.sources.is_empty() {
                        view! { <span class="muted">"None: nothing is delivered"</span> }.into_any()
                    } else {
                        view! { <ul class="inline-list">{s.sources.into_iter().map(|x| view! { <li><code>{x.event_type}</code></li> }).collect_view()}</ul> }.into_any()
                    }}</td>
                    <td><ul class="inline-list">{s.destinations.into_iter().map(|d| view! {
                        <li><RefName path=paths::event_destination(&d.id) id=d.id /></li>
                    }).collect_view()}</ul></td>
                    <td class="time">{short_time(&s.created_at)}</td>
                </tr>
            }
        },
    );
    view! {
        <div class="page-head">
            <h1>"Event subscriptions"</h1>
            <A href=routes::EVENT_SUBSCRIPTION_NEW attr:class="button primary">"New subscription"</A>
        </div>
        {list}
    }
}

/// The values of the form; the same for create and edit.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SubscriptionDraft {
    pub description: String,
    pub metadata: String,
    pub sources: Vec<String>,
    pub destination_ids: Vec<String>,
}

impl SubscriptionDraft {
    fn from(s: &EventSubscription) -> SubscriptionDraft {
        SubscriptionDraft {
            description: s.description.clone(),
            metadata: s.metadata.clone(),
            sources: s.sources.iter().map(|x| x.event_type.clone()).collect(),
            destination_ids: s.destinations.iter().map(|d| d.id.clone()).collect(),
        }
    }

    fn sources(&self) -> Vec<EventSourceReplace> {
        self.sources
            .iter()
            .map(|t| EventSourceReplace {
                event_type: t.clone(),
            })
            .collect()
    }

    pub fn create(&self) -> EventSubscriptionCreate {
        EventSubscriptionCreate {
            description: non_empty(self.description.clone()),
            metadata: non_empty(self.metadata.clone()),
            sources: Some(self.sources()),
            destination_ids: Some(self.destination_ids.clone()),
        }
    }

    /// Only the fields that differ from `before` (a partial update).
    pub fn update(&self, before: &SubscriptionDraft) -> EventSubscriptionUpdate {
        EventSubscriptionUpdate {
            id: None,
            description: (self.description != before.description).then(|| self.description.clone()),
            metadata: (self.metadata != before.metadata).then(|| self.metadata.clone()),
            sources: (self.sources != before.sources).then(|| self.sources()),
            destination_ids: (self.destination_ids != before.destination_ids)
                .then(|| self.destination_ids.clone()),
        }
    }
}

/// The shared form. `original` is `None` on create; on edit only changed fields are sent.
#[component]
fn SubscriptionForm(
    original: Option<SubscriptionDraft>,
    on_saved: Callback<EventSubscription>,
) -> impl IntoView {
    let api = use_api();
    let editing_id = StoredValue::new(None::<String>);
    let start = original.clone().unwrap_or_default();
    let original = StoredValue::new(original);
    let description = RwSignal::new(start.description.clone());
    let metadata = RwSignal::new(start.metadata.clone());
    let sources = RwSignal::new(start.sources.clone());
    let dest_ids = RwSignal::new(start.destination_ids.clone());
    let server_error = RwSignal::new(None::<ApiError>);
    let busy = RwSignal::new(false);
    // A webhook URL typed but not added yet: saving is held until it is added or cleared, so
    // nothing the user typed is silently dropped.
    let pending_url = RwSignal::new(String::new());
    let pending_error = RwSignal::new(None::<String>);
    let draft = Memo::new(move |_| SubscriptionDraft {
        description: description.get(),
        metadata: metadata.get(),
        sources: sources.get(),
        destination_ids: dest_ids.get(),
    });
    let live = Memo::new(move |_| {
        draft.with(|d| match original.get_value() {
            Some(before) => d.update(&before).field_errors(),
            None => d.create().field_errors(),
        })
    });
    let unchanged =
        move || original.with_value(|o| o.as_ref().is_some_and(|o| draft.with(|d| d == o)));
    let msg = move |field: &'static str| {
        Signal::derive(move || {
            live.with(|l| server_error.with(|s| message_for(field, l, s.as_ref())))
        })
    };
    if let Some(id) = use_context::<EditingId>() {
        editing_id.set_value(Some(id.0));
    }
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if !live.with(Vec::is_empty) || busy.get_untracked() {
            return;
        }
        if !pending_url.with_untracked(|u| u.trim().is_empty()) {
            pending_error.set(Some(
                "Add this webhook with \u{201c}Add webhook\u{201d} (or press Enter in the field), or clear the field, before saving.".to_owned(),
            ));
            focus_by_id("webhook-url");
            return;
        }
        busy.set(true);
        server_error.set(None);
        let d = draft.get_untracked();
        let before = original.get_value();
        let id = editing_id.get_value();
        spawn_local(async move {
            let result: Result<EventSubscription, ApiError> = match (before, id) {
                (Some(before), Some(id)) => {
                    api.patch(&paths::event_subscription(&id), &d.update(&before))
                        .await
                }
                _ => api.post(paths::EVENT_SUBSCRIPTIONS, &d.create()).await,
            };
            busy.try_set(false);
            match result {
                Ok(s) => {
                    server_error.try_set(None);
                    on_saved.run(s);
                }
                Err(e) => {
                    server_error.try_set(Some(e));
                }
            }
        });
    };
    let is_edit = original.with_value(Option::is_some);
    view! {
        <form class="card form" on:submit=submit novalidate>
            <TextField name="description" label="Description" value=description error=msg("description") hint="At most 255 characters." />
            <TextField name="metadata" label="Metadata" value=metadata error=msg("metadata") multiline=true hint="At most 4096 characters." />
            <SourcesPicker sources=sources live=live server_error=server_error />
            <DestinationsPicker selected=dest_ids error=msg("destination_ids") pending_url=pending_url pending_error=pending_error />
            {move || server_error.get().map(|e| view! { <ErrorView error=e title="The subscription was not saved" /> })}
            <div class="actions">
                <button type="submit" class="primary" disabled=move || busy.get() || unchanged() || !live.with(Vec::is_empty)>
                    {if is_edit { "Save changes" } else { "Create subscription" }}
                </button>
            </div>
        </form>
    }
}

/// The id of the subscription being edited, for the shared form.
#[derive(Debug, Clone)]
struct EditingId(String);

/// Sources: the chosen event types, a picker from the catalogue, and free entry.
#[component]
pub fn SourcesPicker(
    sources: RwSignal<Vec<String>>,
    #[prop(into)] live: Signal<Vec<FieldError>>,
    #[prop(into)] server_error: Signal<Option<ApiError>>,
) -> impl IntoView {
    let free = RwSignal::new(String::new());
    let free_error = move || {
        free.with(|f| {
            if f.trim().is_empty() {
                None
            } else {
                check_form(f.trim()).err()
            }
        })
    };
    let add = move |t: String| {
        if !t.is_empty() && !sources.with(|s| s.contains(&t)) {
            sources.update(|s| s.push(t));
        }
    };
    let list_error = move || {
        live.with(|l| {
            l.iter()
                .find(|e| e.field == "sources")
                .map(|e| e.message.clone())
        })
        .or_else(|| server_error.with(|s| s.as_ref().and_then(|s| s.field_message("sources"))))
    };
    let chips = move || {
        sources
            .get()
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                let field = format!("sources[{i}].type");
                let error = live.with(|l| server_error.with(|s| message_for(&field, l, s.as_ref())));
                let t2 = t.clone();
                let invalid = error.is_some();
                view! {
                    <li class="chip" class:invalid=invalid>
                        <code>{t.clone()}</code>
                        <button type="button" class="link" aria-label=format!("Remove {t}")
                            on:click=move |_| sources.update(|s| s.retain(|x| *x != t2))>"×"</button>
                        <span class="error">{error.map(|m| message(&m))}</span>
                    </li>
                }
            })
            .collect_view()
    };
    view! {
        <fieldset class="sources">
            <legend>"Sources (event types)"</legend>
            <ul class="chips">
                {chips}
            </ul>
            <p class="error" role="alert">{move || list_error().map(|m| message(&m))}</p>
            <div class="field">
                <label for="source-picker">"Add from the catalogue"</label>
                <select id="source-picker" on:change=move |ev| {
                    add(event_target_value(&ev));
                    if let Some(el) = ev.target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlSelectElement>(t).ok()) {
                        el.set_value("");
                    }
                }>
                    <option value="">"Choose an event type…"</option>
                    {CATALOGUE.iter().map(|t| view! {
                        <option value=*t disabled=move || sources.with(|s| s.iter().any(|x| x == t))>{*t}</option>
                    }).collect_view()}
                </select>
            </div>
            <div class="field">
                <label for="source-free">"Or type one"</label>
                <div class="copy-row">
                    <input id="source-free" class="mono" type="text" placeholder="ip_policy_created.v0" bind:value=free
                        on:keydown=move |ev| if ev.key() == "Enter" {
                            ev.prevent_default();
                            if free_error().is_none() { add(free.get_untracked().trim().to_owned()); free.set(String::new()); }
                        } />
                    <button type="button" disabled=move || free_error().is_some() || free.with(|f| f.trim().is_empty())
                        on:click=move |_| { add(free.get_untracked().trim().to_owned()); free.set(String::new()); }>"Add"</button>
                </div>
                <p class="error" role="alert">{move || free_error().map(|m| message(&m))}</p>
            </div>
        </fieldset>
    }
}

#[component]
fn DestinationsPicker(
    selected: RwSignal<Vec<String>>,
    #[prop(into)] error: Signal<Option<String>>,
    pending_url: RwSignal<String>,
    pending_error: RwSignal<Option<String>>,
) -> impl IntoView {
    let reload = RwSignal::new(0);
    let list = fetch_into::<EventDestinationList>(
        move || {
            format!(
                "{}{}",
                paths::EVENT_DESTINATIONS,
                paths::list_query(Some(PAGE_SIZE), None)
            )
        },
        reload,
    );
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
    let api = use_api();
    let app = use_app();
    let server_error = RwSignal::new(None::<ApiError>);
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
    let error = move || {
        if url.with(String::is_empty) {
            return None;
        }
        live.with(|l| server_error.with(|s| message_for("target.webhook.url", l, s.as_ref())))
            .or_else(|| pending_error.get())
    };
    let busy = RwSignal::new(false);
    let can_add =
        move || !url.with(|u| u.trim().is_empty()) && live.with(Vec::is_empty) && !busy.get();
    let create = move || {
        if !can_add() {
            return;
        }
        busy.set(true);
        server_error.set(None);
        let body = request.get_untracked();
        spawn_local(async move {
            let result: Result<EventDestination, ApiError> =
                api.post(paths::EVENT_DESTINATIONS, &body).await;
            busy.try_set(false);
            match result {
                Ok(d) => {
                    app.toast(
                        format!("Webhook destination {} created and selected.", d.id),
                        false,
                    );
                    url.try_set(String::new());
                    server_error.try_set(None);
                    pending_error.try_set(None);
                    on_created.run(d);
                }
                Err(e) => {
                    server_error.try_set(Some(e));
                }
            }
        });
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
                        create();
                    } />
                <button type="button" disabled=move || !can_add() on:click=move |_| create()>
                    {move || if busy.get() { "Adding…" } else { "Add webhook" }}
                </button>
            </div>
            <p class="error" id="webhook-url-error" role="alert">{move || error().map(|m| message(&m))}</p>
            {move || server_error.get().filter(|e| !e.has_field_errors()).map(|e| view! { <ErrorView error=e /> })}
        </div>
    }
}

/// Moves focus to the element with this id (a field the user must look at).
fn focus_by_id(id: &str) {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
        .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok())
    {
        let _ = el.focus();
    }
}

#[component]
pub fn SubscriptionNew() -> impl IntoView {
    let app = use_app();
    let navigate = use_navigate();
    let on_saved = Callback::new(move |s: EventSubscription| {
        app.toast(format!("Event subscription {} created.", s.id), false);
        navigate(
            &routes::event_subscription(&s.id),
            NavigateOptions::default(),
        );
    });
    view! {
        <p class="crumbs"><A href=routes::EVENT_SUBSCRIPTIONS>"Event subscriptions"</A>" / new"</p>
        <h1>"New event subscription"</h1>
        <SubscriptionForm original=None on_saved=on_saved />
    }
}

#[component]
pub fn SubscriptionDetail() -> impl IntoView {
    let id = use_id();
    let reload = RwSignal::new(0);
    let sub = fetch_into::<EventSubscription>(move || paths::event_subscription(&id.get()), reload);
    view! {
        <p class="crumbs"><A href=routes::EVENT_SUBSCRIPTIONS>"Event subscriptions"</A>" / " <span class="mono">{move || id.get()}</span></p>
        {move || render_load(sub.get(), reload, move |s: EventSubscription| view! { <SubscriptionView sub=s reload=reload /> })}
    }
}

#[component]
fn SubscriptionView(sub: EventSubscription, reload: RwSignal<u32>) -> impl IntoView {
    let api = use_api();
    let app = use_app();
    let navigate = use_navigate();
    let confirm_delete = RwSignal::new(false);
    let delete_error = RwSignal::new(None::<ApiError>);
    provide_context(EditingId(sub.id.clone()));
    let id = StoredValue::new(sub.id.clone());
    let on_saved = Callback::new(move |_| {
        app.toast("Event subscription saved.", false);
        reload.update(|r| *r += 1);
    });
    let do_delete = Callback::new(move |_| {
        confirm_delete.set(false);
        let navigate = navigate.clone();
        let id = id.get_value();
        spawn_local(async move {
            match api.delete(&paths::event_subscription(&id)).await {
                Ok(()) => {
                    app.toast(format!("Event subscription {id} deleted."), false);
                    navigate(routes::EVENT_SUBSCRIPTIONS, NavigateOptions::default());
                }
                Err(e) => {
                    delete_error.try_set(Some(e));
                }
            }
        });
    });
    view! {
        <div class="page-head">
            <h1>{if sub.description.is_empty() { "Event subscription".to_owned() } else { sub.description.clone() }}</h1>
            <button type="button" class="danger" on:click=move |_| confirm_delete.set(true)>"Delete"</button>
        </div>
        {move || delete_error.get().map(|e| view! { <ErrorView error=e title="The subscription was not deleted" /> })}
        <dl class="props card">
            <dt>"ID"</dt><dd><CopyValue value=sub.id.clone() what="ID" /></dd>
            <dt>"URI"</dt><dd><CopyValue value=sub.uri.clone() what="URI" /></dd>
            <dt>"Created"</dt><dd>{short_time(&sub.created_at)}</dd>
            <dt>"Sources"</dt><dd><ul class="acl-list">{sub.sources.iter().map(|s| view! { <li><code>{s.event_type.clone()}</code></li> }).collect_view()}</ul></dd>
            <dt>"Destinations"</dt><dd><ul class="acl-list">{sub.destinations.iter().map(|d| view! { <li><code>{d.id.clone()}</code></li> }).collect_view()}</ul></dd>
        </dl>
        <h2>"Edit"</h2>
        <p class="hint">"Only the fields you change are sent; the others stay as they are."</p>
        <SubscriptionForm original=Some(SubscriptionDraft::from(&sub)) on_saved=on_saved />
        {move || confirm_delete.get().then(|| view! {
            <ConfirmDialog title="Delete this subscription?"
                message=format!("Event subscription {} will be deleted; its destinations are kept.", id.get_value())
                confirm_label="Delete subscription" on_confirm=do_delete
                on_cancel=Callback::new(move |_| confirm_delete.set(false)) />
        })}
    }
}
