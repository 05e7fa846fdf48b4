//! The Activity page (`docs/api/events.md`): the account's audit log, newest first, paged like
//! every list, with its filters (type, object, actor, time range) in the URL query, so a
//! reload, back / forward and a shared link show the same events; and one event in full.
//!
//! The query's names are the API's own filter names (`EVENT_FILTERS`): the page passes its query
//! on to `GET /events` as it is, and the API repeats it in `next_page_uri`.

use super::{crumbs, detail_load, use_detail, when};
use crate::components::activity::{actor_view, changes_view, object_view};
use crate::components::copy::{CopyButton, CopyValue};
use crate::components::list::{ListPage, RowName};
use crate::components::text::message;
use crate::components::time::{RelativeTime, from_local_input, to_local_input};
use crate::components::{Pause, focus_by_id, keep_focus_on};
use crate::routes;
use leptos::prelude::*;
use leptos_router::NavigateOptions;
use leptos_router::components::A;
use leptos_router::hooks::{use_navigate, use_query_map};
use tunnel_core::event_types::CATALOGUE;
use tunnel_core::paths;
use tunnel_core::resources::event::{EVENT_FILTERS, Event, EventList};

/// The filters in the URL, in the order of `EVENT_FILTERS` (type, object id, actor id, after,
/// before); empty when not given.
type Filters = [String; 5];

fn pairs(filters: &Filters) -> Vec<(&'static str, &str)> {
    EVENT_FILTERS
        .iter()
        .zip(filters.iter())
        .map(|(name, value)| (*name, value.as_str()))
        .collect()
}

#[component]
pub fn ActivityPage() -> impl IntoView {
    let query = use_query_map();
    let current: Memo<Filters> = Memo::new(move |_| {
        query.with(|q| EVENT_FILTERS.map(|name| q.get(name).unwrap_or_default().trim().to_owned()))
    });
    let api_path = Signal::derive(move || {
        let query = current.with(|f| routes::query_string(&pairs(f)));
        match query.is_empty() {
            true => paths::EVENTS.to_owned(),
            false => format!("{}?{query}", paths::EVENTS),
        }
    });
    let filtered = move || current.with(|f| f.iter().any(|v| !v.is_empty()));
    let navigate = use_navigate();
    let clear = Callback::new(move |()| {
        navigate(routes::ACTIVITY, NavigateOptions::default());
        keep_focus_on("#filter-type");
    });
    let list = ListPage::at(api_path, routes::activity_event)
        .noun("event", "events")
        .export("events")
        .columns(&["Event", "When", "Actor", "Object", "Changes"])
        .empty("No events match.")
        .untitled("Event")
        .rows::<EventList, _, _>(|e: Event| {
            let cells = view! {
                <td><RelativeTime ts=e.occurred_at.clone() /></td>
                <td>{actor_view(&e.actor)}</td>
                <td>{object_view(&e)}</td>
                <td>{changes_view(&e)}</td>
            };
            (RowName::new(e.id, e.event_type), cells)
        });
    view! {
        <div class="page-head">
            <h1>"Activity"</h1>
            <Show when=filtered>
                // A button, not a link: it goes to this very page (a link to it would be
                // announced as the current page), and the focus it held goes to the filters.
                <button type="button" on:click=move |_| clear.run(())>"Clear filters"</button>
            </Show>
        </div>
        <p class="lead">"Every change to the account, newest first: who made it, to what, and what changed."</p>
        <ActivityFilters current=current />
        <div class="activity-list">{list}</div>
    }
}

