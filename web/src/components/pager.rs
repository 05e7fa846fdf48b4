//! Next / previous for the API's keyset pages. The page shown is in the console's URL
//! (`?before_id=<id>`, as the API names the cursor), so a reload or a shared link shows the
//! same page, and back / forward step through the pages visited. The API only gives
//! `next_page_uri`, so the cursors of the pages visited are kept for "Previous" and the page
//! number; a page opened from a link does not know the pages before it, and offers "First
//! page" instead.

use super::keep_focus_on;
use crate::api::page_query;
use leptos::prelude::*;
use leptos_router::NavigateOptions;
use leptos_router::hooks::{use_location, use_navigate, use_query_map};

/// The page size of every list and picker: the API's default and largest page, so one request
/// usually fills the table.
pub const PAGE_SIZE: u32 = 100;

/// The request path of the first page of the API list at `api_path` (pickers show one page;
/// an export starts there).
pub fn first_page(api_path: &str) -> String {
    first_page_of(api_path, PAGE_SIZE)
}

/// The console URL's query parameter holding the page's cursor: the API's own name, which no
/// filter uses (`before` is the Activity page's time filter, passed on to the API as it is).
pub const PARAM: &str = "before_id";

/// The request path of the first page (`page_size` items) of the list at `base`, which may
/// carry a query of its own (filters, the search).
pub fn first_page_of(base: &str, page_size: u32) -> String {
    page_of(base, page_size, None)
}

/// The request path of the page of `page_size` items before `cursor` (none: the first page)
/// of the list at `base`.
fn page_of(base: &str, page_size: u32, cursor: Option<&str>) -> String {
    let (path, filters) = base.split_once('?').unwrap_or((base, ""));
    let page = tunnel_core::paths::list_query(Some(page_size), cursor);
    if filters.is_empty() {
        format!("{path}{page}")
    } else {
        format!("{path}{page}&{filters}")
    }
}

/// The `before_id` of a `next_page_uri`.
fn cursor_of(next_page_uri: &str) -> Option<String> {
    page_query(next_page_uri)
        .trim_start_matches('?')
        .split('&')
        .find_map(|pair| pair.strip_prefix("before_id="))
        .map(str::to_owned)
}

/// How the pager changes the URL (the router's navigate, taken where the pager is made).
type Navigate = std::rc::Rc<dyn Fn(&str, NavigateOptions)>;

/// Where the list is: the cursor in the URL, and the trail of cursors from the first page to
/// the furthest one visited (`""` first when known), so "Previous" and the page number work
/// also after back / forward.
#[derive(Debug, Clone, Copy)]
pub struct Pager {
    /// The page's cursor (empty: the first page).
    pub cursor: Memo<String>,
    trail: RwSignal<Vec<String>>,
    pathname: Memo<String>,
    query: Memo<leptos_router::params::ParamsMap>,
    navigate: StoredValue<Navigate, LocalStorage>,
    /// Where the trail is kept between mounts of the list.
    app: crate::state::AppState,
}

impl Pager {
    /// The pager of the list on show, with the trail this tab kept for it (Back from a row's
    /// page shows the list again, a new mount that would otherwise know only its cursor).
    pub fn new() -> Pager {
        let query = use_query_map();
        let location = use_location();
        let navigate = use_navigate();
        let pager = Pager {
            cursor: Memo::new(move |_| query.with(|q| q.get(PARAM).unwrap_or_default())),
            trail: RwSignal::new(vec![String::new()]),
            pathname: location.pathname,
            query: location.query,
            navigate: StoredValue::new_local(std::rc::Rc::new(navigate)),
            app: crate::state::use_app(),
        };
        if let Some(kept) = pager.app.pager_trail(&pager.list()) {
            pager.trail.set(kept);
        }
        pager
    }

    /// The list's URL without its cursor: what its trail is kept under.
    fn list(&self) -> String {
        let mut query = self.query.get_untracked();
        query.remove(PARAM);
        format!(
            "{}{}",
            self.pathname.get_untracked(),
            query.to_query_string()
        )
    }

    /// Shows the page before `cursor` (empty: the first), as a new history entry.
    fn go(&self, cursor: &str) {
        let mut query = self.query.get_untracked();
        query.remove(PARAM);
        if !cursor.is_empty() {
            query.replace(PARAM, cursor.to_owned());
        }
        let href = format!(
            "{}{}",
            self.pathname.get_untracked(),
            query.to_query_string()
        );
        let navigate = self.navigate.get_value();
        navigate(
            &href,
            NavigateOptions {
                scroll: false,
                ..NavigateOptions::default()
            },
        );
    }

