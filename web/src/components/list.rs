//! The one list page of the console: fetches a keyset page of an API list, shows loading (in a
//! space reserved for the table, so nothing jumps when it arrives), the error with Retry, the
//! empty state, or the table, and the pager only under a table.
//!
//! Rows carry their resource id in `data-id`; the first cell shows the human part (the
//! description) linking to the detail page, with the id under it and a copy button.

use super::copy::CopyButton;
use super::loading::{Load, render_load};
use super::pager::{Pager, PagerNav};
use crate::pages::fetch_into;
use leptos::prelude::*;
use leptos_router::components::A;
use serde::de::DeserializeOwned;
use tunnel_core::resources::ListPage;

/// The page size of every list and picker: the API's default and largest page, so one request
/// usually fills the table.
pub const PAGE_SIZE: u32 = 100;

/// A list of the API list at `api_path`: `columns` are the headings, `row` renders one item's
/// `<tr data-id=…>`. `reload` refetches the current page (after a create, on a timer, or Retry).
pub fn resource_list<P, R, V>(
    api_path: &'static str,
    reload: RwSignal<u32>,
    columns: &'static [&'static str],
    empty: &'static str,
    row: R,
) -> impl IntoView
where
    P: ListPage + DeserializeOwned + PartialEq + Clone + Send + Sync + 'static,
    P::Item: Clone,
    R: Fn(P::Item) -> V + Clone + Send + Sync + 'static,
    V: IntoView + 'static,
{
    let pager = Pager::new();
    let page = fetch_into::<P>(move || pager.path(api_path, PAGE_SIZE), reload);
    let next = Signal::derive(move || {
        page.with(|p| p.ready().and_then(|p| p.next_page_uri().map(str::to_owned)))
    });
    let has_rows = move || page.with(|p| p.ready().is_some_and(|p| !p.items().is_empty()));
    view! {
        <div class="list-area" class:list-loading=move || page.with(|p| matches!(p, Load::Loading))>
            {move || {
                let row = row.clone();
                render_load(page.get(), reload, move |p: P| {
                    if p.items().is_empty() {
                        return view! { <p class="empty">{empty}</p> }.into_any();
                    }
                    view! {
                        <div class="table-wrap"><table>
                            <thead><tr>{columns.iter().map(|c| view! { <th scope="col">{*c}</th> }).collect_view()}</tr></thead>
                            <tbody>{p.items().iter().cloned().map(row).collect_view()}</tbody>
                        </table></div>
                    }
                    .into_any()
                })
            }}
        </div>
        // Paging only makes sense under rows (or to go back from an empty last page).
        <Show when=move || has_rows() || pager.has_previous()>
            <PagerNav pager=pager next=next />
        </Show>
    }
}

/// The first cell of a row: the description (or `untitled`) linking to `href`, and under it the
/// id with its copy button.
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
            <A href=href attr:class=if named { "name" } else { "name untitled" }>{link_text}</A>
            <span class="id-line"><code class="id">{id.clone()}</code><CopyButton text=id what="ID" /></span>
        </td>
    }
}
