//! The one list page of the console, [`ListPage`]: the heading, then a keyset page of an API
//! list, with loading (in a space reserved for the table, so nothing jumps when it arrives),
//! the error with Retry, the empty state, or the table, and the pager only under a table.
//!
//! Every row is made here: it carries its resource id in `data-id`, and its first cell shows the
//! human part (the description) linking to the detail page, with the id under it and a copy
//! button. Pages give only the other cells. Pickers (a select of another area's resources)
//! fetch [`first_page`] with the same page size.
//!
//! A list may offer actions on many rows ([`ListPage::bulk`]: a checkbox column and the bar of
//! [`super::bulk`]) and an export of all its pages ([`ListPage::export`]).
//!
//! The API path may change ([`ListPage::at`]): the Activity page's filters are part of it, and
//! a detail page lists its own sub-resources (a destination's deliveries). A new path starts
//! again at its first page. A list without a title is a section of another page, which gives
//! its own heading.

use super::bulk::{BulkAction, BulkBar, Noun, SelectAllCell, SelectCell, Selection};
use super::copy::CopyButton;
use super::export::ExportButtons;
use super::loading::{Load, fetch_into, render_load};
use super::pager::{Pager, PagerNav};
use super::search::{OrderSelect, SearchBox, use_oldest_first, use_search, with_list_query};
use leptos::prelude::*;
use leptos::wasm_bindgen::JsCast;
use leptos_router::components::A;
use serde::de::DeserializeOwned;
use tunnel_core::resources::ListPage as ApiPage;

pub use super::pager::{PAGE_SIZE, first_page};

/// How a row names its resource: the id and the description (may be empty).
#[derive(Debug, Clone)]
pub struct RowName {
    pub id: String,
    pub name: String,
}

impl RowName {
    pub fn new(id: String, name: String) -> RowName {
        RowName { id, name }
    }
}

/// A list page: its heading (with the create link, a hint or a lead when the page has them)
/// and the list of one API area, described step by step and shown by [`ListPage::rows`].
#[derive(Debug, Clone, Copy)]
pub struct ListPage {
    api_path: Signal<String>,
    detail: fn(&str) -> String,
    title: &'static str,
    create: Option<(&'static str, &'static str)>,
    hint: Option<&'static str>,
    lead: Option<&'static str>,
    columns: &'static [&'static str],
    empty: &'static str,
    untitled: &'static str,
    reload: Option<RwSignal<u32>>,
    /// The search box's label, for a list that can be searched.
    search: Option<&'static str>,
    /// What the rows are called (bulk actions and export need it).
    noun: Noun,
    /// Actions on the selected rows; none: no checkboxes.
    bulk: &'static [BulkAction],
    /// The export's file name stem, for a list that can be exported.
    export: Option<&'static str>,
}

impl ListPage {
    /// The list of the API list at `api_path`, each row linking to `detail(id)`.
    pub fn new(api_path: &'static str, detail: fn(&str) -> String) -> ListPage {
        ListPage::at(Signal::stored(api_path.to_owned()), detail)
    }

    /// The list at an API path that may change, query included (`/events?type=…`): the list
    /// starts again at the first page of each new path.
    pub fn at(api_path: Signal<String>, detail: fn(&str) -> String) -> ListPage {
        ListPage {
            api_path,
            detail,
            title: "",
            create: None,
            hint: None,
            lead: None,
            columns: &[],
            empty: "",
            untitled: "",
            reload: None,
            search: None,
            noun: Noun {
                one: "item",
                many: "items",
            },
            bulk: &[],
            export: None,
        }
    }

    /// What one row and several rows are called ("credential", "credentials").
    pub fn noun(self, one: &'static str, many: &'static str) -> ListPage {
        ListPage {
            noun: Noun { one, many },
            ..self
        }
    }

    /// Checkboxes on the rows, and `actions` on the selected ones.
    pub fn bulk(self, actions: &'static [BulkAction]) -> ListPage {
        ListPage {
            bulk: actions,
            ..self
        }
    }

