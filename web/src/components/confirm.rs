//! A confirmation dialog for destructive or disruptive actions. Esc or "Cancel" closes it.

use super::dialog::Modal;
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
    /// A disruptive but recoverable action (restart, update): the confirm button is not styled
    /// as destructive.
    #[prop(optional)]
    safe: bool,
) -> impl IntoView {
    let confirm_class = if safe {
        "primary confirm"
    } else {
        "danger confirm"
    };
    view! {
        <Modal labelled_by="confirm-title" alert=true on_close=on_cancel>
            <h2 id="confirm-title">{title}</h2>
            <p>{message}</p>
            {notes.into_iter().map(|n| view! { <p class="note">{n}</p> }).collect_view()}
            <div class="actions">
                // Focus on the safe choice first, so Enter does not confirm by accident.
                <button type="button" autofocus on:click=move |_| on_cancel.run(())>"Cancel"</button>
                <button type="button" class=confirm_class on:click=move |_| on_confirm.run(())>{confirm_label}</button>
            </div>
        </Modal>
    }
}
