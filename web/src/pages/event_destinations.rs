//! Event destinations (`docs/api/event_destinations.md`): the list, create (the signing secret
//! shown once), and the detail page: edit (description, metadata, webhook URL), rotate the
//! signing secret (shown once), send a test event and see its attempt, the deliveries with their
//! attempts, delete (a 409 says which subscription still uses it). And as the event
//! subscription form uses them: the picker of existing destinations, and an inline form that
//! creates a webhook destination and selects it.

use super::{detail_page, identity_props, non_empty};
use crate::components::confirm::{ConfirmDialog, ConfirmedDelete};
use crate::components::copy::CopyValue;
use crate::components::error_view::ErrorView;
use crate::components::field::{TextField, message_for};
use crate::components::list::{ListPage, RowName};
use crate::components::loading::{LoadWords, fetch_into, render_load_as};
use crate::components::picker::PickerSearch;
use crate::components::submit::Submit;
use crate::components::text::message;
use crate::components::time::RelativeTime;
use crate::components::token_dialog::{ShowSecret, ShownOnce};
use crate::components::{focus_by_id, keep_focus_on, use_open_created};
use crate::routes;
use crate::state::use_app;
use leptos::prelude::*;
use leptos_router::components::A;
use tunnel_core::Validate;
use tunnel_core::paths;
use tunnel_core::resources::event_destination::{
    DeliveryAttempt, DeliveryState, DestinationTest, EventDelivery, EventDeliveryList,
    EventDestination, EventDestinationCreate, EventDestinationList, EventDestinationUpdate,
    EventTarget,
};

/// The webhook URL of a destination (empty for another kind of target).
fn webhook_url(d: &EventDestination) -> String {
    d.target
        .webhook
        .as_ref()
        .map(|w| w.url.clone())
        .unwrap_or_default()
}

/// A create request from the form's values; also how an edit is checked, as an update allows
/// the same values.
fn create_request(description: String, metadata: String, url: String) -> EventDestinationCreate {
    EventDestinationCreate {
        description: non_empty(description),
        metadata: non_empty(metadata),
        format: Some("json".to_owned()),
        target: EventTarget::webhook(url.trim()),
    }
}

#[component]
pub fn EventDestinationList() -> impl IntoView {
    ListPage::new(paths::EVENT_DESTINATIONS, routes::event_destination)
        .search("Search destinations")
        .noun("event destination", "event destinations")
        .export("event-destinations")
        .title("Event destinations")
        .create(routes::EVENT_DESTINATION_NEW, "New destination")
        .lead("Where event subscriptions send events: webhooks, each signed with its own secret.")
        .columns(&["Destination", "Webhook URL", "Created"])
        .empty("No event destinations yet.")
        .untitled("Untitled destination")
        .rows::<EventDestinationList, _, _>(|d: EventDestination| {
            let url = webhook_url(&d);
            let cells = view! {
                <td><code class="value">{url}</code></td>
                <td><RelativeTime ts=d.created_at.clone() /></td>
            };
            (RowName::new(d.id, d.description), cells)
        })
}