    /// Where the current page is in the trail.
    fn at(&self) -> Option<usize> {
        let cursor = self.cursor.get();
        self.trail.with(|t| t.iter().rposition(|c| *c == cursor))
    }

    pub fn next(&self, next_page_uri: &str) {
        let Some(next) = cursor_of(next_page_uri) else {
            return;
        };
        let current = self.cursor.get_untracked();
        self.trail
            .update(|t| match t.iter().rposition(|c| *c == current) {
                Some(i) => t.truncate(i + 1),
                // Opened from a link: the pages before it are not known.
                None => *t = vec![current],
            });
        self.trail.update(|t| t.push(next.clone()));
        self.app
            .keep_pager_trail(self.list(), self.trail.get_untracked());
        self.go(&next);
    }

    /// The page before, or the first page when the pages before are not known.
    pub fn previous(&self) {
        let previous = self
            .at()
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| self.trail.with_untracked(|t| t.get(i).cloned()))
            .unwrap_or_default();
        self.go(&previous);
    }

    /// Whether this is not the first page.
    pub fn has_previous(&self) -> bool {
        self.cursor.with(|c| !c.is_empty())
    }

    /// The request path of the current page of the list at `base` (tracks the cursor). `base`
    /// may carry a query of its own (filters, the search), which every page repeats.
    pub fn path(&self, base: &str, page_size: u32) -> String {
        let cursor = self.cursor.get();
        page_of(
            base,
            page_size,
            Some(cursor.as_str()).filter(|c| !c.is_empty()),
        )
    }

    /// The page number shown to the user (1-based), when known: a page opened from a link
    /// does not know how many pages come before it.
    pub fn number(&self) -> Option<usize> {
        if !self.has_previous() {
            return Some(1);
        }
        let from_first = self.trail.with(|t| t.first().is_some_and(String::is_empty));
        self.at().filter(|_| from_first).map(|i| i + 1)
    }
}

impl Default for Pager {
    fn default() -> Pager {
        Pager::new()
    }
}

/// Where the focus goes once another page is shown: the first row of the new page (the view
/// then shows it), or, in a list whose rows have no name link, the pager's enabled button.
const AFTER_PAGING: &str =
    "main table tbody tr td.name-cell a.name, main .pager button:not([disabled])";

/// Leaves the focus on nothing, for [`keep_focus_on`] to put it on the new page's first row:
/// kept on the pager's button, it would stay at the bottom of the new page, or drop to the top
/// of the document when the button is disabled there (the last page, the first).
fn focus_the_new_page() {
    if let Some(active) = document()
        .active_element()
        .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok())
    {
        let _ = active.blur();
    }
    keep_focus_on(AFTER_PAGING);
}

#[component]
pub fn PagerNav(pager: Pager, #[prop(into)] next: Signal<Option<String>>) -> impl IntoView {
    let label = move || match pager.number() {
        Some(n) => format!("Page {n}"),
        None => "A later page".to_owned(),
    };
    let previous_label = move || {
        if pager.number().is_none() {
            "← First page"
        } else {
            "← Previous"
        }
    };
    view! {
        <nav class="pager" aria-label="Pages">
            <button type="button" disabled=move || !pager.has_previous()
                on:click=move |_| { pager.previous(); focus_the_new_page() }>
                {previous_label}
            </button>
            <span>{label}</span>
            <button type="button" disabled=move || next.with(Option::is_none)
                on:click=move |_| {
                    if let Some(uri) = next.get_untracked() {
                        pager.next(&uri);
                        focus_the_new_page();
                    }
                }>
                "Next →"
            </button>
        </nav>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_repeat_the_lists_own_query() {
        assert_eq!(first_page_of("/credentials", 100), "/credentials?limit=100");
        assert_eq!(
            page_of("/events?type=a.v0", 100, Some("ev_9")),
            "/events?limit=100&before_id=ev_9&type=a.v0"
        );
    }

    #[test]
    fn the_cursor_is_the_before_id_of_next_page_uri() {
        assert_eq!(
            cursor_of("http://h/api/credentials?limit=100&before_id=cr_5&q=x").as_deref(),
            Some("cr_5")
        );
        assert_eq!(cursor_of("http://h/api/credentials?limit=100"), None);
    }
}
