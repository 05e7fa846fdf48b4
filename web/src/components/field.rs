//! Labelled form fields with their error under them.
//!
//! A field shows the first of: the live `tunnel-core` validation message for its name, or the
//! message the server returned for that name on the last submit. Messages are text nodes.

use super::text::message;
use crate::api::ApiError;
use leptos::prelude::*;
use tunnel_core::FieldError;

/// The message for `field`: live validation first, then the server's answer.
pub fn message_for(field: &str, live: &[FieldError], server: Option<&ApiError>) -> Option<String> {
    live.iter()
        .find(|e| e.field == field)
        .map(|e| e.message.clone())
        .or_else(|| server.and_then(|e| e.field_message(field)))
}

/// The message for a list field (`hostports`, `labels`): the live message of the list or of
/// any of its items (`hostports[1]`), then the server's answer for the list.
pub fn list_message_for(
    field: &str,
    live: &[FieldError],
    server: Option<&ApiError>,
) -> Option<String> {
    live.iter()
        .find(|e| e.field.starts_with(field))
        .map(|e| e.message.clone())
        .or_else(|| server.and_then(|e| e.field_message(field)))
}

/// A single-line or multi-line text field.
#[component]
pub fn TextField(
    /// The JSON name of the field, also the element id suffix (`field-description`).
    #[prop(into)]
    name: String,
    #[prop(into)] label: String,
    value: RwSignal<String>,
    /// The message to show under the field, if any.
    #[prop(into)]
    error: Signal<Option<String>>,
    #[prop(optional)] multiline: bool,
    #[prop(optional, into)] hint: Option<String>,
    #[prop(optional, into)] placeholder: Option<String>,
) -> impl IntoView {
    let id = format!("field-{name}");
    let err_id = format!("{id}-error");
    let has_error = move || error.with(Option::is_some);
    let input = if multiline {
        view! {
            <textarea id=id.clone() name=name.clone() rows="3" bind:value=value
                placeholder=placeholder.clone() aria-invalid=move || has_error().to_string()
                aria-describedby=err_id.clone()></textarea>
        }
        .into_any()
    } else {
        view! {
            <input id=id.clone() name=name.clone() type="text" bind:value=value autocomplete="off"
                placeholder=placeholder.clone() aria-invalid=move || has_error().to_string()
                aria-describedby=err_id.clone() />
        }
        .into_any()
    };
    view! {
        <div class="field" class:invalid=has_error>
            <label for=id>{label}</label>
            {input}
            {hint.map(|h| view! { <p class="hint">{h}</p> })}
            <p class="error" id=err_id role="alert">{move || error.get().map(|e| message(&e))}</p>
        </div>
    }
}
