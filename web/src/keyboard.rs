//! Keyboard shortcuts (docs/console.md, keyboard): `/` search, `n` new, `g` then a letter to a
//! section, `j` / `k` to move between the rows of a list (Enter opens the focused one), `x` to
//! select the focused row (on a list with bulk actions), `b` to the selection's actions, `?`
//! the list of shortcuts. They are single characters, so they are ignored while the user types
//! in a field, while a dialog is open, and with Ctrl, Alt or Meta held; and the user can turn
//! them off (kept in `localStorage`), since a speech-input user may trigger them by accident.
//! The top bar's "?" button opens the list whatever the setting.

use crate::components::dialog::Modal;
use crate::routes;
use leptos::prelude::*;
use leptos_router::NavigateOptions;
use leptos_router::hooks::use_navigate;
use wasm_bindgen::JsCast;

/// Where the setting is kept: `off` when the user turned the shortcuts off.
const STORAGE_KEY: &str = "tunnel-console.shortcuts";

/// How long after `g` its letter may come, in ms.
const CHORD_MS: f64 = 1500.0;

/// The sections `g` leads to: (letter, route).
const GO: [(&str, &str); 10] = [
    ("c", routes::CREDENTIALS),
    ("h", routes::SSH_CAS),
    ("s", routes::TUNNEL_SESSIONS),
    ("t", routes::TLS_EDGES),
    ("b", routes::BACKENDS),
    ("e", routes::EVENT_SUBSCRIPTIONS),
    ("d", routes::EVENT_DESTINATIONS),
    ("a", routes::ACTIVITY),
    ("k", routes::API_KEYS),
    ("u", routes::USERS),
];

/// Every shortcut as the list shows it: (keys, what it does).
pub const SHORTCUTS: [(&str, &str); 17] = [
    ("/", "Search the list"),
    (
        "n",
        "New (on a page that creates; its form's first field where it creates in place)",
    ),
    ("j / k", "Next / previous row of the list"),
    ("Enter", "Open the focused row"),
    ("x", "Select or unselect the focused row"),
    ("b", "To the actions on the selected rows"),
    ("g c", "Go to Credentials"),
    ("g h", "Go to SSH CAs"),
    ("g s", "Go to Sessions"),
    ("g t", "Go to TLS edges"),
    ("g b", "Go to Backends"),
    ("g e", "Go to Events"),
    ("g d", "Go to Destinations"),
    ("g a", "Go to Activity"),
    ("g k", "Go to API keys"),
    ("g u", "Go to Users"),
    ("?", "This list"),
];

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

fn stored_enabled() -> bool {
    storage()
        .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten())
        .is_none_or(|v| v != "off")
}

fn document() -> Option<web_sys::Document> {
    web_sys::window()?.document()
}

/// Whether the key went to something the user types in. A checkbox, radio button or button
/// input takes no letters: the shortcuts work there (the focus is on a row's checkbox after
/// `x`, and on "select all" after a bulk run).
fn typing(target: Option<web_sys::EventTarget>) -> bool {
    let Some(el) = target.and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) else {
        return false;
    };
    match el.tag_name().as_str() {
        "INPUT" => !el.get_attribute("type").is_some_and(|t| {
            ["checkbox", "radio", "button", "submit", "reset"]
                .iter()
                .any(|kind| t.eq_ignore_ascii_case(kind))
        }),
        "TEXTAREA" | "SELECT" => true,
        _ => el.is_content_editable(),
    }
}

fn query(selector: &str) -> Option<web_sys::HtmlElement> {
    document()?
        .query_selector(selector)
        .ok()
        .flatten()?
        .dyn_into()
        .ok()
}

/// Moves the focus `by` rows (±1) among the name links of the list in `<main>`.
fn move_row(by: i32) {
    let Some(doc) = document() else {
        return;
    };
    let Ok(links) = doc.query_selector_all("main table tbody tr td.name-cell a.name") else {
        return;
    };
    let links: Vec<web_sys::HtmlElement> = (0..links.length())
        .filter_map(|i| links.item(i)?.dyn_into().ok())
        .collect();
    if links.is_empty() {
        return;
    }
    // The row holding the focus, on its name link or its checkbox.
    let row_of = |el: &web_sys::Element| el.closest("tr").ok().flatten();
    let active_row = doc.active_element().as_ref().and_then(row_of);
    let at = links.iter().position(|l| {
        active_row
            .as_ref()
            .is_some_and(|row| row_of(l.unchecked_ref()).as_ref() == Some(row))
    });
    let next = match at {
        None => 0,
        Some(i) => (i as i32 + by).clamp(0, links.len() as i32 - 1) as usize,
    };
    let _ = links[next].focus();
}

