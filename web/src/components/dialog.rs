//! The one modal dialog of the console, on the native `<dialog>` element.
//!
//! `showModal()` makes the page behind inert (neither focusable nor clickable). Tab and
//! Shift+Tab wrap around inside the dialog (the browser alone would let focus leave it for the
//! browser's own controls, and land on `<body>` on the way back). Escape closes it
//! through `on_close`; when the dialog goes away, focus returns to the element that opened it
//! (when that element is still on the page), so a keyboard user continues where they were.
//! The child marked `autofocus` gets focus first (the safe choice of a confirmation).

use leptos::prelude::*;
use wasm_bindgen::JsCast;

#[component]
pub fn Modal(
    /// The id of the element that names the dialog (its heading).
    #[prop(into)]
    labelled_by: String,
    /// `alertdialog` for confirmations, `dialog` otherwise.
    #[prop(optional)]
    alert: bool,
    #[prop(optional, into)] class: String,
    /// Escape calls this (the browser's own cancel is prevented, so the dialog only ever
    /// closes through the app's state, which removes it).
    on_close: Callback<()>,
    children: Children,
) -> impl IntoView {
    let dialog_ref = NodeRef::<leptos::html::Dialog>::new();
    let opener = StoredValue::new_local(
        web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.active_element())
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()),
    );
    let shown = StoredValue::new_local(None::<web_sys::HtmlDialogElement>);
    Effect::new(move |_| {
        if let Some(dialog) = dialog_ref.get()
            && !dialog.open()
        {
            let _ = dialog.show_modal();
            shown.set_value(Some(dialog.clone()));
            if let Some(first) = dialog
                .query_selector("[autofocus]")
                .ok()
                .flatten()
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
            {
                let _ = first.focus();
            }
        }
    });
    on_cleanup(move || {
        // Closed first: while it is modal the page behind is inert and refuses focus.
        if let Some(Some(dialog)) = shown.try_get_value() {
            dialog.close();
        }
        if let Some(Some(el)) = opener.try_get_value()
            && el.is_connected()
        {
            // Blurred first: the browser may have given it focus back already as the dialog
            // closed, and `focus()` on the focused element does nothing, which left a text
            // field focused but taking no typed text (Chromium) until it was clicked.
            let _ = el.blur();
            let _ = el.focus();
        }
    });
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Tab"
            && let Some(dialog) = dialog_ref.get_untracked()
        {
            wrap_focus(&dialog, &ev);
        }
        if ev.key() == "Escape" {
            // Handled here rather than by the browser's own cancel, so the dialog closes
            // through the app's state (which removes it) and never stays in the page closed.
            ev.prevent_default();
            ev.stop_propagation();
            on_close.run(());
        }
    };
    // Escape with the focus outside the dialog (on the page's body, after the focused button
    // went away) never reaches `on_keydown`; the browser then cancels the dialog itself, and
    // that too goes through the app's state.
    let on_cancel = move |ev: leptos::ev::Event| {
        ev.prevent_default();
        on_close.run(());
        // A cancel the browser does not let be prevented (Chromium's rule for Escapes repeated
        // without a click between) closes the dialog anyway: one the app still shows (a
        // secret's, after its first Escape only warned) is opened again.
        if !ev.cancelable() {
            request_animation_frame(move || {
                // `try_`: the app may have removed it meanwhile, its node reference with it.
                if let Some(dialog) = dialog_ref.try_get_untracked().flatten()
                    && dialog.is_connected()
                    && !dialog.open()
                {
                    let _ = dialog.show_modal();
                }
            });
        }
    };
    view! {
        <dialog node_ref=dialog_ref class=format!("dialog {class}")
            role=if alert { "alertdialog" } else { "dialog" } aria-modal="true"
            aria-labelledby=labelled_by
            on:keydown=on_keydown on:cancel=on_cancel>
            {children()}
        </dialog>
    }
}

/// What Tab can reach inside a dialog.
const FOCUSABLE: &str = "button:not([disabled]), [href], input:not([disabled]), \
     select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex='-1'])";

/// Tab on the last focusable element goes to the first, Shift+Tab on the first to the last.
fn wrap_focus(dialog: &web_sys::HtmlDialogElement, ev: &leptos::ev::KeyboardEvent) {
    let Ok(list) = dialog.query_selector_all(FOCUSABLE) else {
        return;
    };
    let items: Vec<web_sys::HtmlElement> = (0..list.length())
        .filter_map(|i| list.item(i))
        .filter_map(|n| n.dyn_into::<web_sys::HtmlElement>().ok())
        .collect();
    let (Some(first), Some(last)) = (items.first(), items.last()) else {
        return;
    };
    let active = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.active_element());
    let is = |el: &web_sys::HtmlElement| {
        active
            .as_ref()
            .is_some_and(|a| a.is_same_node(Some(el.as_ref())))
    };
    let inside = active
        .as_ref()
        .is_some_and(|a| dialog.contains(Some(a.as_ref())));
    let target = if ev.shift_key() {
        (is(first) || !inside).then_some(last)
    } else {
        (is(last) || !inside).then_some(first)
    };
    if let Some(target) = target {
        ev.prevent_default();
        let _ = target.focus();
    }
}
