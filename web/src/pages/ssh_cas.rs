//! SSH certificate authorities (`docs/api/ssh_cas.md`): list, create (key type first, then
//! only the valid curve or size), detail with the public key and a copy button, edit
//! description and metadata, delete.

use super::{detail_page, identity_props, non_empty, title_or};
use crate::api::ApiError;
use crate::components::bulk::BulkAction;
use crate::components::confirm::ConfirmedDelete;
use crate::components::copy_then;
use crate::components::error_view::ErrorView;
use crate::components::field::{TextField, message_for};
use crate::components::list::{ListPage, RowName};
use crate::components::submit::Submit;
use crate::components::time::RelativeTime;
use crate::components::{keep_focus_on, use_open_created};
use crate::routes;
use crate::state::{now_ms, use_app};
use leptos::prelude::*;
use leptos_router::components::A;
use tunnel_core::Validate;
use tunnel_core::paths;
use tunnel_core::resources::ssh_ca::{
    SshCertificateAuthority as Ca, SshCertificateAuthorityCreate as CaCreate,
    SshCertificateAuthorityList as Page, SshCertificateAuthorityUpdate as CaUpdate,
};
use tunnel_core::ssh::{DEFAULT_RSA_KEY_SIZE, EllipticCurve, KeySpec, KeyType, RSA_KEY_SIZES};

/// What the list does to selected rows.
const BULK: &[BulkAction] = &[BulkAction::delete(
    paths::ssh_certificate_authority,
    "will be deleted. This cannot be undone.",
)];

#[component]
pub fn SshCaList() -> impl IntoView {
    ListPage::new(paths::SSH_CERTIFICATE_AUTHORITIES, routes::ssh_ca)
        .search("Search SSH CAs")
        .noun("SSH CA", "SSH CAs")
        .bulk(BULK)
        .export("ssh-certificate-authorities")
        .title("SSH certificate authorities")
        .create(routes::SSH_CA_NEW, "New SSH CA")
        .columns(&["SSH certificate authority", "Key type", "Created"])
        .empty("No SSH certificate authorities yet.")
        .untitled("Untitled SSH CA")
        .rows::<Page, _, _>(|c: Ca| {
            let cells = view! { <td>{key_label(&c)}</td><td><RelativeTime ts=c.created_at /></td> };
            (RowName::new(c.id, c.description), cells)
        })
}

