//! Confirmation before destructive or disruptive actions: the dialog (Esc or "Cancel" closes
//! it), and [`ConfirmedDelete`], the delete flow of the detail pages built on it.

use super::dialog::Modal;
use super::submit::Submit;
use crate::api::{ApiError, use_api};
use crate::state::use_app;
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

/// A delete behind a confirmation, the same on every detail page: a button asks, the dialog
/// confirms, then the DELETE is sent through a [`Submit`] (its error shown where the page puts
/// [`ConfirmedDelete::failure`]) and `on_deleted` runs (a toast, and back to the list).
#[derive(Debug, Clone, Copy)]
pub struct ConfirmedDelete {
    asked: RwSignal<bool>,
    path: StoredValue<String>,
    submit: Submit<String, ()>,
}

impl ConfirmedDelete {
    /// Deletes the resource at API `path`.
    pub fn new(path: String, on_deleted: impl Fn() + 'static) -> ConfirmedDelete {
        let api = use_api();
        ConfirmedDelete {
            asked: RwSignal::new(false),
            path: StoredValue::new(path),
            submit: Submit::new(
                move |path: &String| {
                    let path = path.clone();
                    async move {
                        match api.delete(&path).await {
                            // Deleted meanwhile (another tab, another user): gone either way,
                            // and the page on show is stale.
                            Err(e) if e.status == 404 => Ok(()),
                            done => done,
                        }
                    }
                },
                move |_| on_deleted(),
            ),
        }
    }

    /// Deletes the resource at API `path`, then says `done` in a toast and goes back to the
    /// list at console route `list` as the user last saw it, search and order kept (the detail
    /// pages).
    ///
    /// Only from the page it was sent from: a user who moved on while it ran stays where they
    /// are (and keeps what they were typing there); the toast says it was done.
    pub fn back_to_list(path: String, done: String, list: &'static str) -> ConfirmedDelete {
        let app = use_app();
        let leave = super::use_leave_when_done();
        ConfirmedDelete::new(path, move || {
            app.toast(done.clone(), false);
            leave(&app.list_url(list));
        })
    }

    /// The button that asks; unavailable, saying so, while the delete runs. `aria-disabled`,
    /// not `disabled`: the dialog gives the focus back to this button, and a disabled one would
    /// drop it to the page (a refused delete then left the keyboard user nowhere).
    pub fn button(self, label: &'static str) -> impl IntoView {
        let busy = move || self.submit.busy();
        view! {
            <button type="button" class="danger" aria-disabled=move || busy().to_string()
                aria-busy=move || busy().to_string()
                on:click=move |_| if !busy() { self.asked.set(true) }>
                {move || if busy() { "Deleting…" } else { label }}
            </button>
        }
    }

    /// The confirmation dialog, while asked.
    pub fn dialog(
        self,
        title: &'static str,
        message: String,
        confirm_label: &'static str,
    ) -> impl IntoView {
        let close = Callback::new(move |_| self.asked.set(false));
        let confirm = Callback::new(move |_| {
            self.asked.set(false);
            self.submit.send(self.path.get_value());
        });
        move || {
            self.asked.get().then(|| {
                view! {
                    <ConfirmDialog title=title message=message.clone() confirm_label=confirm_label
                        on_confirm=confirm on_cancel=close />
                }
            })
        }
    }

    /// The error of a delete that failed (tracked).
    pub fn error(&self) -> Option<ApiError> {
        self.submit.error()
    }

    /// The error box of a delete that failed, under `title`.
    pub fn failure(self, title: &'static str) -> impl IntoView {
        self.submit.failure(title)
    }
}