    /// "Export CSV" and "Export JSON" of the whole list (every page, with the search), to a
    /// file named `stem-<date>.csv`.
    pub fn export(self, stem: &'static str) -> ListPage {
        ListPage {
            export: Some(stem),
            ..self
        }
    }

    /// A search box (labelled `label`) over the list, and the choice of its order: both are in
    /// the console's URL and go to the API as `q` and `order`; a change starts at the first page.
    pub fn search(self, label: &'static str) -> ListPage {
        ListPage {
            search: Some(label),
            ..self
        }
    }

    /// The page's `<h1>`.
    pub fn title(self, title: &'static str) -> ListPage {
        ListPage { title, ..self }
    }

    /// A "New …" button next to the heading, to the create page at `route`.
    pub fn create(self, route: &'static str, label: &'static str) -> ListPage {
        ListPage {
            create: Some((route, label)),
            ..self
        }
    }

    /// A short note next to the heading.
    pub fn hint(self, hint: &'static str) -> ListPage {
        ListPage {
            hint: Some(hint),
            ..self
        }
    }

    /// A sentence under the heading saying what the list holds.
    pub fn lead(self, lead: &'static str) -> ListPage {
        ListPage {
            lead: Some(lead),
            ..self
        }
    }

    /// The column headings, the first one over the name cell.
    pub fn columns(self, columns: &'static [&'static str]) -> ListPage {
        ListPage { columns, ..self }
    }

    /// Shown instead of the table when the list is empty.
    pub fn empty(self, empty: &'static str) -> ListPage {
        ListPage { empty, ..self }
    }

    /// The name shown (muted) for a resource without a description.
    pub fn untitled(self, untitled: &'static str) -> ListPage {
        ListPage { untitled, ..self }
    }

    /// Refetch the current page whenever `reload` changes (after a create, on a timer).
    pub fn reload(self, reload: RwSignal<u32>) -> ListPage {
        ListPage {
            reload: Some(reload),
            ..self
        }
    }

    /// The page, with `row` giving one item's name and its other cells.
    pub fn rows<P, R, V>(self, row: R) -> impl IntoView
    where
        P: ApiPage + DeserializeOwned + PartialEq + Clone + Send + Sync + 'static,
        P::Item: Clone,
        R: Fn(P::Item) -> (RowName, V) + Clone + Send + Sync + 'static,
        V: IntoView + 'static,
    {
        let reload = self.reload.unwrap_or_else(|| RwSignal::new(0));
        // A change that ended after the user left the page that made it (a slow delete) may
        // postdate this page's rows: fetched again.
        let app = crate::state::use_app();
        Effect::new(move |seen: Option<u32>| {
            let now = app.changed_while_away.get();
            if seen.is_some_and(|seen| seen != now) {
                reload.update(|r| *r += 1);
            }
            now
        });
        let mut list = self;
        let mut searched = None;
        if list.search.is_some() {
            let (base, q, oldest) = (list.api_path, use_search(), use_oldest_first());
            list.api_path =
                Signal::derive(move || with_list_query(&base.get(), &q.get(), oldest.get()));
            searched = Some(q);
        }
        let tools = (list.search.is_some() || list.export.is_some()).then(|| {
            view! {
                <div class="list-tools">
                    {list.search.map(|label| view! { <SearchBox label=label /> <OrderSelect /> })}
                    {list.export.map(|stem| view! { <ExportButtons api_path=list.api_path field=P::FIELD stem=stem /> })}
                </div>
            }
        });
        view! {
            {list.head()}
            {tools}
            {resource_list::<P, R, V>(list, searched, reload, row)}
        }
    }

    /// The heading, with what the page has next to and under it. Not generic, so it is
    /// compiled once for all list pages.
    fn head(self) -> AnyView {
        if self.title.is_empty() {
            return ().into_any();
        }
        view! {
            <div class="page-head">
                <h1>{self.title}</h1>
                {self.create.map(|(route, label)| view! { <A href=route attr:class="button primary">{label}</A> })}
                {self.hint.map(|hint| view! { <span class="hint">{hint}</span> })}
            </div>
            {self.lead.map(|lead| view! { <p class="lead">{lead}</p> })}
        }
        .into_any()
    }
}