/// The create form. Key type first; then only the choices valid for it: a curve for ECDSA, a
/// size for RSA, nothing for Ed25519. Submits a validated request through `on_submit`.
#[component]
pub fn SshCaForm(
    on_submit: Callback<CaCreate>,
    #[prop(into)] busy: Signal<bool>,
    #[prop(into)] server_error: Signal<Option<ApiError>>,
) -> impl IntoView {
    let description = RwSignal::new(String::new());
    let metadata = RwSignal::new(String::new());
    let key_type = RwSignal::new(KeyType::DEFAULT);
    let curve = RwSignal::new(EllipticCurve::DEFAULT);
    let size = RwSignal::new(DEFAULT_RSA_KEY_SIZE);
    let request = Memo::new(move |_| {
        let kt = key_type.get();
        CaCreate {
            description: non_empty(description.get()),
            metadata: non_empty(metadata.get()),
            private_key_type: Some(kt.as_str().to_owned()),
            elliptic_curve: (kt == KeyType::Ecdsa).then(|| curve.get().as_str().to_owned()),
            key_size: (kt == KeyType::Rsa).then(|| i64::from(size.get())),
        }
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    let msg = move |field: &'static str| {
        Signal::derive(move || {
            live.with(|l| server_error.with(|s| message_for(field, l, s.as_ref())))
        })
    };
    // Time the generation, so a slow RSA 4096 key visibly makes progress.
    let started = RwSignal::new(0.0);
    let now = RwSignal::new(0.0);
    Effect::new(move |_| {
        if busy.get() {
            started.set(now_ms());
            now.set(now_ms());
        }
    });
    let tick = set_interval_with_handle(
        move || {
            if busy.get_untracked() {
                now.set(now_ms())
            }
        },
        std::time::Duration::from_millis(500),
    );
    on_cleanup(move || {
        if let Ok(h) = tick {
            h.clear()
        }
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if live.with(Vec::is_empty) && !busy.get_untracked() {
            on_submit.run(request.get_untracked());
        }
    };
    let spec = move || request.with(|r| r.key_spec().ok());
    view! {
        <form class="card form ssh-form" on:submit=submit novalidate>
            <div class="field">
                <label for="field-private_key_type">"Key type"</label>
                <select id="field-private_key_type" on:change=move |ev| {
                    if let Some(k) = KeyType::parse(&event_target_value(&ev)) { key_type.set(k) }
                }>
                    {KeyType::ALL.iter().map(|k| view! {
                        <option value=k.as_str() selected=move || key_type.get() == *k>{key_type_label(*k)}</option>
                    }).collect_view()}
                </select>
                <p class="error" role="alert">{msg("private_key_type")}</p>
            </div>
            <Show when=move || key_type.get() == KeyType::Ecdsa>
                <div class="field">
                    <label for="field-elliptic_curve">"Elliptic curve"</label>
                    <select id="field-elliptic_curve" on:change=move |ev| {
                        if let Some(c) = EllipticCurve::parse(&event_target_value(&ev)) { curve.set(c) }
                    }>
                        {EllipticCurve::ALL.iter().map(|c| view! {
                            <option value=c.as_str() selected=move || curve.get() == *c>{c.label()}</option>
                        }).collect_view()}
                    </select>
                    <p class="error" role="alert">{msg("elliptic_curve")}</p>
                </div>
            </Show>
            <Show when=move || key_type.get() == KeyType::Rsa>
                <div class="field">
                    <label for="field-key_size">"Key size"</label>
                    <select id="field-key_size" on:change=move |ev| {
                        if let Ok(s) = event_target_value(&ev).parse() { size.set(s) }
                    }>
                        {RSA_KEY_SIZES.iter().map(|s| view! {
                            <option value=s.to_string() selected=move || size.get() == *s>{format!("{s} bits")}</option>
                        }).collect_view()}
                    </select>
                    <p class="error" role="alert">{msg("key_size")}</p>
                </div>
            </Show>
            <TextField name="description" label="Description" value=description error=msg("description")
                hint="At most 255 bytes." />
            <TextField name="metadata" label="Metadata" value=metadata error=msg("metadata") multiline=true
                hint="At most 4096 bytes." />
            {move || server_error.get().map(|e| view! { <ErrorView error=e title="The SSH CA was not created" /> })}
            {move || busy.get().then(|| {
                let slow = matches!(spec(), Some(KeySpec::Rsa(4096)));
                view! {
                    <div class="progress" role="status" aria-live="polite">
                        <progress></progress>
                        <span>{move || {
                            // Whole seconds as an integer: printing an `f64` would compile
                            // the float formatting of `core` (16 KB) into the WASM.
                            let secs = ((now.get() - started.get()) / 1000.0).max(0.0) as u64;
                            if slow {
                                format!("Generating a 4096-bit RSA key on the server; this can take several seconds… ({secs} s)")
                            } else {
                                format!("Generating the key… ({secs} s)")
                            }
                        }}</span>
                    </div>
                }
            })}
            <div class="actions">
                <A href=routes::SSH_CAS attr:class="button">"Cancel"</A>
                // While the key is generated (seconds for RSA) the button stays focusable, so the
                // focus does not drop to the page: `aria-disabled`, and `submit` sends once.
                <button type="submit" class="primary" disabled=move || !live.with(Vec::is_empty)
                    aria-disabled=move || busy.get().to_string()>
                    {move || if busy.get() { "Generating…" } else { "Create SSH CA" }}
                </button>
            </div>
        </form>
    }
}

/// The CA's key as people name it (`ECDSA P-384`, `RSA 4096`), read from its public key; the
/// API's `key_type` when the line is not one this server writes.
fn key_label(ca: &Ca) -> String {
    KeySpec::of_public_key(&ca.public_key).map_or_else(|| ca.key_type.clone(), KeySpec::label)
}

fn key_type_label(k: KeyType) -> &'static str {
    match k {
        KeyType::Ed25519 => "Ed25519 (recommended)",
        KeyType::Ecdsa => "ECDSA",
        KeyType::Rsa => "RSA",
    }
}

#[component]
pub fn SshCaNew() -> impl IntoView {
    let app = use_app();
    let open_created = use_open_created();
    let create = Submit::post(paths::SSH_CERTIFICATE_AUTHORITIES, move |ca: &Ca| {
        app.toast(format!("SSH CA {} created.", ca.id), false);
        open_created(&routes::ssh_ca(&ca.id));
    });
    view! {
        <p class="crumbs"><A href=routes::SSH_CAS exact=true>"SSH CAs"</A>" / new"</p>
        <h1>"New SSH certificate authority"</h1>
        <p class="lead">"The server generates the private key and never returns it."</p>
        <SshCaForm on_submit=Callback::new(move |body| create.send(body)) busy=Signal::derive(move || create.busy())
            server_error=create.error_signal() />
    }
}

#[component]
pub fn SshCaDetail() -> impl IntoView {
    detail_page(
        routes::SSH_CAS,
        "SSH CAs",
        paths::ssh_certificate_authority,
        ssh_ca_view,
    )
}

/// A loaded SSH CA: its properties, the public key to copy, the edit form and delete.
fn ssh_ca_view(ca: Ca, reload: RwSignal<u32>) -> impl IntoView {
    let app = use_app();
    let description = RwSignal::new(ca.description.clone());
    let metadata = RwSignal::new(ca.metadata.clone());
    let path = paths::ssh_certificate_authority(&ca.id);
    let original = StoredValue::new(ca.clone());
    let request = Memo::new(move |_| {
        original.with_value(|o| CaUpdate {
            id: None,
            description: Some(description.get()).filter(|d| *d != o.description),
            metadata: Some(metadata.get()).filter(|m| *m != o.metadata),
        })
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    let unchanged = move || request.with(|r| r.description.is_none() && r.metadata.is_none());
    let save = Submit::patch(path.clone(), reload, move |_: &Ca| {
        app.toast("SSH CA saved.", false);
        reload.try_update(|r| *r += 1);
        // Saved, "Save changes" is disabled until the next change: the focus goes back to the
        // form's first field rather than to nothing.
        keep_focus_on("form[aria-label='Edit SSH CA'] input");
    });
    let valid = move || live.with(Vec::is_empty);
    let id = ca.id.clone();
    let delete =
        ConfirmedDelete::back_to_list(path, format!("SSH CA {id} deleted."), routes::SSH_CAS);
    // The form shows the error of the last save or delete, whichever failed.
    let error = move || save.error().or_else(|| delete.error());
    let copied = RwSignal::new(false);
    let key = ca.public_key.clone();
    let copy = move |_| {
        copy_then(key.clone(), move |ok| {
            copied.try_set(ok);
            app.toast(
                if ok {
                    "Public key copied."
                } else {
                    "Could not copy; select the key by hand."
                },
                !ok,
            );
        });
    };
    view! {
        <div class="page-head">
            <h1>{title_or(&ca.description, "SSH certificate authority")}</h1>
            {delete.button("Delete")}
        </div>
        <dl class="props card">
            {identity_props(ca.id.clone(), ca.uri.clone(), &ca.created_at)}
            <dt>"Key type"</dt><dd>{key_label(&ca)}</dd>
        </dl>
        <section class="card">
            <h2><label for="public-key">"Public key"</label></h2>
            <textarea id="public-key" class="mono public-key" readonly rows="4">{ca.public_key.clone()}</textarea>
            <div class="actions"><button type="button" class="copy" on:click=copy>{move || if copied.get() { "Copied" } else { "Copy public key" }}</button></div>
        </section>
        <form class="card form" on:submit=save.on_submit(move || valid().then(|| request.get_untracked())) novalidate aria-label="Edit SSH CA">
            <h2>"Edit"</h2>
            <TextField name="description" label="Description" value=description error=save.message(live, "description") />
            <TextField name="metadata" label="Metadata" value=metadata error=save.message(live, "metadata") multiline=true />
            {move || error().map(|e| view! { <ErrorView error=e /> })}
            <div class="actions">
                <button type="submit" class="primary" disabled=move || unchanged() || !valid() aria-disabled=move || save.busy().to_string()>
                    {move || if save.busy() { "Saving…" } else { "Save changes" }}
                </button>
            </div>
        </form>
        {delete.dialog(
            "Delete this SSH CA?",
            format!("SSH certificate authority {id} and its private key will be deleted. This cannot be undone."),
            "Delete SSH CA",
        )}
    }
}
