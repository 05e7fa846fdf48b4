//! Export of a whole list as CSV or JSON (docs/console.md, export): every page of the API list
//! (with the list's filters and search), followed through `next_page_uri`, with the count so
//! far and Cancel; then a download named by the resource and the day
//! (`credentials-2026-11-23.csv`).
//!
//! JSON is the API's items as they came. CSV has one row per item and one column per
//! property (the id first, then the others by name); a nested value (a list, an object) is
//! its JSON text in one cell. A cell that a spreadsheet would run as a formula (starting with
//! `=`, `+`, `-`, `@`, tab or carriage return) is prefixed with `'`: the exported text comes
//! from users, and opening an export must not run it.

use crate::api::{ApiError, page_query, use_api};
use leptos::prelude::*;
use serde_json::Value;
use wasm_bindgen::JsCast;

/// The two formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Json,
}

impl Format {
    fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Json => "json",
        }
    }

    fn mime(self) -> &'static str {
        match self {
            Format::Csv => "text/csv;charset=utf-8",
            Format::Json => "application/json",
        }
    }
}

/// Where an export is.
#[derive(Debug, Clone, PartialEq)]
enum State {
    Idle,
    /// Fetching: items so far.
    Fetching(usize),
    Failed(ApiError),
}

/// The export buttons of a list: `api_path` is the list's path (filters and search included),
/// `field` the property holding its items, `stem` the start of the file name.
#[component]
pub fn ExportButtons(
    #[prop(into)] api_path: Signal<String>,
    field: &'static str,
    stem: &'static str,
) -> impl IntoView {
    let api = use_api();
    let state = RwSignal::new(State::Idle);
    // Bumped by Cancel and by each new export: a fetch that sees another number stops.
    let generation = StoredValue::new(0u32);
    let export = move |format: Format| {
        let run = generation.get_value() + 1;
        generation.set_value(run);
        let base = api_path.get_untracked();
        state.set(State::Fetching(0));
        leptos::task::spawn_local(async move {
            let (path, _) = base.split_once('?').unwrap_or((&base, ""));
            let mut next = Some(super::pager::first_page(&base));
            let mut items = Vec::new();
            while let Some(url) = next.take() {
                let page: Value = match api.get(&url).await {
                    Ok(page) => page,
                    Err(e) => {
                        if generation.try_get_value() == Some(run) {
                            state.try_set(State::Failed(e));
                        }
                        return;
                    }
                };
                if generation.try_get_value() != Some(run) {
                    return;
                }
                if let Some(Value::Array(page_items)) = page.get(field) {
                    items.extend(page_items.iter().cloned());
                }
                state.try_set(State::Fetching(items.len()));
                next = page
                    .get("next_page_uri")
                    .and_then(Value::as_str)
                    .map(|uri| format!("{path}{}", page_query(uri)));
            }
            let text = match format {
                Format::Csv => to_csv(&items),
                Format::Json => serde_json::to_string_pretty(&items).unwrap_or_default(),
            };
            download(&file_name(stem, format), &text, format.mime());
            state.try_set(State::Idle);
        });
    };
    let cancel = move |_| {
        generation.update_value(|g| *g += 1);
        state.set(State::Idle);
    };
    let busy = move || matches!(state.get(), State::Fetching(_));
    view! {
        <div class="export" role="group" aria-label="Export">
            // `aria-disabled`: a disabled button would drop the focus to the page.
            <button type="button" aria-disabled=move || busy().to_string()
                on:click=move |_| if !busy() { export(Format::Csv) }>"Export CSV"</button>
            <button type="button" aria-disabled=move || busy().to_string()
                on:click=move |_| if !busy() { export(Format::Json) }>"Export JSON"</button>
            {move || match state.get() {
                State::Idle => ().into_any(),
                State::Fetching(n) => view! {
                    <span class="export-progress" role="status">
                        <progress aria-label="Exporting"></progress>
                        {format!(" {n} fetched… ")}
                        <button type="button" class="link" on:click=cancel>"Cancel"</button>
                    </span>
                }.into_any(),
                State::Failed(e) => view! {
                    <span class="export-progress error" role="alert">{format!("Export failed: {}", e.message)}</span>
                }.into_any(),
            }}
        </div>
    }
}

/// `credentials-2026-11-23.csv`: the day is the user's own (local) date.
fn file_name(stem: &str, format: Format) -> String {
    let now = js_sys::Date::new_0();
    format!(
        "{stem}-{:04}-{:02}-{:02}.{}",
        now.get_full_year(),
        now.get_month() + 1,
        now.get_date(),
        format.extension()
    )
}

/// Hands `text` to the browser as a download named `name`.
fn download(name: &str, text: &str, mime: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    if let Ok(a) = document
        .create_element("a")
        .map(|a| a.unchecked_into::<web_sys::HtmlAnchorElement>())
    {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// The items as CSV (RFC 4180, CRLF line ends): a header row of every property seen, the id
/// first, then one row per item.
pub fn to_csv(items: &[Value]) -> String {
    if items.is_empty() {
        return String::new();
    }
    // Kept in order as they are found (a binary search each), then the id moved first: no
    // `sort`, whose code is large in the WASM.
    let mut columns: Vec<&str> = Vec::new();
    for item in items {
        if let Value::Object(map) = item {
            for key in map.keys() {
                if let Err(at) = columns.binary_search(&key.as_str()) {
                    columns.insert(at, key);
                }
            }
        }
    }
    if let Some(at) = columns.iter().position(|c| *c == "id") {
        let id = columns.remove(at);
        columns.insert(0, id);
    }
    let mut out = String::new();
    let line = |cells: Vec<String>, out: &mut String| {
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    };
    line(columns.iter().map(|c| cell(c)).collect(), &mut out);
    for item in items {
        let cells = columns
            .iter()
            .map(|c| match item.get(c) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => cell(s),
                Some(other) => cell(&other.to_string()),
            })
            .collect();
        line(cells, &mut out);
    }
    out
}

/// One CSV cell: quoted when it holds a separator, a quote or a line break, and defused when a
/// spreadsheet would take it for a formula.
fn cell(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_owned()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_has_the_id_first_then_every_property_by_name() {
        let items = vec![
            json!({"uri": "/x/1", "id": "cr_1", "description": "a, \"b\"", "acl": ["bind:x"]}),
            json!({"id": "cr_2", "description": "line\nbreak", "extra": null, "n": 3}),
        ];
        assert_eq!(
            to_csv(&items),
            "id,acl,description,extra,n,uri\r\n\
             cr_1,\"[\"\"bind:x\"\"]\",\"a, \"\"b\"\"\",,,/x/1\r\n\
             cr_2,,\"line\nbreak\",,3,\r\n"
        );
    }

    #[test]
    fn csv_defuses_formulas() {
        let items = vec![json!({"id": "k", "description": "=HYPERLINK(\"x\")"})];
        assert_eq!(
            to_csv(&items),
            "id,description\r\nk,\"'=HYPERLINK(\"\"x\"\")\"\r\n"
        );
        assert_eq!(cell("-1"), "'-1");
        assert_eq!(cell("plain"), "plain");
    }

    #[test]
    fn an_empty_list_is_an_empty_file() {
        assert_eq!(to_csv(&[]), "");
    }
}
