//! Next / previous for the API's keyset pages. The API only gives `next_page_uri`; the pages
//! already visited are kept on a stack so "Previous" can go back.

use crate::api::page_query;
use leptos::prelude::*;

/// The request path of the first page (`page_size` items) of the list at `base`, which may
/// carry a query of its own (filters, the search).
pub fn first_page_of(base: &str, page_size: u32) -> String {
    let (path, filters) = base.split_once('?').unwrap_or((base, ""));
    let first = tunnel_core::paths::list_query(Some(page_size), None);
    if filters.is_empty() {
        format!("{path}{first}")
    } else {
        format!("{path}{first}&{filters}")
    }
}

/// Where the list is: the query of the current page and the queries of the pages before it.
#[derive(Debug, Clone, Copy)]
pub struct Pager {
    pub current: RwSignal<String>,
    stack: RwSignal<Vec<String>>,
}

impl Pager {
    pub fn new() -> Pager {
        Pager {
            current: RwSignal::new(String::new()),
            stack: RwSignal::new(Vec::new()),
        }
    }

    pub fn next(&self, next_page_uri: &str) {
        let current = self.current.get_untracked();
        self.stack.update(|s| s.push(current));
        self.current.set(page_query(next_page_uri));
    }

    pub fn previous(&self) {
        let mut stack = self.stack.get_untracked();
        if let Some(prev) = stack.pop() {
            self.stack.set(stack);
            self.current.set(prev);
        }
    }

    pub fn has_previous(&self) -> bool {
        self.stack.with(|s| !s.is_empty())
    }

    /// The request path of the current page of the list at `base`: the first page with
    /// `page_size` items, then the query taken from each `next_page_uri`. Tracks `current`.
    /// `base` may carry a query of its own (filters), which the API repeats in
    /// `next_page_uri`, so later pages need only that query.
    pub fn path(&self, base: &str, page_size: u32) -> String {
        let query = self.current.get();
        if query.is_empty() {
            return first_page_of(base, page_size);
        }
        let (path, _) = base.split_once('?').unwrap_or((base, ""));
        format!("{path}{query}")
    }

    /// The page number shown to the user (1-based).
    pub fn number(&self) -> usize {
        self.stack.with(Vec::len) + 1
    }
}

impl Default for Pager {
    fn default() -> Pager {
        Pager::new()
    }
}

#[component]
pub fn PagerNav(pager: Pager, #[prop(into)] next: Signal<Option<String>>) -> impl IntoView {
    view! {
        <nav class="pager" aria-label="Pages">
            <button type="button" disabled=move || !pager.has_previous() on:click=move |_| pager.previous()>
                "← Previous"
            </button>
            <span>"Page " {move || pager.number()}</span>
            <button type="button" disabled=move || next.with(Option::is_none)
                on:click=move |_| { if let Some(uri) = next.get_untracked() { pager.next(&uri) } }>
                "Next →"
            </button>
        </nav>
    }
}
