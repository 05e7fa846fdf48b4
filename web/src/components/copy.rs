//! Ids, uris and other long values: shown in full (wrapping anywhere, never widening the page),
//! each with a copy button, because a long value is copied far more often than it is read.

use super::copy_then;
use leptos::prelude::*;

/// A small button that copies `text`; says "Copied" (or that it could not) for a moment.
#[component]
pub fn CopyButton(
    #[prop(into)] text: String,
    /// What is copied, for the accessible name ("Copy ID").
    #[prop(into)]
    what: String,
) -> impl IntoView {
    let state = RwSignal::new(None::<bool>);
    let label = format!("Copy {what}");
    let copy = move |_| {
        copy_then(text.clone(), move |ok| {
            state.try_set(Some(ok));
            set_timeout(
                move || {
                    state.try_set(None);
                },
                std::time::Duration::from_millis(1500),
            );
        });
    };
    view! {
        <button type="button" class="link copy-value" title=label.clone() aria-label=label on:click=copy>
            {move || match state.get() {
                Some(true) => "Copied",
                Some(false) => "Copy failed",
                None => "Copy",
            }}
        </button>
    }
}

/// A value in monospace that wraps anywhere, with its copy button.
#[component]
pub fn CopyValue(#[prop(into)] value: String, #[prop(into)] what: String) -> impl IntoView {
    view! {
        <span class="copy-value-line">
            <code class="value">{value.clone()}</code>
            <CopyButton text=value what=what />
        </span>
    }
}
