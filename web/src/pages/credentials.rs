//! Credentials: list with pagination, create (ACL editor, token shown once), detail with edit,
//! the ACL tester and delete.

use super::{fetch_into, non_empty, short_time, use_api, use_id};
use crate::api::ApiError;
use crate::components::acl_editor::{AclEditor, AclTester};
use crate::components::confirm::ConfirmDialog;
use crate::components::copy::CopyValue;
use crate::components::error_view::ErrorView;
use crate::components::field::{TextField, message_for};
use crate::components::list::{NameCell, resource_list};
use crate::components::loading::render_load;
use crate::components::token_dialog::TokenDialog;
use crate::routes;
use crate::state::use_app;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::NavigateOptions;
use leptos_router::components::A;
use leptos_router::hooks::use_navigate;
use tunnel_core::Validate;
use tunnel_core::paths;
use tunnel_core::resources::credential::{
    Credential, CredentialCreate, CredentialList as Page, CredentialUpdate,
};

#[component]
pub fn CredentialList() -> impl IntoView {
    let list = resource_list::<Page, _, _>(
        paths::CREDENTIALS,
        RwSignal::new(0),
        &["Credential", "ACL", "Owner", "Created"],
        "No credentials yet. Create one to give an agent an authtoken.",
        |c: Credential| {
            view! {
                <tr data-id=c.id.clone()>
                    <NameCell href=routes::credential(&c.id) name=c.description id=c.id.clone() untitled="Untitled credential" />
                    <td><AclSummary rules=c.acl /></td>
                    <td><code class="id">{c.owner_id}</code></td>
                    <td class="time">{short_time(&c.created_at)}</td>
                </tr>
            }
        },
    );
    view! {
        <div class="page-head">
            <h1>"Credentials"</h1>
            <A href=routes::CREDENTIAL_NEW attr:class="button primary">"New credential"</A>
        </div>
        <p class="lead">"Authtokens that tunnel agents use to start sessions, each limited by its ACL."</p>
        {list}
    }
}

/// The rules themselves (the first few, then how many more), or "Unrestricted".
#[component]
fn AclSummary(rules: Vec<String>) -> impl IntoView {
    const SHOWN: usize = 3;
    if rules.is_empty() {
        return view! { <span class="muted">"Unrestricted"</span> }.into_any();
    }
    let more = rules.len().saturating_sub(SHOWN);
    view! {
        <ul class="inline-list">
            {rules.into_iter().take(SHOWN).map(|r| view! { <li><code>{r}</code></li> }).collect_view()}
            {(more > 0).then(|| view! { <li class="muted">{format!("and {more} more")}</li> })}
        </ul>
    }
    .into_any()
}

