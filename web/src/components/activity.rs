//! Audit-log events as pages show them: who did it ([`actor_view`]), to what
//! ([`object_view`]), what changed ([`changes_view`]), and [`RecentActivity`], the last events
//! of one resource on its detail page with a link to the Activity page filtered by it.
//!
//! The Activity page (`pages/activity.rs`) and the detail pages share these, so an event reads
//! the same everywhere.

use super::loading::{LoadWords, fetch_into, render_load_as};
use super::names::OwnerName;
use super::time::RelativeTime;
use crate::routes;
use leptos::prelude::*;
use leptos_router::components::A;
use tunnel_core::paths;
use tunnel_core::resources::event::{Actor, ActorKind, Event, EventList};

/// How many events a detail page shows.
pub const RECENT: u32 = 10;

/// The actor: "user Grace Hopper", "bot bot_…" (by name when it has one, linked to its page),
/// "agent cr_…" (linked to the credential the agent presented) or "system".
pub fn actor_view(actor: &Actor) -> AnyView {
    let id = actor.id.clone().unwrap_or_default();
    let (kind, who) = match actor.kind {
        ActorKind::User => ("user", view! { <OwnerName id=id /> }.into_any()),
        ActorKind::Bot => ("bot", view! { <OwnerName id=id /> }.into_any()),
        ActorKind::Agent => {
            let who = match routes::for_id(&id) {
                Some(href) => view! { <A href=href><code class="id">{id}</code></A> }.into_any(),
                None => view! { <code class="id">{id}</code> }.into_any(),
            };
            ("agent", who)
        }
        ActorKind::System => return view! { <span class="actor">"system"</span> }.into_any(),
    };
    view! { <span class="actor">{kind} " " {who}</span> }.into_any()
}

/// The name an event's object goes by: its description, else a webhook's URL; empty when it
/// has neither.
pub fn object_name(object: &serde_json::Value) -> String {
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let description = text(&object["description"]);
    if !description.is_empty() {
        return description;
    }
    text(&object["target"]["webhook"]["url"])
}

/// The object of an event: by name when it has one, with its id, linked to its page when the
/// console has one and the event is not its deletion (the page would only say "not found").
pub fn object_view(event: &Event) -> AnyView {
    let id = event.object_id.clone();
    let name = object_name(&event.object);
    let label = if name.is_empty() {
        view! { <code class="id">{id.clone()}</code> }.into_any()
    } else {
        view! { <span class="name">{name}</span> }.into_any()
    };
    let deleted = event.event_type.contains("_deleted.");
    let page = routes::for_id(&id).filter(|_| !deleted);
    let main = match page {
        Some(href) => view! { <A href=href attr:class="object-link">{label}</A> }.into_any(),
        None => label,
    };
    let id_line = (!object_name(&event.object).is_empty())
        .then(|| view! { <code class="id">{id.clone()}</code> });
    view! { <span class="ref-name">{main}{id_line}</span> }.into_any()
}

/// What changed: the fields of an update, then the event's details (a reason, a command and
/// its result), each value as text.
pub fn changes_view(event: &Event) -> AnyView {
    let fields = (!event.changed_fields.is_empty()).then(|| {
        let list = event.changed_fields.join(", ");
        view! { <span class="changed">"Changed: " <code>{list}</code></span> }
    });
    let details = event
        .details
        .iter()
        .map(|(key, value)| {
            let value = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            view! { <span class="detail">{key.replace('_', " ")} ": " <code>{value}</code></span> }
        })
        .collect_view();
    view! { <span class="changes">{fields}{details}</span> }.into_any()
}

/// The recent activity's load: Retry leaves the focus on the section's heading.
const ACTIVITY_LOAD: LoadWords = LoadWords {
    loading: "Loading activity…",
    failed: "Could not load the activity",
    refocus: Some("#recent-activity-title"),
};

/// The last [`RECENT`] events of the object `object_id`, newest first, on its detail page;
/// fetched again when `reload` changes (after a save on the page).
#[component]
pub fn RecentActivity(#[prop(into)] object_id: String, reload: RwSignal<u32>) -> impl IntoView {
    let all = routes::activity_of(&object_id);
    let path = format!(
        "{}{}&{}",
        paths::EVENTS,
        paths::list_query(Some(RECENT), None),
        routes::query_string(&[("object_id", &object_id)])
    );
    let events = fetch_into::<EventList>(move || path.clone(), reload);
    view! {
        <section class="card recent-activity" aria-labelledby="recent-activity-title">
            <div class="page-head">
                <h2 id="recent-activity-title">"Recent activity"</h2>
                <A href=all>"All activity"</A>
            </div>
            {move || render_load_as(events.get(), reload, &ACTIVITY_LOAD, |list: EventList| {
                if list.events.is_empty() {
                    return view! { <p class="muted">"No events yet."</p> }.into_any();
                }
                view! {
                    <ul class="event-list">
                        {list.events.into_iter().map(|e| {
                            let (actor, changes) = (actor_view(&e.actor), changes_view(&e));
                            view! {
                                <li data-id=e.id.clone()>
                                    <RelativeTime ts=e.occurred_at.clone() />
                                    " " <A href=routes::activity_event(&e.id)><code>{e.event_type.clone()}</code></A>
                                    " by " {actor}
                                    {changes}
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                }.into_any()
            })}
        </section>
    }
}
