//! SSH certificate authorities: list, create (key type first, then only the valid curve or size),
//! detail with the public key and a copy button, edit description and metadata, delete.

use super::{fetch_into, non_empty, short_time, use_api, use_id};
use crate::api::ApiError;
use crate::components::confirm::ConfirmDialog;
use crate::components::copy::CopyValue;
use crate::components::copy_to_clipboard;
use crate::components::error_view::ErrorView;
use crate::components::field::{TextField, message_for};
use crate::components::list::{NameCell, resource_list};
use crate::components::loading::render_load;
use crate::routes;
use crate::state::{now_ms, use_app};
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::NavigateOptions;
use leptos_router::components::A;
use leptos_router::hooks::use_navigate;
use tunnel_core::Validate;
use tunnel_core::paths;
use tunnel_core::resources::ssh_ca::{
    SshCertificateAuthority as Ca, SshCertificateAuthorityCreate as CaCreate,
    SshCertificateAuthorityList as Page, SshCertificateAuthorityUpdate as CaUpdate,
};
use tunnel_core::ssh::{DEFAULT_RSA_KEY_SIZE, EllipticCurve, KeySpec, KeyType, RSA_KEY_SIZES};

#[component]
pub fn SshCaList() -> impl IntoView {
    let list = resource_list::<Page, _, _>(
        paths::SSH_CERTIFICATE_AUTHORITIES,
        RwSignal::new(0),
        &["SSH certificate authority", "Key type", "Created"],
        "No SSH certificate authorities yet.",
        |c: Ca| {
            view! {
                <tr data-id=c.id.clone()>
                    <NameCell href=routes::ssh_ca(&c.id) name=c.description id=c.id.clone() untitled="Untitled SSH CA" />
                    <td>{c.key_type}</td>
                    <td class="time">{short_time(&c.created_at)}</td>
                </tr>
            }
        },
    );
    view! {
        <div class="page-head">
            <h1>"SSH certificate authorities"</h1>
            <A href=routes::SSH_CA_NEW attr:class="button primary">"New SSH CA"</A>
        </div>
        {list}
    }
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
                            <option value=c.as_str() selected=move || curve.get() == *c>{c.as_str().to_uppercase()}</option>
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
                            let secs = ((now.get() - started.get()) / 1000.0).max(0.0).floor();
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
                <button type="submit" class="primary" disabled=move || busy.get() || !live.with(Vec::is_empty)>
                    {move || if busy.get() { "Generating…" } else { "Create SSH CA" }}
                </button>
            </div>
        </form>
    }
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
    let api = use_api();
    let app = use_app();
    let navigate = use_navigate();
    let busy = RwSignal::new(false);
    let server_error = RwSignal::new(None::<ApiError>);
    let on_submit = Callback::new(move |body: CaCreate| {
        busy.set(true);
        server_error.set(None);
        let navigate = navigate.clone();
        spawn_local(async move {
            let result: Result<Ca, ApiError> =
                api.post(paths::SSH_CERTIFICATE_AUTHORITIES, &body).await;
            busy.try_set(false);
            match result {
                Ok(ca) => {
                    app.toast(format!("SSH CA {} created.", ca.id), false);
                    navigate(&routes::ssh_ca(&ca.id), NavigateOptions::default());
                }
                Err(e) => {
                    server_error.try_set(Some(e));
                }
            }
        });
    });
    view! {
        <p class="crumbs"><A href=routes::SSH_CAS>"SSH CAs"</A>" / new"</p>
        <h1>"New SSH certificate authority"</h1>
        <p class="lead">"The server generates the private key and never returns it."</p>
        <SshCaForm on_submit=on_submit busy=busy server_error=server_error />
    }
}

#[component]
pub fn SshCaDetail() -> impl IntoView {
    let id = use_id();
    let reload = RwSignal::new(0);
    let ca = fetch_into::<Ca>(move || paths::ssh_certificate_authority(&id.get()), reload);
    view! {
        <p class="crumbs"><A href=routes::SSH_CAS>"SSH CAs"</A>" / " <span class="mono">{move || id.get()}</span></p>
        {move || render_load(ca.get(), reload, move |c: Ca| view! { <SshCaView ca=c reload=reload /> })}
    }
}

