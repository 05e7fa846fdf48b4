//! The once-only secret dialog: the API returns a credential's authtoken and an API key only in
//! the creation response, and an event destination's signing secret only when it is created or
//! rotated, so the console shows each once, with a copy button and a plain warning.
//!
//! Escape, pressed out of habit, must not throw the secret away unseen: until the copy button
//! has copied it, the first Escape only says so, and a second one closes. Nor must Enter: the
//! copy button has the focus first. The "I have copied it" button closes at once (its words are
//! the confirmation).
//!
//! Nor is a secret lost when the user leaves its page before the answer comes (a click on the
//! navigation while a create runs): [`ShowSecret`] shows it over the page they are on, from the
//! console's top level.

use super::copy_then;
use super::dialog::Modal;
use leptos::prelude::*;

/// Which secret the dialog shows (the words around it differ, the dialog does not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ShownOnce {
    /// A new credential's authtoken.
    #[default]
    Authtoken,
    /// An event destination's signing secret (created or rotated).
    SigningSecret,
    /// A new API key.
    ApiKey,
}

impl ShownOnce {
    fn title(self) -> &'static str {
        match self {
            ShownOnce::Authtoken => "Your new authtoken",
            ShownOnce::SigningSecret => "Your new signing secret",
            ShownOnce::ApiKey => "Your new API key",
        }
    }

    fn label(self) -> &'static str {
        match self {
            ShownOnce::Authtoken => "Authtoken",
            ShownOnce::SigningSecret => "Signing secret",
            ShownOnce::ApiKey => "API key",
        }
    }

    fn explanation(self) -> &'static str {
        match self {
            ShownOnce::Authtoken => {
                " The API shows a token only once, when the credential is created. If you lose it, delete the credential and create a new one."
            }
            ShownOnce::SigningSecret => {
                " Your webhook receiver checks each delivery's signature with it. The API shows it only when the destination is created or the secret rotated; if you lose it, rotate the secret."
            }
            ShownOnce::ApiKey => {
                " Send it as `Authorization: Bearer <key>`. The API shows a key only once, when it is created. If you lose it, create a new key and delete this one."
            }
        }
    }
}

#[component]
pub fn TokenDialog(
    #[prop(into)] token: String,
    on_close: Callback<()>,
    /// Which secret it is (an authtoken unless said otherwise).
    #[prop(optional)]
    kind: ShownOnce,
) -> impl IntoView {
    let copied = RwSignal::new(None::<bool>);
    // Set by an Escape pressed before the secret was copied; the next Escape closes.
    let escape_warned = RwSignal::new(false);
    let on_escape = Callback::new(move |()| {
        if copied.get_untracked() == Some(true) || escape_warned.get_untracked() {
            on_close.run(());
        } else {
            escape_warned.set(true);
        }
    });
    let copy_text = token.clone();
    let copy = move |_| {
        copy_then(copy_text.clone(), move |ok| {
            copied.try_set(Some(ok));
            // What the copy did is the news now: a failed copy says so rather than the earlier
            // warning, and the next Escape warns afresh.
            escape_warned.try_set(false);
        });
    };
    view! {
        // The copy button has focus first: a stray Enter (the key that submitted the form,
        // pressed twice or held) copies the secret, where on the close button it threw the
        // secret away before it was seen.
        <Modal labelled_by="token-title" class="token-dialog" on_close=on_escape>
                <h2 id="token-title">{kind.title()}</h2>
                <p class="warning">
                    <strong>"Copy it now: you will not see it again."</strong>
                    {super::text::with_code_spans(kind.explanation())}
                </p>
                <label for="token-value">{kind.label()}</label>
                <div class="copy-row">
                    <textarea id="token-value" class="token mono" readonly rows="3" spellcheck="false">{token}</textarea>
                    <button type="button" class="copy" autofocus on:click=copy>"Copy"</button>
                </div>
                <p class="copied" role="status">
                    {move || match (copied.get(), escape_warned.get()) {
                        (Some(true), _) => "Copied to the clipboard.",
                        (_, true) => "Not copied yet: press Escape again to close without it.",
                        (Some(false), false) => "Could not copy: select it and copy it by hand.",
                        (None, false) => "",
                    }}
                </p>
                <div class="actions">
                    <button type="button" class="primary done" on:click=move |_| on_close.run(())>
                        "I have copied it"
                    </button>
                </div>
        </Modal>
    }
}

/// Where a shown-once secret is shown: over whatever page the user is on when its answer comes
/// (the console's top level renders it), never inside the page that asked. That page may be
/// gone by then (the user clicked on in the navigation, or went back and forth to a fresh copy
/// of it while the router was still swapping), and the API never shows the secret again. A
/// page takes one with [`ShowSecret::use_it`], which knows the page: what it wants done after
/// the dialog closes (open the new resource's page) is done only if the user is still on it.
#[derive(Debug, Clone)]
pub struct ShowSecret {
    place: Place,
    page: super::ThisPage,
}

/// What is done once the dialog closes.
type Then = Box<dyn FnOnce()>;

/// The console's one place for the secret on show.
#[derive(Debug, Clone, Copy)]
struct Place {
    shown: RwSignal<Option<(ShownOnce, String)>>,
    then: StoredValue<Option<Then>, LocalStorage>,
}

impl Place {
    /// The console's (provided by the first caller: its top level; a fresh one for components
    /// mounted alone).
    fn use_it() -> Place {
        use_context::<Place>().unwrap_or_else(|| {
            let made = Place {
                shown: RwSignal::new(None),
                then: StoredValue::new_local(None),
            };
            provide_context(made);
            made
        })
    }
}

impl ShowSecret {
    /// For the page being built.
    pub fn use_it() -> ShowSecret {
        ShowSecret {
            place: Place::use_it(),
            page: super::ThisPage::new(),
        }
    }

    /// Shows `secret`, a secret of kind `kind`; `then` runs when its dialog closes, if the user
    /// is still on the page that asked.
    pub fn show(&self, kind: ShownOnce, secret: String, then: impl FnOnce() + 'static) {
        let page = self.page.clone();
        self.place.then.set_value(Some(Box::new(move || {
            if page.still_shown() {
                then();
            }
        })));
        self.place.shown.set(Some((kind, secret)));
    }

    /// The dialog, while a secret is on show: the console's top level, which provides the
    /// place.
    pub fn view() -> impl IntoView {
        let place = Place::use_it();
        let close = Callback::new(move |()| {
            place.shown.set(None);
            if let Some(then) = place.then.try_update_value(Option::take).flatten() {
                then();
            }
        });
        move || {
            place
                .shown
                .get()
                .map(|(kind, token)| view! { <TokenDialog token=token on_close=close kind=kind /> })
        }
    }
}
