//! Toasts: short messages about completed actions, announced to screen readers.

use crate::state::use_app;
use leptos::prelude::*;

#[component]
pub fn Toasts() -> impl IntoView {
    let app = use_app();
    view! {
        <div class="toasts" role="status" aria-live="polite">
            <For each=move || app.toasts.get() key=|t| t.id let:toast>
                <div class="toast" class:toast-error=toast.error>
                    <span>{toast.text.clone()}</span>
                    <button type="button" class="link" aria-label="Dismiss"
                        on:click=move |_| app.dismiss_toast(toast.id)>"×"</button>
                </div>
            </For>
        </div>
    }
}
