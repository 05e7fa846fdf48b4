//! A confirmation dialog for destructive or disruptive actions. Esc or "Cancel" closes it.

use super::close_on_escape;
use leptos::prelude::*;

#[component]
pub fn ConfirmDialog(
    #[prop(into)] title: String,
    #[prop(into)] message: String,
    #[prop(into)] confirm_label: String,
    on_confirm: Callback<()>,
    on_cancel: Callback<()>,
    /// Extra caveats shown under the message.
    #[prop(optional)]
    notes: Vec<String>,
) -> impl IntoView {
    close_on_escape(on_cancel);
    let cancel_ref = NodeRef::<leptos::html::Button>::new();
    // Focus the safe choice first, so Enter does not confirm by accident.
    Effect::new(move |_| {
        if let Some(b) = cancel_ref.get() {
            let _ = b.focus();
        }
    });
    view! {
        <div class="backdrop">
            <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="confirm-title">
                <h2 id="confirm-title">{title}</h2>
                <p>{message}</p>
                {notes.into_iter().map(|n| view! { <p class="note">{n}</p> }).collect_view()}
                <div class="actions">
                    <button type="button" node_ref=cancel_ref on:click=move |_| on_cancel.run(())>"Cancel"</button>
                    <button type="button" class="danger confirm" on:click=move |_| on_confirm.run(())>{confirm_label}</button>
                </div>
            </div>
        </div>
    }
}
