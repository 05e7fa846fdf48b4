//! The search field of a picker (the backend of a TLS edge, the destinations of a
//! subscription, the owner of a credential or API key): a picker shows one page of choices, so
//! with more than a page the user finds the rest by typing. The text goes to the API as `q` once
//! the user pauses; Enter applies it at once and never submits the form the picker sits in.
//! [`OwnerPicker`] is the one picker used by two pages.

use super::Pause;
use super::loading::{LoadWords, fetch_into, render_load_as};
use super::search::with_search;
use super::text::message;
use leptos::prelude::*;
use tunnel_core::paths;
use tunnel_core::resources::user::{User, UserList};

/// The search applied to a picker's choices (empty: none).
#[derive(Debug, Clone, Copy)]
pub struct PickerSearch {
    applied: RwSignal<String>,
    /// The text of every choice shown so far, by id: the chosen one, when a search leaves it
    /// out, keeps its name rather than showing a bare id.
    seen: StoredValue<std::collections::BTreeMap<String, String>>,
}

impl PickerSearch {
    pub fn new() -> PickerSearch {
        PickerSearch {
            applied: RwSignal::new(String::new()),
            seen: StoredValue::new(std::collections::BTreeMap::new()),
        }
    }

    /// The request path of the first page of choices at `api_path`, with the search (tracked).
    pub fn first_page(&self, api_path: &str) -> String {
        super::pager::first_page(&with_search(api_path, &self.applied.get()))
    }

    /// Whether a search is applied (tracked): an empty result then says "nothing matches".
    pub fn searching(&self) -> bool {
        self.applied.with(|q| !q.is_empty())
    }

    /// The options of the picker's `<select>` over one page of `choices` (`(id, text)`), the
    /// chosen id in `chosen`: first `none` (the empty value), then the chosen id kept as a
    /// choice when the search leaves it out, the choices, and a disabled line saying
    /// `nothing_found` when a search found nothing.
    pub fn options(
        &self,
        chosen: RwSignal<String>,
        choices: Vec<(String, String)>,
        none: String,
        nothing_found: &'static str,
    ) -> impl IntoView + use<> {
        let current = chosen.get_untracked();
        self.seen.update_value(|seen| {
            for (id, text) in &choices {
                seen.insert(id.clone(), text.clone());
            }
        });
        let missing =
            (!current.is_empty() && !choices.iter().any(|(id, _)| *id == current)).then(|| {
                let text = self
                    .seen
                    .with_value(|seen| seen.get(&current).cloned())
                    .unwrap_or_else(|| current.clone());
                view! { <option value=current.clone() selected=true>{text}</option> }
            });
        let none_found = (choices.is_empty() && self.searching())
            .then(|| view! { <option value="" disabled=true>{nothing_found}</option> });
        let choices = choices
            .into_iter()
            .map(|(id, text)| {
                let key = id.clone();
                view! { <option value=id selected=move || chosen.with(|s| *s == key)>{text}</option> }
            })
            .collect_view();
        view! {
            <option value="" selected=move || chosen.with(String::is_empty)>{none}</option>
            {missing}
            {choices}
            {none_found}
        }
    }

    /// The field, labelled `label`, with the DOM id `id`.
    pub fn field(self, id: &'static str, label: &'static str) -> impl IntoView {
        let text = RwSignal::new(String::new());
        // The choices are fetched again once typing pauses.
        let pause = Pause::new();
        let applied = self.applied;
        let apply = move || {
            let q = text.get_untracked().trim().to_owned();
            if applied.get_untracked() != q {
                applied.set(q);
            }
        };
        let on_input = move |ev: leptos::ev::Event| {
            text.set(event_target_value(&ev));
            pause.then(apply);
        };
        let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
            if ev.key() == "Enter" {
                ev.prevent_default();
                pause.cancel();
                apply();
            }
        };
        view! {
            <div class="picker-search">
                <label for=id class="sr-only">{label}</label>
                <input id=id type="search" placeholder=label autocomplete="off" spellcheck="false" maxlength="255"
                    prop:value=move || text.get() on:input=on_input on:keydown=on_keydown />
            </div>
        }
    }
}

impl Default for PickerSearch {
    fn default() -> PickerSearch {
        PickerSearch::new()
    }
}

/// The owner picker's load.
const OWNERS_LOAD: LoadWords = LoadWords {
    loading: "Loading users…",
    failed: "Could not load users",
    refocus: Some("#owner-search"),
};

/// The owner of a new credential or API key, for admins (members always own what they create):
/// a select of the account's users and bots by name, searchable, starting on "Me" (with the
/// caller's name, and the caller not listed again by name). `owner` holds the chosen id, empty
/// for the caller.
#[component]
pub fn OwnerPicker(
    owner: RwSignal<String>,
    /// The message to show under the field, if any.
    #[prop(into)]
    error: Signal<Option<String>>,
    /// What choosing an owner means here.
    #[prop(into)]
    hint: String,
) -> impl IntoView {
    let app = crate::state::use_app();
    let search = PickerSearch::new();
    let reload = RwSignal::new(0);
    let users = fetch_into::<UserList>(move || search.first_page(paths::USERS), reload);
    let has_error = move || error.with(Option::is_some);
    view! {
        <div class="field" class:invalid=has_error>
            <label for="field-owner_id">"Owner"</label>
            {search.field("owner-search", "Find users and bots by name or id")}
            {move || render_load_as(users.get(), reload, &OWNERS_LOAD, move |list: UserList| {
                    // The caller is the empty choice, "Me": listed again by name, they would
                    // read as someone else, and picking either would mean the same.
                    let me = app.me.with(|me| me.as_ref().map(|me| (me.principal_id.clone(), me.principal_name.clone())));
                    let choices = list
                        .users
                        .into_iter()
                        .filter(|u| me.as_ref().is_none_or(|(id, _)| *id != u.id))
                        .map(owner_choice)
                        .collect();
                    let none = match me {
                        Some((_, name)) if !name.is_empty() => format!("Me ({name})"),
                        _ => "Me".to_owned(),
                    };
                    view! {
                        <select id="field-owner_id" aria-describedby="field-owner_id-error"
                            aria-invalid=move || has_error().to_string()
                            on:change=move |ev| owner.set(event_target_value(&ev))>
                            {search.options(owner, choices, none, "No user or bot matches the search")}
                        </select>
                    }
                })}
            <p class="hint">{hint}</p>
            <p class="error" id="field-owner_id-error" role="alert">{move || error.get().map(|e| message(&e))}</p>
        </div>
    }
}

/// One choice of the owner picker: the name (or "unnamed"), whether a bot or an admin, the id.
fn owner_choice(u: User) -> (String, String) {
    let name = if u.name.is_empty() {
        "unnamed"
    } else {
        &u.name
    };
    let role = match (u.kind.as_str(), u.is_admin) {
        ("bot", _) => ", bot",
        (_, true) => ", admin",
        _ => "",
    };
    let text = format!("{name}{role} — {}", u.id);
    (u.id, text)
}