/// The fields of a destination (create and edit share them).
#[component]
fn DestinationFields(
    url: RwSignal<String>,
    description: RwSignal<String>,
    metadata: RwSignal<String>,
    message: impl Fn(&'static str) -> Signal<Option<String>>,
    /// Whether the user tried to send the form (an empty URL is then said too).
    #[prop(into)]
    tried: Signal<bool>,
) -> impl IntoView {
    // An empty URL is not an error before anything was typed (the form just opened, or it was
    // cleared), until the user tries to send the form: the field says it is required.
    let url_message = message("target.webhook.url");
    let url_error = Signal::derive(move || {
        url_message
            .get()
            .filter(|_| tried.get() || !url.with(|u| u.trim().is_empty()))
    });
    view! {
        <TextField name="url" label="Webhook URL" value=url error=url_error
            placeholder="https://example.com/hooks/tunnel" hint="Required. Events are POSTed here as JSON." />
        <TextField name="description" label="Description" value=description error=message("description") />
        <TextField name="metadata" label="Metadata" value=metadata error=message("metadata") multiline=true />
    }
}

#[component]
pub fn EventDestinationNew() -> impl IntoView {
    let app = use_app();
    let open_created = use_open_created();
    let (url, description, metadata) = (
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
    );
    let request = Memo::new(move |_| create_request(description.get(), metadata.get(), url.get()));
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    // The secret is shown once; closing its dialog goes on to the new destination's page.
    let secrets = ShowSecret::use_it();
    let create = Submit::post(paths::EVENT_DESTINATIONS, move |d: &EventDestination| {
        app.toast(format!("Event destination {} created.", d.id), false);
        let (open_created, href) = (open_created.clone(), routes::event_destination(&d.id));
        if let Some(secret) = d.signing_secret.clone() {
            secrets.show(ShownOnce::SigningSecret, secret, move || {
                open_created(&href)
            });
        }
    });
    let valid = move || live.with(Vec::is_empty);
    // Create stays enabled (a disabled default button ignores Enter, and Tab skips it): sending
    // an invalid form says what is missing at its field, and puts the focus there.
    let tried = RwSignal::new(false);
    let ready = move || {
        if valid() {
            return Some(request.get_untracked());
        }
        tried.set(true);
        let first = live.with(|l| l.first().map(|e| e.field.clone()));
        focus_by_id(match first.as_deref() {
            Some("description") => "field-description",
            Some("metadata") => "field-metadata",
            _ => "field-url",
        });
        None
    };
    view! {
        <p class="crumbs"><A href=routes::EVENT_DESTINATIONS exact=true>"Event destinations"</A>" / new"</p>
        <h1>"New event destination"</h1>
        <form class="card form" novalidate on:submit=create.on_submit(ready)>
            <DestinationFields url=url description=description metadata=metadata
                message=move |f| create.message(live, f) tried=tried />
            {create.failure("The destination was not created")}
            <div class="actions">
                <A href=routes::EVENT_DESTINATIONS attr:class="button">"Cancel"</A>
                <button type="submit" class="primary" aria-disabled=move || create.busy().to_string()>
                    {move || if create.busy() { "Creating…" } else { "Create destination" }}
                </button>
            </div>
        </form>
    }
}

#[component]
pub fn EventDestinationDetail() -> impl IntoView {
    detail_page(
        routes::EVENT_DESTINATIONS,
        "Event destinations",
        paths::event_destination,
        destination_view,
    )
}

/// A loaded destination: its properties, the signing secret, the test, the edit form, the
/// deliveries and delete.
fn destination_view(d: EventDestination, reload: RwSignal<u32>) -> impl IntoView {
    let id = d.id.clone();
    let path = paths::event_destination(&id);
    let url = webhook_url(&d);
    let title = if d.description.is_empty() {
        "Event destination".to_owned()
    } else {
        d.description.clone()
    };
    let delete = ConfirmedDelete::back_to_list(
        path,
        format!("Event destination {id} deleted."),
        routes::EVENT_DESTINATIONS,
    );
    let in_use = move || delete.error().is_some_and(|e| e.status == 409);
    let deliveries_reload = RwSignal::new(0);
    view! {
        <div class="page-head">
            <h1>{title}</h1>
            {delete.button("Delete")}
        </div>
        {delete.failure("The destination was not deleted")}
        <Show when=in_use>
            <p class="note">"A subscription still sends to this destination: remove it from that subscription (or delete the subscription) first."</p>
        </Show>
        <dl class="props card">
            {identity_props(d.id.clone(), d.uri.clone(), &d.created_at)}
            <dt>"Webhook URL"</dt><dd><CopyValue value=url what="webhook URL" /></dd>
            <dt>"Format"</dt><dd>{d.format.clone()}</dd>
        </dl>
        <SigningSecret id=id.clone() reload=reload />
        <TestEvent id=id.clone() deliveries_reload=deliveries_reload />
        <DestinationEdit original=d reload=reload />
        <Deliveries id=id.clone() reload=deliveries_reload />
        {delete.dialog(
            "Delete this destination?",
            format!("Event destination {id} will be deleted and receive no more events. A destination that a subscription still uses cannot be deleted."),
            "Delete destination",
        )}
    }
}

/// Rotating the signing secret: a confirmation, then the new secret shown once.
#[component]
fn SigningSecret(id: String, reload: RwSignal<u32>) -> impl IntoView {
    let app = use_app();
    let asked = RwSignal::new(false);
    // The dialog's opener was the page itself: "Rotate secret" is disabled while the request
    // runs, which took the focus from it. Once the secret is put away, the page is read again,
    // so its recent activity shows the rotation.
    let secrets = ShowSecret::use_it();
    let rotate = Submit::post(
        paths::event_destination_rotate_secret(&id),
        move |d: &EventDestination| {
            app.toast("Signing secret rotated.", false);
            if let Some(secret) = d.signing_secret.clone() {
                secrets.show(ShownOnce::SigningSecret, secret, move || {
                    keep_focus_on("#rotate-secret");
                    reload.try_update(|r| *r += 1);
                });
            }
        },
    );
    let confirm = Callback::new(move |_| {
        asked.set(false);
        rotate.send(serde_json::json!({}));
    });
    let cancel = Callback::new(move |_| asked.set(false));
    view! {
        <section class="card" aria-labelledby="secret-title">
            <h2 id="secret-title">"Signing secret"</h2>
            <p class="hint">"Every webhook is signed with this destination's secret, so the receiver can check that it came from here. The secret is shown only once: when the destination is created and when it is rotated."</p>
            {rotate.failure("The secret was not rotated")}
            <div class="actions">
                <button type="button" id="rotate-secret" aria-disabled=move || rotate.busy().to_string()
                    on:click=move |_| if !rotate.busy() { asked.set(true) }>
                    {move || if rotate.busy() { "Rotating…" } else { "Rotate secret" }}
                </button>
            </div>
        </section>
        {move || asked.get().then(|| view! {
            <ConfirmDialog title="Rotate the signing secret?"
                message="A new secret signs the webhooks from now on. The old one keeps signing for a day as well, so your receiver has time to switch."
                confirm_label="Rotate secret" on_confirm=confirm on_cancel=cancel safe=true />
        })}
    }
}

/// "Send test event": a `ping.v0` sent at once, and how the receiver answered.
#[component]
fn TestEvent(id: String, deliveries_reload: RwSignal<u32>) -> impl IntoView {
    let result = RwSignal::new(None::<DestinationTest>);
    let test = Submit::post(
        paths::event_destination_test(&id),
        move |t: &DestinationTest| {
            result.try_set(Some(t.clone()));
            deliveries_reload.try_update(|r| *r += 1);
        },
    );
    view! {
        <section class="card" aria-labelledby="test-title">
            <div class="page-head">
                <h2 id="test-title">"Test"</h2>
                <button type="button" id="send-test" aria-disabled=move || test.busy().to_string()
                    on:click=move |_| {
                        // `aria-disabled` while it sends, so it keeps the focus; a click then
                        // does nothing.
                        if !test.busy() {
                            result.set(None);
                            test.send(serde_json::json!({}));
                        }
                    }>
                    {move || if test.busy() { "Sending…" } else { "Send test event" }}
                </button>
            </div>
            <p class="hint">"Sends a " <code>"ping.v0"</code> " event now and shows how the receiver answered."</p>
            {test.failure("The test event was not sent")}
            <div class="test-result" role="status" aria-live="polite">
                {move || result.get().map(|t| view! {
                    <p>"Event " <code class="id">{t.event_id.clone()}</code></p>
                    {attempt_view(t.attempt)}
                })}
            </div>
        </section>
    }
}

/// One attempt: its outcome (the status, or the error), when, how long it took, and the first
/// bytes of what the receiver answered.
fn attempt_view(a: DeliveryAttempt) -> impl IntoView {
    let ok = a.status_code.is_some_and(|s| (200..300).contains(&s));
    let outcome = match (a.status_code, &a.error) {
        (Some(status), _) => format!("HTTP {status}"),
        (None, Some(_)) => "No answer".to_owned(),
        (None, None) => "No answer".to_owned(),
    };
    let body = a
        .response_body
        .filter(|b| !b.is_empty())
        .map(|b| truncate(&b, 300));
    view! {
        <div class="attempt">
            <span class=if ok { "status ok" } else { "status failed" }>{outcome}</span>
            " · " <RelativeTime ts=a.attempted_at.clone() />
            " · " <span class="latency">{format!("{} ms", a.latency_ms)}</span>
            {a.error.map(|e| view! { <p class="error">{e}</p> })}
            // It may scroll (max-height), so it takes focus, for keyboard users.
            {body.map(|b| view! { <pre class="response-body" tabindex="0" role="region" aria-label="Response body">{b}</pre> })}
        </div>
    }
}

/// At most `max` characters of `text`, with "…" when cut.
fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// The edit form: description, metadata and the webhook URL; only what changed is sent.
#[component]
fn DestinationEdit(original: EventDestination, reload: RwSignal<u32>) -> impl IntoView {
    let app = use_app();
    let url = RwSignal::new(webhook_url(&original));
    let description = RwSignal::new(original.description.clone());
    let metadata = RwSignal::new(original.metadata.clone());
    let path = paths::event_destination(&original.id);
    let original = StoredValue::new(original);
    let request = Memo::new(move |_| {
        original.with_value(|o| {
            let new_url = url.get().trim().to_owned();
            EventDestinationUpdate {
                id: None,
                description: Some(description.get()).filter(|d| *d != o.description),
                metadata: Some(metadata.get()).filter(|m| *m != o.metadata),
                format: None,
                target: (new_url != webhook_url(o)).then(|| EventTarget::webhook(new_url)),
            }
        })
    });
    // An update allows what a create allows: checked as one.
    let live = Memo::new(move |_| {
        create_request(description.get(), metadata.get(), url.get()).field_errors()
    });
    let unchanged = move || request.with(|r| *r == EventDestinationUpdate::default());
    let save = Submit::patch(path, reload, move |_: &EventDestination| {
        app.toast("Event destination saved.", false);
        reload.try_update(|r| *r += 1);
        // As on the SSH CA page: the disabled "Save changes" hands the focus to the form.
        keep_focus_on("form[aria-label='Edit destination'] input");
    });
    let valid = move || live.with(Vec::is_empty);
    view! {
        <form class="card form" novalidate aria-label="Edit destination"
            on:submit=save.on_submit(move || (valid() && !unchanged()).then(|| request.get_untracked()))>
            <h2>"Edit"</h2>
            <DestinationFields url=url description=description metadata=metadata
                message=move |f| save.message(live, f) tried=Signal::stored(true) />
            {save.failure("The destination was not saved")}
            <div class="actions">
                <button type="submit" class="primary" disabled=move || unchanged() || !valid() aria-disabled=move || save.busy().to_string()>
                    {move || if save.busy() { "Saving…" } else { "Save changes" }}
                </button>
            </div>
        </form>
    }
}

/// The destination's deliveries, newest first, each with its attempts (newest first), paged
/// like every list; each links to the event it delivered.
#[component]
fn Deliveries(id: String, reload: RwSignal<u32>) -> impl IntoView {
    let path = Signal::stored(paths::event_destination_deliveries(&id));
    let list = ListPage::at(path, routes::activity_event)
        .columns(&["Event", "State", "Created", "Attempts"])
        .empty("No deliveries yet: events arrive here once a subscription sends them to this destination.")
        .untitled("Event")
        .reload(reload)
        .rows::<EventDeliveryList, _, _>(|d: EventDelivery| {
            let state = match d.state {
                DeliveryState::Pending => "pending",
                DeliveryState::Succeeded => "succeeded",
                DeliveryState::Failed => "failed",
            };
            let next = d.next_attempt_at.clone();
            let cells = view! {
                <td><span class=format!("state {state}")>{state}</span>
                    {next.map(|n| view! { <span class="hint">" next attempt " <RelativeTime ts=n /></span> })}</td>
                <td><RelativeTime ts=d.created_at.clone() /></td>
                <td>
                    {if d.attempts.is_empty() {
                        view! { <span class="muted">"None yet"</span> }.into_any()
                    } else {
                        view! { <ol class="attempts">{d.attempts.into_iter().map(|a| view! { <li>{attempt_view(a)}</li> }).collect_view()}</ol> }.into_any()
                    }}
                </td>
            };
            (RowName::new(d.event_id, d.event_type), cells)
        });
    view! {
        <section class="deliveries" aria-labelledby="deliveries-title">
            <div class="page-head">
                <h2 id="deliveries-title">"Deliveries"</h2>
                <button type="button" on:click=move |_| reload.update(|r| *r += 1)>"Refresh"</button>
            </div>
            {list}
        </section>
    }
}

/// Destinations: a checkbox per existing destination (the first page, or the first page of what
/// the search finds; chosen ones stay listed when the search leaves them out), and a new
/// webhook.
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
    let search = PickerSearch::new();
    let list = fetch_into::<EventDestinationList>(
        move || search.first_page(paths::EVENT_DESTINATIONS),
        reload,
    );
    let on_created = Callback::new(move |d: EventDestination| {
        selected.update(|s| s.push(d.id));
        reload.update(|r| *r += 1);
    });
    view! {
        <fieldset class="destinations">
            <legend>"Destinations"</legend>
            {search.field("destination-search", "Find destinations by id, description or URL")}
            {move || render_load_as(list.get(), reload, &DESTINATIONS_LOAD, move |l| destination_checks(selected, search.searching(), l))}
            <p class="error" role="alert">{move || error.get().map(|m| message(&m))}</p>
            <NewWebhook on_created=on_created url=pending_url pending_error=pending_error />
        </fieldset>
    }
}