#[component]
fn SshCaView(ca: Ca, reload: RwSignal<u32>) -> impl IntoView {
    let api = use_api();
    let app = use_app();
    let navigate = use_navigate();
    let confirm_delete = RwSignal::new(false);
    let action_error = RwSignal::new(None::<ApiError>);
    let description = RwSignal::new(ca.description.clone());
    let metadata = RwSignal::new(ca.metadata.clone());
    let busy = RwSignal::new(false);
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
    let msg = move |field: &'static str| {
        Signal::derive(move || {
            live.with(|l| action_error.with(|s| message_for(field, l, s.as_ref())))
        })
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if !live.with(Vec::is_empty) || busy.get_untracked() {
            return;
        }
        busy.set(true);
        action_error.set(None);
        let body = request.get_untracked();
        let id = original.with_value(|o| o.id.clone());
        spawn_local(async move {
            let result: Result<Ca, ApiError> = api
                .patch(&paths::ssh_certificate_authority(&id), &body)
                .await;
            busy.try_set(false);
            match result {
                Ok(_) => {
                    app.toast("SSH CA saved.", false);
                    reload.try_update(|r| *r += 1);
                }
                Err(e) => {
                    action_error.try_set(Some(e));
                }
            }
        });
    };
    let id = ca.id.clone();
    let do_delete = Callback::new(move |_| {
        confirm_delete.set(false);
        let id = original.with_value(|o| o.id.clone());
        let navigate = navigate.clone();
        spawn_local(async move {
            match api.delete(&paths::ssh_certificate_authority(&id)).await {
                Ok(()) => {
                    app.toast(format!("SSH CA {id} deleted."), false);
                    navigate(routes::SSH_CAS, NavigateOptions::default());
                }
                Err(e) => {
                    action_error.try_set(Some(e));
                }
            }
        });
    });
    let copied = RwSignal::new(false);
    let key = ca.public_key.clone();
    let copy = move |_| {
        let key = key.clone();
        spawn_local(async move {
            let ok = copy_to_clipboard(&key).await;
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
            <h1>{if ca.description.is_empty() { "SSH certificate authority".to_owned() } else { ca.description.clone() }}</h1>
            <button type="button" class="danger" on:click=move |_| confirm_delete.set(true)>"Delete"</button>
        </div>
        <dl class="props card">
            <dt>"ID"</dt><dd><CopyValue value=ca.id.clone() what="ID" /></dd>
            <dt>"URI"</dt><dd><CopyValue value=ca.uri.clone() what="URI" /></dd>
            <dt>"Created"</dt><dd>{short_time(&ca.created_at)}</dd>
            <dt>"Key type"</dt><dd>{ca.key_type.clone()}</dd>
        </dl>
        <section class="card">
            <h2><label for="public-key">"Public key"</label></h2>
            <textarea id="public-key" class="mono public-key" readonly rows="4">{ca.public_key.clone()}</textarea>
            <div class="actions"><button type="button" class="copy" on:click=copy>{move || if copied.get() { "Copied" } else { "Copy public key" }}</button></div>
        </section>
        <form class="card form" on:submit=save novalidate aria-label="Edit SSH CA">
            <h2>"Edit"</h2>
            <TextField name="description" label="Description" value=description error=msg("description") />
            <TextField name="metadata" label="Metadata" value=metadata error=msg("metadata") multiline=true />
            {move || action_error.get().map(|e| view! { <ErrorView error=e /> })}
            <div class="actions">
                <button type="submit" class="primary" disabled=move || busy.get() || unchanged() || !live.with(Vec::is_empty)>
                    {move || if busy.get() { "Saving…" } else { "Save changes" }}
                </button>
            </div>
        </form>
        {move || confirm_delete.get().then(|| view! {
            <ConfirmDialog title="Delete this SSH CA?"
                message=format!("SSH certificate authority {id} and its private key will be deleted. This cannot be undone.")
                confirm_label="Delete SSH CA" on_confirm=do_delete
                on_cancel=Callback::new(move |_| confirm_delete.set(false)) />
        })}
    }
}
