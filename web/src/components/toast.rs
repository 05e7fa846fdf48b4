//! Toasts: short messages about completed actions, announced to screen readers.

use crate::components::{focused, until_the_user_acts};
use crate::state::use_app;
use leptos::prelude::*;

#[component]
pub fn Toasts() -> impl IntoView {
    let app = use_app();
    // A toast appearing over the focused element (a form's field at the window's bottom, where
    // the user pressed Enter) would hide what they are typing in: the page scrolls that element
    // clear of the stack. Later focus moves keep clear of it through the scroll padding that
    // style.css gives the page while a toast shows.
    let shown = Memo::new(move |_| app.toasts.with(Vec::len));
    Effect::new(move |before: Option<usize>| {
        let now = shown.get();
        if now > before.unwrap_or(0) {
            keep_focus_clear_of_toasts();
        }
        now
    });
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

/// Scrolls the focused element clear of the toasts whenever, during the next second, they
/// cover it: the action that made the toast usually reloads a list above the form too, and the
/// rows arriving move the form after the toast is drawn.
fn keep_focus_clear_of_toasts() {
    until_the_user_acts(20, scroll_focus_clear_of_toasts);
}

/// Scrolls the page so that the focused element ends above the toasts, when they cover it.
fn scroll_focus_clear_of_toasts() {
    let (Some(active), Some(stack)) = (
        focused(),
        document().query_selector(".toasts").ok().flatten(),
    ) else {
        return;
    };
    // What scrolling cannot move (the header, the selection bar stuck to the window's bottom)
    // or what sits above the toasts anyway (a dialog, a toast's own button): scrolling for it
    // would only move the page under it, again at every check.
    let fixed = active
        .closest("dialog, header, .bulk-bar, .toasts")
        .ok()
        .flatten()
        .is_some();
    if fixed {
        return;
    }
    let (a, t) = (
        active.get_bounding_client_rect(),
        stack.get_bounding_client_rect(),
    );
    let covered = t.height() > 0.0
        && a.bottom() > t.top()
        && a.top() < t.bottom()
        && a.right() > t.left()
        && a.left() < t.right();
    if covered {
        // The gap between the element and the stack: the toasts' own gap (.5rem).
        window().scroll_by_with_x_and_y(0.0, a.bottom() - t.top() + 8.0);
    }
}