/// The filter form. Its fields follow the URL (a back / forward shows the filters of that
/// entry); Enter in a field or Apply puts them in the URL (a new history entry), and choosing a
/// type applies once the choice rests (a keyboard user walks the types with the arrow keys,
/// each a `change`): a new entry when no type was chosen, else in place of the last one.
/// A time range is checked before it is applied: a time the browser could not read (part of a
/// date typed) or an Until that is not after From is said at its field.
#[component]
fn ActivityFilters(current: Memo<Filters>) -> impl IntoView {
    let navigate = use_navigate();
    let event_type = RwSignal::new(String::new());
    let object_id = RwSignal::new(String::new());
    let actor_id = RwSignal::new(String::new());
    let after = RwSignal::new(String::new());
    let before = RwSignal::new(String::new());
    // An id filter that is no id is said at its field (the API would refuse the whole list).
    let object_error = RwSignal::new(None::<String>);
    let actor_error = RwSignal::new(None::<String>);
    let after_error = RwSignal::new(None::<String>);
    let before_error = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let [t, o, a, from, to] = current.get();
        event_type.set(t);
        object_id.set(o);
        actor_id.set(a);
        after.set(to_local_input(&from));
        before.set(to_local_input(&to));
    });
    let apply = move |replace: bool| {
        let read = |s: RwSignal<String>| s.get_untracked().trim().to_owned();
        let time = |s: RwSignal<String>| from_local_input(&s.get_untracked()).unwrap_or_default();
        let (from, until) = (time(after), time(before));
        let mut problems = Vec::new();
        for (value, error) in [(object_id, object_error), (actor_id, actor_error)] {
            let value = read(value);
            problems.push((
                error,
                (!value.is_empty())
                    .then(|| tunnel_core::ids::check_id_form(&value).err())
                    .flatten(),
            ));
        }
        let unreadable =
            |id: &str| half_typed(id).then(|| "the date and time are not complete".to_owned());
        problems.push((after_error, unreadable("filter-after")));
        // RFC 3339 in UTC, so comparing the texts compares the times.
        let reversed = !from.is_empty() && !until.is_empty() && until <= from;
        problems.push((
            before_error,
            unreadable("filter-before")
                .or_else(|| reversed.then(|| "Until must be later than From".to_owned())),
        ));
        let ids = [
            "filter-object",
            "filter-actor",
            "filter-after",
            "filter-before",
        ];
        let first_bad = ids
            .into_iter()
            .zip(&problems)
            .find_map(|(id, (_, problem))| problem.is_some().then_some(id));
        for (error, problem) in problems {
            error.set(problem);
        }
        if let Some(id) = first_bad {
            focus_by_id(id);
            return;
        }
        let filters: Filters = [
            read(event_type),
            read(object_id),
            read(actor_id),
            from,
            until,
        ];
        let href = routes::activity_filtered(&pairs(&filters));
        navigate(
            &href,
            NavigateOptions {
                replace,
                ..NavigateOptions::default()
            },
        );
    };
    // The type applies 300 ms after the last change, in place of the entry that already has a
    // type (the arrow keys would otherwise leave one entry, and one request, per type passed).
    let pause = Pause::new();
    let apply_later = apply.clone();
    let apply_type = move || {
        let apply = apply_later.clone();
        pause.then(move || apply(current.with_untracked(|f| !f[0].is_empty())));
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        apply(false);
    };
    // A type in the URL that is not in the catalogue (`ping.v0`) is still shown as chosen.
    let extra = move || {
        current.with(|f| {
            (!f[0].is_empty() && !CATALOGUE.contains(&f[0].as_str())).then(|| f[0].clone())
        })
    };
    view! {
        <form class="card filters" on:submit=submit aria-label="Filter events" novalidate>
            <div class="field">
                <label for="filter-type">"Type"</label>
                <select id="filter-type" on:change=move |ev| {
                    event_type.set(event_target_value(&ev));
                    apply_type();
                }>
                    <option value="" selected=move || event_type.with(String::is_empty)>"Any type"</option>
                    {move || extra().map(|t| view! { <option value=t.clone() selected=true>{t.clone()}</option> })}
                    {CATALOGUE.iter().map(|t| view! {
                        <option value=*t selected=move || event_type.with(|s| s == t)>{*t}</option>
                    }).collect_view()}
                </select>
            </div>
            <div class="field" class:invalid=move || object_error.with(Option::is_some)>
                <label for="filter-object">"Object ID"</label>
                <input id="filter-object" type="text" class="mono" placeholder="cr_…" bind:value=object_id
                    aria-invalid=move || object_error.with(Option::is_some).to_string() aria-describedby="filter-object-error" />
                {move || object_error.get().map(|m| view! { <p id="filter-object-error" class="error" role="alert">{message(&m)}</p> })}
            </div>
            <div class="field" class:invalid=move || actor_error.with(Option::is_some)>
                <label for="filter-actor">"Actor ID"</label>
                <input id="filter-actor" type="text" class="mono" placeholder="usr_…, bot_… or cr_…" bind:value=actor_id
                    aria-invalid=move || actor_error.with(Option::is_some).to_string() aria-describedby="filter-actor-error" />
                {move || actor_error.get().map(|m| view! { <p id="filter-actor-error" class="error" role="alert">{message(&m)}</p> })}
            </div>
            <div class="field" class:invalid=move || after_error.with(Option::is_some)>
                <label for="filter-after">"From (local time)"</label>
                <input id="filter-after" type="datetime-local" bind:value=after
                    aria-invalid=move || after_error.with(Option::is_some).to_string() aria-describedby="filter-after-error" />
                {move || after_error.get().map(|m| view! { <p id="filter-after-error" class="error" role="alert">{message(&m)}</p> })}
            </div>
            <div class="field" class:invalid=move || before_error.with(Option::is_some)>
                <label for="filter-before">"Until (local time)"</label>
                <input id="filter-before" type="datetime-local" bind:value=before
                    aria-invalid=move || before_error.with(Option::is_some).to_string() aria-describedby="filter-before-error" />
                {move || before_error.get().map(|m| view! { <p id="filter-before-error" class="error" role="alert">{message(&m)}</p> })}
            </div>
            <div class="actions">
                <button type="submit" class="primary">"Apply filters"</button>
            </div>
        </form>
    }
}