/// The list itself, under the page's heading (and search box: `searched` is its search):
/// `reload` refetches the current page.
fn resource_list<P, R, V>(
    page: ListPage,
    searched: Option<Memo<String>>,
    reload: RwSignal<u32>,
    row: R,
) -> impl IntoView
where
    P: ApiPage + DeserializeOwned + PartialEq + Clone + Send + Sync + 'static,
    P::Item: Clone,
    R: Fn(P::Item) -> (RowName, V) + Clone + Send + Sync + 'static,
    V: IntoView + 'static,
{
    // A new path (other filters) is a new list: a fresh pager, at the first page.
    move || {
        let path = page.api_path.get();
        let q = searched.map(|q| q.get_untracked()).unwrap_or_default();
        path_list::<P, R, V>(page, path, q, reload, row.clone())
    }
}

/// The row of a list holding the keyboard focus: its `data-id`, and whether the focus is on its
/// checkbox (else on its name link).
fn focused_row() -> Option<(String, bool)> {
    let active = document().active_element()?;
    let row = active.closest("main table tbody tr[data-id]").ok()??;
    let on_box = active.class_list().contains("row-select");
    Some((row.get_attribute("data-id")?, on_box))
}

/// Focuses again the row `id` (its checkbox, or its name link) if it is still listed and the
/// focus is now on no row, or on another one (rows are rebuilt in place, so the focused element
/// may now show another resource); not if it moved out of the list meanwhile.
fn refocus_row((id, on_box): (String, bool)) {
    let doc = document();
    let lost = doc.active_element().is_none_or(|a| {
        doc.body()
            .is_some_and(|b| *b.unchecked_ref::<web_sys::Element>() == a)
            || a.closest("main table tbody tr[data-id]")
                .ok()
                .flatten()
                .is_some()
    });
    let Ok(rows) = doc.query_selector_all("main table tbody tr[data-id]") else {
        return;
    };
    let target = (0..rows.length())
        .filter_map(|i| rows.item(i)?.dyn_into::<web_sys::Element>().ok())
        .find(|r| r.get_attribute("data-id").as_deref() == Some(id.as_str()))
        .and_then(|r| {
            let part = if on_box { "input.row-select" } else { "a.name" };
            r.query_selector(part).ok().flatten()
        })
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok());
    if let (true, Some(target)) = (lost, target) {
        let _ = target.focus();
    }
}

/// The list at one API path (with the search `q`, empty when none).
///
/// Only reading the page of `P` and making each row's cells are generic; the rest is in
/// [`page_view`], compiled once for all lists.
fn path_list<P, R, V>(
    page: ListPage,
    api_path: String,
    q: String,
    reload: RwSignal<u32>,
    row: R,
) -> AnyView
where
    P: ApiPage + DeserializeOwned + PartialEq + Clone + Send + Sync + 'static,
    P::Item: Clone,
    R: Fn(P::Item) -> (RowName, V) + Clone + Send + Sync + 'static,
    V: IntoView + 'static,
{
    let pager = Pager::new();
    let fetched = fetch_into::<P>(move || pager.path(&api_path, PAGE_SIZE), reload);
    let shown = Shown {
        loading: Signal::derive(move || fetched.with(|p| matches!(p, Load::Loading))),
        next: Signal::derive(move || {
            fetched.with(|p| p.ready().and_then(|p| p.next_page_uri().map(str::to_owned)))
        }),
        has_rows: Signal::derive(move || {
            fetched.with(|p| p.ready().is_some_and(|p| !p.items().is_empty()))
        }),
        rows: Box::new(move || {
            fetched.get().map(|p| {
                p.items()
                    .iter()
                    .cloned()
                    .map(|item| {
                        let (name, cells) = row(item);
                        (name, cells.into_any())
                    })
                    .collect()
            })
        }),
    };
    page_view(page, q, reload, pager, shown)
}

/// A row of the table: its name, and its other cells.
type Row = (RowName, AnyView);