#[component]
pub fn CredentialNew() -> impl IntoView {
    let api = use_api();
    let app = use_app();
    let navigate = use_navigate();
    let description = RwSignal::new(String::new());
    let metadata = RwSignal::new(String::new());
    let owner = RwSignal::new(String::new());
    let rules = RwSignal::new(Vec::<String>::new());
    let server_error = RwSignal::new(None::<ApiError>);
    let busy = RwSignal::new(false);
    let created = RwSignal::new(None::<Credential>);
    let request = Memo::new(move |_| CredentialCreate {
        description: non_empty(description.get()),
        metadata: non_empty(metadata.get()),
        acl: Some(rules.get()).filter(|r| !r.is_empty()),
        owner_id: non_empty(owner.get().trim().to_owned()),
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    let msg = move |field: &'static str| {
        Signal::derive(move || {
            live.with(|l| server_error.with(|s| message_for(field, l, s.as_ref())))
        })
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if !live.with(Vec::is_empty) || busy.get_untracked() {
            return;
        }
        busy.set(true);
        server_error.set(None);
        let body = request.get_untracked();
        spawn_local(async move {
            let result: Result<Credential, ApiError> = api.post(paths::CREDENTIALS, &body).await;
            busy.try_set(false);
            match result {
                Ok(c) => {
                    app.toast(format!("Credential {} created.", c.id), false);
                    created.try_set(Some(c));
                }
                Err(e) => {
                    server_error.try_set(Some(e));
                }
            }
        });
    };
    let close_token = Callback::new(move |_| {
        if let Some(c) = created.get_untracked() {
            navigate(&routes::credential(&c.id), NavigateOptions::default());
        }
    });
    view! {
        <p class="crumbs"><A href=routes::CREDENTIALS>"Credentials"</A>" / new"</p>
        <h1>"New credential"</h1>
        <form class="card form" on:submit=submit novalidate>
            <TextField name="description" label="Description" value=description error=msg("description")
                hint="Who or what uses this credential. At most 255 bytes." />
            <TextField name="metadata" label="Metadata" value=metadata error=msg("metadata") multiline=true
                hint="Machine-readable data, e.g. JSON. At most 4096 bytes." />
            <AclEditor rules=rules server_error=server_error />
            <TextField name="owner_id" label="Owner (admins only)" value=owner error=msg("owner_id")
                placeholder="usr_… or bot_…" hint="Leave empty to own it yourself. Only admins may name someone else." />
            {move || server_error.get().map(|e| view! { <ErrorView error=e title="The credential was not created" /> })}
            <div class="actions">
                <A href=routes::CREDENTIALS attr:class="button">"Cancel"</A>
                <button type="submit" class="primary" disabled=move || busy.get() || !live.with(Vec::is_empty)>
                    {move || if busy.get() { "Creating…" } else { "Create credential" }}
                </button>
            </div>
        </form>
        {move || created.get().and_then(|c| c.token).map(|token| view! { <TokenDialog token=token on_close=close_token /> })}
    }
}

#[component]
pub fn CredentialDetail() -> impl IntoView {
    let id = use_id();
    let reload = RwSignal::new(0);
    let cred = fetch_into::<Credential>(move || paths::credential(&id.get()), reload);
    view! {
        <p class="crumbs"><A href=routes::CREDENTIALS>"Credentials"</A>" / " <span class="mono">{move || id.get()}</span></p>
        {move || render_load(cred.get(), reload, move |c: Credential| view! { <CredentialView cred=c reload=reload /> })}
    }
}

#[component]
fn CredentialView(cred: Credential, reload: RwSignal<u32>) -> impl IntoView {
    let api = use_api();
    let app = use_app();
    let navigate = use_navigate();
    let editing = RwSignal::new(false);
    let confirm_delete = RwSignal::new(false);
    let delete_error = RwSignal::new(None::<ApiError>);
    let saved_rules = cred.acl.clone();
    let id = cred.id.clone();
    let do_delete = {
        let id = id.clone();
        Callback::new(move |_| {
            confirm_delete.set(false);
            let id = id.clone();
            let navigate = navigate.clone();
            spawn_local(async move {
                match api.delete(&paths::credential(&id)).await {
                    Ok(()) => {
                        app.toast(
                            format!("Credential {id} deleted; its sessions were disconnected."),
                            false,
                        );
                        navigate(routes::CREDENTIALS, NavigateOptions::default());
                    }
                    Err(e) => {
                        delete_error.try_set(Some(e));
                    }
                }
            });
        })
    };
    let acl_view = if cred.acl.is_empty() {
        view! { <p>"No ACL: this credential may bind anything."</p> }.into_any()
    } else {
        view! { <ul class="acl-list">{cred.acl.iter().map(|r| view! { <li><code>{r.clone()}</code></li> }).collect_view()}</ul> }.into_any()
    };
    let edit_cred = cred.clone();
    view! {
        <div class="page-head">
            <h1>{if cred.description.is_empty() { "Credential".to_owned() } else { cred.description.clone() }}</h1>
            <div class="actions">
                <button type="button" on:click=move |_| editing.update(|e| *e = !*e)>
                    {move || if editing.get() { "Close editor" } else { "Edit" }}
                </button>
                <button type="button" class="danger" on:click=move |_| confirm_delete.set(true)>"Delete"</button>
            </div>
        </div>
        {move || delete_error.get().map(|e| view! { <ErrorView error=e title="The credential was not deleted" /> })}
        <dl class="props card">
            <dt>"ID"</dt><dd><CopyValue value=cred.id.clone() what="ID" /></dd>
            <dt>"URI"</dt><dd><CopyValue value=cred.uri.clone() what="URI" /></dd>
            <dt>"Created"</dt><dd>{short_time(&cred.created_at)}</dd>
            <dt>"Owner"</dt><dd class="mono">{cred.owner_id.clone()}</dd>
            <dt>"Description"</dt><dd>{cred.description.clone()}</dd>
            <dt>"Metadata"</dt><dd><pre class="mono">{cred.metadata.clone()}</pre></dd>
            <dt>"Token"</dt><dd>"Shown only once, when the credential was created."</dd>
            <dt>"ACL"</dt><dd>{acl_view}</dd>
        </dl>
        {move || editing.get().then(|| view! { <CredentialEdit cred=edit_cred.clone() editing=editing reload=reload /> })}
        <div class="card"><AclTester rules=Signal::derive(move || saved_rules.clone()) /></div>
        {move || confirm_delete.get().then(|| view! {
            <ConfirmDialog title="Delete this credential?"
                message=format!("Credential {} will be deleted and every tunnel session using its authtoken disconnected. This cannot be undone.", id)
                confirm_label="Delete credential"
                on_confirm=do_delete
                on_cancel=Callback::new(move |_| confirm_delete.set(false)) />
        })}
    }
}

#[component]
fn CredentialEdit(
    cred: Credential,
    editing: RwSignal<bool>,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let api = use_api();
    let app = use_app();
    let description = RwSignal::new(cred.description.clone());
    let metadata = RwSignal::new(cred.metadata.clone());
    let rules = RwSignal::new(cred.acl.clone());
    let server_error = RwSignal::new(None::<ApiError>);
    let busy = RwSignal::new(false);
    let original = StoredValue::new(cred);
    // Only changed fields are sent: PATCH leaves the others as they are.
    let request = Memo::new(move |_| {
        original.with_value(|o| CredentialUpdate {
            id: None,
            description: Some(description.get()).filter(|d| *d != o.description),
            metadata: Some(metadata.get()).filter(|m| *m != o.metadata),
            acl: Some(rules.get()).filter(|r| *r != o.acl),
        })
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    let unchanged = move || {
        request.with(|r| r.description.is_none() && r.metadata.is_none() && r.acl.is_none())
    };
    let msg = move |field: &'static str| {
        Signal::derive(move || {
            live.with(|l| server_error.with(|s| message_for(field, l, s.as_ref())))
        })
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if !live.with(Vec::is_empty) || busy.get_untracked() {
            return;
        }
        busy.set(true);
        server_error.set(None);
        let body = request.get_untracked();
        let id = original.with_value(|o| o.id.clone());
        spawn_local(async move {
            let result: Result<Credential, ApiError> =
                api.patch(&paths::credential(&id), &body).await;
            busy.try_set(false);
            match result {
                Ok(_) => {
                    app.toast("Credential saved.", false);
                    editing.try_set(false);
                    reload.try_update(|r| *r += 1);
                }
                Err(e) => {
                    server_error.try_set(Some(e));
                }
            }
        });
    };
    view! {
        <form class="card form" on:submit=submit novalidate aria-label="Edit credential">
            <h2>"Edit"</h2>
            <TextField name="description" label="Description" value=description error=msg("description") />
            <TextField name="metadata" label="Metadata" value=metadata error=msg("metadata") multiline=true />
            <AclEditor rules=rules server_error=server_error />
            {move || server_error.get().map(|e| view! { <ErrorView error=e title="The credential was not saved" /> })}
            <div class="actions">
                <button type="button" on:click=move |_| editing.set(false)>"Cancel"</button>
                <button type="submit" class="primary" disabled=move || busy.get() || unchanged() || !live.with(Vec::is_empty)>
                    {move || if busy.get() { "Saving…" } else { "Save changes" }}
                </button>
            </div>
        </form>
    }
}
