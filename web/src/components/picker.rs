//! The search field of a picker (the backend of a TLS edge, the destinations of a
//! subscription): a picker shows one page of choices, so with more than a page the user finds
//! the rest by typing. The text goes to the API as `q` once the user pauses; Enter applies it
//! at once and never submits the form the picker sits in.

use super::search::with_search;
use leptos::prelude::*;
use std::time::Duration;

/// How long typing pauses before the choices are fetched again.
const PAUSE: Duration = Duration::from_millis(300);

/// The search applied to a picker's choices (empty: none).
#[derive(Debug, Clone, Copy)]
pub struct PickerSearch {
    applied: RwSignal<String>,
}

impl PickerSearch {
    pub fn new() -> PickerSearch {
        PickerSearch {
            applied: RwSignal::new(String::new()),
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

    /// The field, labelled `label`, with the DOM id `id`.
    pub fn field(self, id: &'static str, label: &'static str) -> impl IntoView {
        let text = RwSignal::new(String::new());
        let typed = RwSignal::new(0u32);
        let applied = self.applied;
        let apply = move || {
            let q = text.get_untracked().trim().to_owned();
            if applied.get_untracked() != q {
                applied.set(q);
            }
        };
        let on_input = move |ev: leptos::ev::Event| {
            text.set(event_target_value(&ev));
            let n = typed.get_untracked() + 1;
            typed.set(n);
            set_timeout(
                move || {
                    // Only the last keystroke's timer applies it.
                    if typed.try_get_untracked() == Some(n) {
                        apply();
                    }
                },
                PAUSE,
            );
        };
        let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
            if ev.key() == "Enter" {
                ev.prevent_default();
                typed.update(|n| *n += 1);
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