/// What [`page_view`] shows of the fetched page, read through the page's own type.
struct Shown {
    /// Whether the first load is on its way (tracked).
    loading: Signal<bool>,
    /// The next page's uri (tracked).
    next: Signal<Option<String>>,
    /// Whether the page has rows (tracked).
    has_rows: Signal<bool>,
    /// Each row's name and its other cells (tracked).
    rows: Box<dyn Fn() -> Load<Vec<Row>> + Send + Sync>,
}

/// The table of one page (or the loading, the error, the empty state), with the bulk bar and
/// the pager.
fn page_view(
    page: ListPage,
    q: String,
    reload: RwSignal<u32>,
    pager: Pager,
    shown: Shown,
) -> AnyView {
    let ListPage {
        columns,
        empty,
        untitled,
        detail,
        noun,
        bulk,
        ..
    } = page;
    let Shown {
        loading,
        next,
        has_rows,
        rows,
    } = shown;
    let selection = Selection::new();
    let selectable = !bulk.is_empty();
    // A selection belongs to one page.
    Effect::new(move |_| {
        pager.cursor.track();
        selection.clear();
    });
    let tr = move |(RowName { id, name }, cells): Row, shown: &mut Vec<(String, String)>| {
        let (href, data_id) = (detail(&id), id.clone());
        shown.push((id.clone(), name.clone()));
        let select = selectable.then(|| {
            view! { <SelectCell selection=selection id=id.clone() name=name.clone() /> }
        });
        view! {
            <tr data-id=data_id>
                {select}
                <NameCell href=href name=name id=id untitled=untitled />
                {cells}
            </tr>
        }
    };
    view! {
        <div class="list-area" class:list-loading=move || loading.get()>
            {move || {
                let q = q.clone();
                render_load(rows(), reload, move |items: Vec<Row>| {
                    if items.is_empty() && !q.is_empty() {
                        // Isolated: a right-to-left override in the search text must not turn
                        // the sentence around it.
                        return view! { <p class="empty" role="status">"Nothing matches “"<bdi>{q}</bdi>"”."</p> }.into_any();
                    }
                    if items.is_empty() {
                        selection.show(Vec::new());
                        return view! { <p class="empty">{empty}</p> }.into_any();
                    }
                    // New rows replace the old ones (the sessions' refresh brought a change):
                    // the row that held the keyboard focus gets it back once they are shown.
                    if let Some(focus) = focused_row() {
                        request_animation_frame(move || refocus_row(focus));
                    }
                    let mut shown = Vec::new();
                    let rows = items.into_iter().map(|item| tr(item, &mut shown)).collect_view();
                    selection.show(shown);
                    view! {
                        <div class="table-wrap"><table>
                            <thead><tr>
                                {selectable.then(|| view! { <SelectAllCell selection=selection /> })}
                                {columns.iter().map(|c| view! { <th scope="col">{*c}</th> }).collect_view()}
                            </tr></thead>
                            <tbody>{rows}</tbody>
                        </table></div>
                    }
                    .into_any()
                })
            }}
        </div>
        {selectable.then(|| view! { <BulkBar selection=selection actions=bulk noun=noun reload=reload /> })}
        // Paging only makes sense under rows (or to go back from an empty last page).
        <Show when=move || has_rows.get() || pager.has_previous()>
            <PagerNav pager=pager next=next />
        </Show>
    }
    .into_any()
}

/// The first cell of a row: the description (or `untitled`) linking to `href`, and under it the
/// id with its copy button.
///
/// A plain `<a>`, not the router's `<A>`: the router takes every same-origin link's click, and
/// `<A>` adds what a row's link never needs (a resolved path and an `aria-current` that follow
/// the location), three reactive nodes a link: about a tenth of building a page of rows.
#[component]
pub fn NameCell(
    #[prop(into)] href: String,
    #[prop(into)] name: String,
    #[prop(into)] id: String,
    /// Shown (muted) when the resource has no description.
    #[prop(into)]
    untitled: String,
) -> impl IntoView {
    let named = !name.is_empty();
    let link_text = if named { name } else { untitled };
    view! {
        <td class="name-cell">
            <a href=href class=if named { "name" } else { "name untitled" }>{link_text}</a>
            <span class="id-line"><code class="id">{id.clone()}</code><CopyButton text=id what="ID" /></span>
        </td>
    }
}