/// Toggles the checkbox of the row holding the focus (a click, so Shift+click ranges and the
/// bar follow as with the mouse). Whether there was one.
fn toggle_focused_row() -> bool {
    let Some(row) = document()
        .and_then(|d| d.active_element())
        .and_then(|el| el.closest("main table tbody tr").ok().flatten())
    else {
        return false;
    };
    let Some(check) = row
        .query_selector("input.row-select")
        .ok()
        .flatten()
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok())
    else {
        return false;
    };
    check.click();
    true
}

/// The shortcuts, listening on the window, and their list (a dialog, opened by `?` or by
/// [`ShortcutsButton`]). Mounted once, inside the router.
#[component]
pub fn Shortcuts(open: RwSignal<bool>) -> impl IntoView {
    let enabled = RwSignal::new(stored_enabled());
    let pending_g = StoredValue::new(None::<f64>);
    let navigate = use_navigate();
    let handle = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.default_prevented()
            || ev.ctrl_key()
            || ev.meta_key()
            || ev.alt_key()
            || !enabled.get_untracked()
            || open.get_untracked()
            || typing(ev.target())
            || query("dialog[open]").is_some()
        {
            return;
        }
        let key = ev.key();
        let now = js_sys::Date::now();
        if pending_g.get_value().is_some_and(|at| now - at < CHORD_MS) {
            pending_g.set_value(None);
            if let Some((_, route)) = GO.iter().find(|(letter, _)| *letter == key) {
                ev.prevent_default();
                navigate(route, NavigateOptions::default());
            }
            return;
        }
        let handled = match key.as_str() {
            "/" => query("#list-search").map(|el| el.focus()).is_some(),
            // The create page's link, or on a page that creates in place (TLS edges) the first
            // field of its form.
            "n" => query("main .page-head a.button.primary")
                .map(|el| el.click())
                .or_else(|| {
                    query("main form[data-create] input, main form[data-create] textarea").map(
                        |el| {
                            let _ = el.focus();
                        },
                    )
                })
                .is_some(),
            "j" => {
                move_row(1);
                true
            }
            "k" => {
                move_row(-1);
                true
            }
            "x" => toggle_focused_row(),
            // The selection bar comes after the whole table in the tab order (a page of 100
            // rows is hundreds of Tabs away); its first action.
            "b" => query("main .bulk-bar button")
                .map(|el| el.focus())
                .is_some(),
            "g" => {
                pending_g.set_value(Some(now));
                true
            }
            "?" => {
                open.set(true);
                true
            }
            _ => false,
        };
        if handled {
            ev.prevent_default();
        }
    });
    on_cleanup(move || handle.remove());
    let toggle = move |ev: leptos::ev::Event| {
        let on = event_target_checked(&ev);
        enabled.set(on);
        if let Some(s) = storage() {
            let _ = if on {
                s.remove_item(STORAGE_KEY)
            } else {
                s.set_item(STORAGE_KEY, "off")
            };
        }
    };
    let close = Callback::new(move |_| open.set(false));
    move || {
        open.get().then(|| {
            view! {
                <Modal labelled_by="shortcuts-title" class="shortcuts" on_close=close>
                    <h2 id="shortcuts-title">"Keyboard shortcuts"</h2>
                    <p class="hint">"Not while typing in a field. Enter and Tab work as everywhere."</p>
                    <table class="shortcut-list">
                        <thead><tr><th scope="col">"Keys"</th><th scope="col">"Does"</th></tr></thead>
                        <tbody>
                            {SHORTCUTS.iter().map(|(keys, what)| view! {
                                <tr><td><kbd>{*keys}</kbd></td><td>{*what}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    <label class="check">
                        <input type="checkbox" prop:checked=move || enabled.get() on:change=toggle />
                        " Single-key shortcuts on"
                    </label>
                    <div class="actions">
                        <button type="button" class="primary" autofocus on:click=move |_| open.set(false)>"Close"</button>
                    </div>
                </Modal>
            }
        })
    }
}

/// The top bar's button opening the list of shortcuts (which also turns them on or off).
#[component]
pub fn ShortcutsButton(open: RwSignal<bool>) -> impl IntoView {
    view! {
        <button type="button" class="shortcuts-button" title="Keyboard shortcuts"
            aria-label="Keyboard shortcuts" on:click=move |_| open.set(true)>"?"</button>
    }
}
