//! The once-only authtoken dialog: the API returns a credential's token only in the creation
//! response, so the console shows it once, with a copy button and a plain warning.

use super::copy_then;
use super::dialog::Modal;
use leptos::prelude::*;

#[component]
pub fn TokenDialog(#[prop(into)] token: String, on_close: Callback<()>) -> impl IntoView {
    let copied = RwSignal::new(None::<bool>);
    let copy_text = token.clone();
    let copy = move |_| {
        copy_then(copy_text.clone(), move |ok| {
            copied.try_set(Some(ok));
        });
    };
    view! {
        // The close button has focus first, so a stray Enter does not leave the token unseen.
        <Modal labelled_by="token-title" class="token-dialog" on_close=on_close>
                <h2 id="token-title">"Your new authtoken"</h2>
                <p class="warning">
                    <strong>"Copy it now: you will not see it again."</strong>
                    " The API shows a token only once, when the credential is created. If you lose it, delete the credential and create a new one."
                </p>
                <label for="token-value">"Authtoken"</label>
                <div class="copy-row">
                    <textarea id="token-value" class="token mono" readonly rows="2" spellcheck="false">{token}</textarea>
                    <button type="button" class="copy" on:click=copy>"Copy"</button>
                </div>
                <p class="copied" role="status">
                    {move || match copied.get() {
                        Some(true) => "Copied to the clipboard.",
                        Some(false) => "Could not copy: select the token and copy it by hand.",
                        None => "",
                    }}
                </p>
                <div class="actions">
                    <button type="button" class="primary done" autofocus on:click=move |_| on_close.run(())>
                        "I have copied it"
                    </button>
                </div>
        </Modal>
    }
}
