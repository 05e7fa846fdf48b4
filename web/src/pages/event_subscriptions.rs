//! Event subscriptions (`docs/api/event_subscriptions.md`): list, create and edit with sources
//! (catalogue picker plus free entry in the `<name>.v<N>` form) and destinations (see
//! [`super::event_destinations`]); edits send only what changed; delete. A subscription without
//! sources is valid (the API sets no minimum): the form and the detail page say calmly that it
//! delivers nothing yet, rather than refusing it.

use super::event_destinations::DestinationsPicker;
use super::{detail_page, identity_props, non_empty, title_or};
use crate::api::{ApiError, Method, use_api};
use crate::components::bulk::BulkAction;
use crate::components::confirm::ConfirmedDelete;
use crate::components::field::{TextField, message_for};
use crate::components::list::{ListPage, RowName};
use crate::components::names::RefName;
use crate::components::submit::Submit;
use crate::components::text::message;
use crate::components::time::RelativeTime;
use crate::components::{focus_by_id, keep_focus_on, use_open_created};
use crate::routes;
use crate::state::use_app;
use leptos::prelude::*;
use leptos_router::components::A;
use tunnel_core::event_types::{CATALOGUE, check_form};
use tunnel_core::paths;
use tunnel_core::resources::event_subscription::{
    EventSourceReplace, EventSubscription, EventSubscriptionCreate, EventSubscriptionList as Page,
    EventSubscriptionUpdate,
};
use tunnel_core::{FieldError, Validate};

/// Shown on the form and the detail page of a subscription without sources: not an error.
pub const NO_SOURCES: &str = "No event types yet: nothing is delivered until you add one.";

/// What the list does to selected rows.
const BULK: &[BulkAction] = &[BulkAction::delete(
    paths::event_subscription,
    "will be deleted: the events they chose are no longer delivered. This cannot be undone.",
)];

#[component]
pub fn EventSubscriptionList() -> impl IntoView {
    ListPage::new(paths::EVENT_SUBSCRIPTIONS, routes::event_subscription)
        .search("Search subscriptions")
        .noun("event subscription", "event subscriptions")
        .bulk(BULK)
        .export("event-subscriptions")
        .title("Event subscriptions")
        .create(routes::EVENT_SUBSCRIPTION_NEW, "New subscription")
        .columns(&["Event subscription", "Sources", "Destinations", "Created"])
        .empty("No event subscriptions yet.")
        .untitled("Untitled subscription")
        .rows::<Page, _, _>(|s: EventSubscription| {
            let sources = if s.sources.is_empty() {
                view! { <span class="muted">"None: nothing is delivered"</span> }.into_any()
            } else {
                view! { <ul class="inline-list">{s.sources.into_iter().map(|x| view! { <li><code>{x.event_type}</code></li> }).collect_view()}</ul> }.into_any()
            };
            let cells = view! {
                <td>{sources}</td>
                <td><ul class="inline-list">{s.destinations.into_iter().map(|d| view! {
                    <li><RefName path=paths::event_destination(&d.id) id=d.id /></li>
                }).collect_view()}</ul></td>
                <td><RelativeTime ts=s.created_at.clone() /></td>
            };
            (RowName::new(s.id, s.description), cells)
        })
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

/// The shared form. `original` is `None` on create; on edit it is the subscription's id and
/// values, and only changed fields are sent.
#[component]
fn SubscriptionForm(
    original: Option<(String, SubscriptionDraft)>,
    on_saved: Callback<EventSubscription>,
    /// The detail page's reload, when editing: a save answered 404 (deleted meanwhile) fetches
    /// the subscription again, and the page says it is gone.
    #[prop(optional)]
    reload: Option<RwSignal<u32>>,
) -> impl IntoView {
    let api = use_api();
    let is_edit = original.is_some();
    let start = original.clone().map(|(_, d)| d).unwrap_or_default();
    let original = StoredValue::new(original);
    let description = RwSignal::new(start.description.clone());
    let metadata = RwSignal::new(start.metadata.clone());
    let sources = RwSignal::new(start.sources.clone());
    let dest_ids = RwSignal::new(start.destination_ids.clone());
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
            Some((_, before)) => d.update(&before).field_errors(),
            None => d.create().field_errors(),
        })
    });
    let unchanged =
        move || original.with_value(|o| o.as_ref().is_some_and(|(_, o)| draft.with(|d| d == o)));
    let save = Submit::new(
        move |d: &SubscriptionDraft| {
            let d = d.clone();
            let original = original.get_value();
            async move {
                match original {
                    Some((id, before)) => {
                        let path = paths::event_subscription(&id);
                        api.send_json(Method::PATCH, &path, &d.update(&before))
                            .await
                    }
                    None => {
                        let path = paths::EVENT_SUBSCRIPTIONS;
                        api.send_json(Method::POST, path, &d.create()).await
                    }
                }
            }
        },
        move |s: &EventSubscription| on_saved.run(s.clone()),
    );
    let save = match reload {
        Some(reload) => save.reload_when_gone(reload),
        None => save,
    };
    let ready = move || {
        if !live.with(Vec::is_empty) {
            return None;
        }
        if !pending_url.with_untracked(|u| u.trim().is_empty()) {
            pending_error.set(Some(
                "Add this webhook with \u{201c}Add webhook\u{201d} (or press Enter in the field), or clear the field, before saving.".to_owned(),
            ));
            focus_by_id("webhook-url");
            return None;
        }
        Some(draft.get_untracked())
    };
    view! {
        <form class="card form" on:submit=save.on_submit(ready) novalidate>
            <TextField name="description" label="Description" value=description error=save.message(live, "description") hint="At most 255 characters." />
            <TextField name="metadata" label="Metadata" value=metadata error=save.message(live, "metadata") multiline=true hint="At most 4096 characters." />
            <SourcesPicker sources=sources live=live server_error=save.error_signal() />
            <DestinationsPicker selected=dest_ids error=save.message(live, "destination_ids") pending_url=pending_url pending_error=pending_error />
            {save.failure("The subscription was not saved")}
            <div class="actions">
                <button type="submit" class="primary" disabled=move || unchanged() || !live.with(Vec::is_empty) aria-disabled=move || save.busy().to_string()>
                    {if is_edit { "Save changes" } else { "Create subscription" }}
                </button>
            </div>
        </form>
    }
}