/// Whether the date-time field `id` holds something the browser cannot read as a time yet (part
/// of a date typed): its value is then empty, and only its validity tells.
fn half_typed(id: &str) -> bool {
    document()
        .get_element_by_id(id)
        .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(e).ok())
        .is_some_and(|input| input.validity().bad_input())
}

/// One event: what the Activity row shows, in full, then the whole event as JSON.
#[component]
pub fn ActivityEvent() -> impl IntoView {
    let reload = RwSignal::new(0);
    let (id, event) = use_detail::<Event>(paths::event, reload);
    view! {
        {crumbs(routes::ACTIVITY, "Activity", id)}
        {move || detail_load(event.get(), reload, routes::ACTIVITY, "Activity", event_view)}
    }
}

fn event_view(e: Event) -> impl IntoView {
    let json = serde_json::to_string_pretty(&e).unwrap_or_default();
    let api_key = e.actor.api_key_id.clone();
    let operation = e.operation_id.clone();
    let object_activity = routes::activity_of(&e.object_id);
    // A create or delete has no changed fields and often no details: no empty row then.
    let changed = !e.changed_fields.is_empty() || !e.details.is_empty();
    view! {
        <h1><code>{e.event_type.clone()}</code></h1>
        <dl class="props card">
            <dt>"ID"</dt><dd><CopyValue value=e.id.clone() what="ID" /></dd>
            <dt>"When"</dt><dd>{when(&e.occurred_at)}</dd>
            <dt>"Actor"</dt><dd>{actor_view(&e.actor)}</dd>
            {api_key.map(|k| view! { <dt>"API key"</dt><dd><code class="id">{k}</code></dd> })}
            {operation.map(|o| view! { <dt>"Operation"</dt><dd><CopyValue value=o what="operation ID" /></dd> })}
            <dt>"Object"</dt><dd>{object_view(&e)} " " <A href=object_activity>"All its activity"</A></dd>
            {changed.then(|| view! { <dt>"Changes"</dt><dd>{changes_view(&e)}</dd> })}
        </dl>
        <section class="card">
            <div class="page-head">
                <h2 id="event-json">"Event JSON"</h2>
                <CopyButton text=json.clone() what="JSON" />
            </div>
            // It scrolls (max-height), so it takes focus: keyboard users scroll it with the arrows.
            <pre class="json" tabindex="0" role="region" aria-labelledby="event-json">{json}</pre>
        </section>
    }
}