/// The destinations picker's load.
const DESTINATIONS_LOAD: LoadWords = LoadWords {
    loading: "Loading destinations…",
    failed: "Could not load destinations",
    refocus: Some("#destination-search"),
};

/// The picker's checkboxes for one page of destinations (`searching`: the page is what a search
/// found, so an empty one is no match rather than no destination at all).
fn destination_checks(
    selected: RwSignal<Vec<String>>,
    searching: bool,
    l: EventDestinationList,
) -> AnyView {
    if l.event_destinations.is_empty() && !searching {
        return view! { <p class="empty">"No event destinations yet; add a webhook below."</p> }
            .into_any();
    }
    let shown: Vec<String> = l.event_destinations.iter().map(|d| d.id.clone()).collect();
    // Chosen before the search changed: still listed, so they can be unticked.
    let kept: Vec<(String, String)> = selected
        .get_untracked()
        .into_iter()
        .filter(|id| !shown.contains(id))
        .map(|id| (id, String::new()))
        .collect();
    let found: Vec<(String, String)> = l
        .event_destinations
        .into_iter()
        .map(|d| (d.id, d.target.webhook.map(|w| w.url).unwrap_or_default()))
        .collect();
    let nothing = found
        .is_empty()
        .then(|| view! { <p class="hint">"No destination matches the search."</p> });
    view! {
        <ul class="checks">
            {kept.into_iter().chain(found).map(|(id, url)| destination_check(selected, id, url)).collect_view()}
        </ul>
        {nothing}
    }
    .into_any()
}

/// One destination's checkbox in the picker.
fn destination_check(selected: RwSignal<Vec<String>>, id: String, url: String) -> impl IntoView {
    let (checked_id, changed_id) = (id.clone(), id.clone());
    view! {
        <li><label class="check">
            <input type="checkbox" prop:checked=move || selected.with(|s| s.contains(&checked_id))
                on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    selected.update(|s| { s.retain(|x| *x != changed_id); if on { s.push(changed_id.clone()) } });
                } />
            " " <span class="mono">{id}</span> " " {url}
        </label></li>
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
        target: EventTarget::webhook(url.get().trim()),
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    // The new destination's signing secret, shown once over the subscription form.
    let secrets = ShowSecret::use_it();
    let create = Submit::post(paths::EVENT_DESTINATIONS, move |d: &EventDestination| {
        app.toast(
            format!("Webhook destination {} created and selected.", d.id),
            false,
        );
        if let Some(secret) = d.signing_secret.clone() {
            secrets.show(ShownOnce::SigningSecret, secret, || {});
        }
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