/// The `<select>` an event went to.
fn select_of(ev: &web_sys::Event) -> Option<web_sys::HtmlSelectElement> {
    ev.target()
        .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlSelectElement>(t).ok())
}

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
    // Whether the picker's next change comes from a key walking its list (not a choice).
    let walking = StoredValue::new(false);
    let list_error =
        move || live.with(|l| server_error.with(|s| message_for("sources", l, s.as_ref())));
    let chips = move || {
        sources
            .get()
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                let field = format!("sources[{i}].type");
                let error =
                    live.with(|l| server_error.with(|s| message_for(&field, l, s.as_ref())));
                let t2 = t.clone();
                let invalid = error.is_some();
                view! {
                    <li class="chip" class:invalid=invalid>
                        <code>{t.clone()}</code>
                        <button type="button" class="link" aria-label=format!("Remove {t}")
                            on:click=move |_| {
                                sources.update(|s| s.retain(|x| *x != t2));
                                // The last chip gone, its button takes the focus with it.
                                keep_focus_on("#source-picker");
                            }>"×"</button>
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
            {move || sources.with(Vec::is_empty).then(|| view! { <p class="hint">{NO_SOURCES}</p> })}
            <p class="error" role="alert">{move || list_error().map(|m| message(&m))}</p>
            <div class="field">
                <label for="source-picker">"Add from the catalogue"</label>
                // A choice made with the mouse (or a phone's picker) adds at once. Keys that walk
                // the list (arrows, Home, End, typing a name) fire a change at each step: they
                // only choose, and Enter adds, or a keyboard user would add every type passed.
                <select id="source-picker" aria-describedby="source-picker-hint"
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                        let key = ev.key();
                        if key == "Enter" {
                            ev.prevent_default();
                            if let Some(el) = select_of(ev.as_ref()) {
                                add(el.value());
                                el.set_value("");
                            }
                        } else if key.starts_with("Arrow") || key.starts_with("Page")
                            || key == "Home" || key == "End" || key.chars().count() == 1
                        {
                            walking.set_value(true);
                        }
                    }
                    on:change=move |ev| {
                        if walking.get_value() {
                            walking.set_value(false);
                            return;
                        }
                        add(event_target_value(&ev));
                        if let Some(el) = select_of(&ev) {
                            el.set_value("");
                        }
                    }>
                    <option value="">"Choose an event type…"</option>
                    {CATALOGUE.iter().map(|t| view! {
                        <option value=*t disabled=move || sources.with(|s| s.iter().any(|x| x == t))>{*t}</option>
                    }).collect_view()}
                </select>
                <p id="source-picker-hint" class="hint">"With the keyboard: the arrow keys choose, Enter adds."</p>
            </div>
            <div class="field">
                <label for="source-free">"Or type one"</label>
                <div class="copy-row">
                    <input id="source-free" class="mono" type="text" placeholder="credential_created.v0" bind:value=free
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
pub fn EventSubscriptionNew() -> impl IntoView {
    let app = use_app();
    let open_created = use_open_created();
    let on_saved = Callback::new(move |s: EventSubscription| {
        app.toast(format!("Event subscription {} created.", s.id), false);
        open_created(&routes::event_subscription(&s.id));
    });
    view! {
        <p class="crumbs"><A href=routes::EVENT_SUBSCRIPTIONS exact=true>"Event subscriptions"</A>" / new"</p>
        <h1>"New event subscription"</h1>
        <SubscriptionForm original=None on_saved=on_saved />
    }
}

#[component]
pub fn EventSubscriptionDetail() -> impl IntoView {
    let list = routes::EVENT_SUBSCRIPTIONS;
    detail_page(
        list,
        "Event subscriptions",
        paths::event_subscription,
        subscription_view,
    )
}

/// The detail page's sources: the event types, or the note that nothing is delivered yet.
fn sources_view(sub: &EventSubscription) -> AnyView {
    if sub.sources.is_empty() {
        return view! { <span class="muted">{NO_SOURCES}</span> }.into_any();
    }
    let items = sub
        .sources
        .iter()
        .map(|s| view! { <li><code>{s.event_type.clone()}</code></li> });
    view! { <ul class="acl-list">{items.collect_view()}</ul> }.into_any()
}

/// A loaded subscription: its properties, the shared form to edit it, and delete.
fn subscription_view(sub: EventSubscription, reload: RwSignal<u32>) -> impl IntoView {
    let app = use_app();
    let id = sub.id.clone();
    let on_saved = Callback::new(move |_| {
        app.toast("Event subscription saved.", false);
        reload.update(|r| *r += 1);
        // As on the destination page: "Save changes", disabled now that nothing has changed,
        // hands the focus to the form.
        keep_focus_on("#field-description");
    });
    let delete = ConfirmedDelete::back_to_list(
        paths::event_subscription(&id),
        format!("Event subscription {id} deleted."),
        routes::EVENT_SUBSCRIPTIONS,
    );
    view! {
        <div class="page-head">
            <h1>{title_or(&sub.description, "Event subscription")}</h1>
            {delete.button("Delete")}
        </div>
        {delete.failure("The subscription was not deleted")}
        <dl class="props card">
            {identity_props(sub.id.clone(), sub.uri.clone(), &sub.created_at)}
            <dt>"Sources"</dt><dd>{sources_view(&sub)}</dd>
            <dt>"Destinations"</dt><dd><ul class="acl-list">{sub.destinations.iter().map(|d| view! {
                <li><RefName path=paths::event_destination(&d.id) id=d.id.clone() href=routes::event_destination(&d.id) /></li>
            }).collect_view()}</ul></dd>
        </dl>
        <h2>"Edit"</h2>
        <p class="hint">"Only the fields you change are sent; the others stay as they are."</p>
        <SubscriptionForm original=Some((sub.id.clone(), SubscriptionDraft::from(&sub))) on_saved=on_saved reload=reload />
        {delete.dialog(
            "Delete this subscription?",
            format!("Event subscription {id} will be deleted; its destinations are kept."),
            "Delete subscription",
        )}
    }
}
