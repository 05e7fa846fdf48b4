//! Credentials (`docs/api/credentials.md`): list with pagination, create (ACL editor, token
//! shown once), detail with edit, the ACL tester and delete.

use super::{detail_page, edit_actions, editable_head, identity_props, non_empty, title_or};
use crate::components::acl_editor::{AclEditor, AclTester};
use crate::components::bulk::BulkAction;
use crate::components::confirm::ConfirmedDelete;
use crate::components::field::TextField;
use crate::components::list::{ListPage, RowName, first_page};
use crate::components::loading::{fetch_into, render_load};
use crate::components::names::OwnerName;
use crate::components::picker::OwnerPicker;
use crate::components::search::with_search;
use crate::components::submit::Submit;
use crate::components::time::RelativeTime;
use crate::components::token_dialog::{ShowSecret, ShownOnce};
use crate::components::use_open_created;
use crate::routes;
use crate::state::use_app;
use leptos::prelude::*;
use leptos_router::components::A;
use tunnel_core::Validate;
use tunnel_core::paths;
use tunnel_core::resources::credential::{
    Credential, CredentialCreate, CredentialList as Page, CredentialUpdate,
};
use tunnel_core::resources::tunnel_session::{TunnelSession, TunnelSessionList};

/// What the list does to selected rows.
const BULK: &[BulkAction] = &[BulkAction::delete(
    paths::credential,
    "will be deleted, and every tunnel session using their authtokens disconnected. This cannot be undone.",
)];

#[component]
pub fn CredentialList() -> impl IntoView {
    ListPage::new(paths::CREDENTIALS, routes::credential)
        .search("Search credentials")
        .noun("credential", "credentials")
        .bulk(BULK)
        .export("credentials")
        .title("Credentials")
        .create(routes::CREDENTIAL_NEW, "New credential")
        .lead("Authtokens that tunnel agents use to start sessions, each limited by its ACL.")
        .columns(&["Credential", "ACL", "Owner", "Created"])
        .empty("No credentials yet. Create one to give an agent an authtoken.")
        .untitled("Untitled credential")
        .rows::<Page, _, _>(|c: Credential| {
            let cells = view! {
                <td><AclSummary rules=c.acl /></td>
                <td><OwnerName id=c.owner_id /></td>
                <td><RelativeTime ts=c.created_at.clone() /></td>
            };
            (RowName::new(c.id, c.description), cells)
        })
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
    let app = use_app();
    let open_created = use_open_created();
    let description = RwSignal::new(String::new());
    let metadata = RwSignal::new(String::new());
    let owner = RwSignal::new(String::new());
    let rules = RwSignal::new(Vec::<String>::new());
    let request = Memo::new(move |_| CredentialCreate {
        description: non_empty(description.get()),
        metadata: non_empty(metadata.get()),
        acl: Some(rules.get()).filter(|r| !r.is_empty()),
        owner_id: non_empty(owner.get().trim().to_owned()),
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    // The token is shown once; closing its dialog goes on to the new credential's page.
    let secrets = ShowSecret::use_it();
    let create = Submit::post(paths::CREDENTIALS, move |c: &Credential| {
        app.toast(format!("Credential {} created.", c.id), false);
        let (open_created, href) = (open_created.clone(), routes::credential(&c.id));
        if let Some(token) = c.token.clone() {
            secrets.show(ShownOnce::Authtoken, token, move || open_created(&href));
        }
    });
    let valid = move || live.with(Vec::is_empty);
    view! {
        <p class="crumbs"><A href=routes::CREDENTIALS exact=true>"Credentials"</A>" / new"</p>
        <h1>"New credential"</h1>
        <form class="card form" on:submit=create.on_submit(move || valid().then(|| request.get_untracked())) novalidate>
            <TextField name="description" label="Description" value=description error=create.message(live, "description")
                hint="Who or what uses this credential. At most 255 bytes." />
            <TextField name="metadata" label="Metadata" value=metadata error=create.message(live, "metadata") multiline=true
                hint="Machine-readable data, e.g. JSON. At most 4096 bytes." />
            <AclEditor rules=rules server_error=create.error_signal() />
            // Only admins may name another owner: members are not offered the field.
            {move || app.is_admin().then(|| view! {
                <OwnerPicker owner=owner error=create.message(live, "owner_id")
                    hint="As an admin you may give the credential to another user or bot of the account." />
            })}
            {create.failure("The credential was not created")}
            <div class="actions">
                <A href=routes::CREDENTIALS attr:class="button">"Cancel"</A>
                <button type="submit" class="primary" disabled=move || !valid() aria-disabled=move || create.busy().to_string()>
                    {move || if create.busy() { "Creating…" } else { "Create credential" }}
                </button>
            </div>
        </form>
    }
}

#[component]
pub fn CredentialDetail() -> impl IntoView {
    detail_page(
        routes::CREDENTIALS,
        "Credentials",
        paths::credential,
        credential_view,
    )
}

/// A loaded credential: its properties, the editor (on demand), the ACL tester and delete.
fn credential_view(cred: Credential, reload: RwSignal<u32>) -> impl IntoView {
    let editing = RwSignal::new(false);
    let id = cred.id.clone();
    let delete = ConfirmedDelete::back_to_list(
        paths::credential(&id),
        format!("Credential {id} deleted; its sessions were disconnected."),
        routes::CREDENTIALS,
    );
    let saved_rules = cred.acl.clone();
    let acl_view = if cred.acl.is_empty() {
        view! { <p>"No ACL: this credential may bind anything."</p> }.into_any()
    } else {
        view! { <ul class="acl-list">{cred.acl.iter().map(|r| view! { <li><code>{r.clone()}</code></li> }).collect_view()}</ul> }.into_any()
    };
    let edit_cred = cred.clone();
    view! {
        {editable_head(title_or(&cred.description, "Credential"), editing, delete, "The credential was not deleted")}
        <dl class="props card">
            {identity_props(cred.id.clone(), cred.uri.clone(), &cred.created_at)}
            <dt>"Owner"</dt><dd><OwnerName id=cred.owner_id.clone() /></dd>
            <dt>"Description"</dt><dd>{cred.description.clone()}</dd>
            <dt>"Metadata"</dt><dd><pre class="mono">{cred.metadata.clone()}</pre></dd>
            <dt>"Token"</dt><dd>"Shown only once, when the credential was created."</dd>
            <dt>"ACL"</dt><dd>{acl_view}</dd>
        </dl>
        {move || editing.get().then(|| view! { <CredentialEdit cred=edit_cred.clone() editing=editing reload=reload /> })}
        <div class="card"><AclTester rules=Signal::derive(move || saved_rules.clone()) /></div>
        <CredentialSessions id=cred.id.clone() reload=reload />
        {delete.dialog(
            "Delete this credential?",
            format!("Credential {id} will be deleted and every tunnel session using its authtoken disconnected. This cannot be undone."),
            "Delete credential",
        )}
    }
}

#[component]
fn CredentialEdit(
    cred: Credential,
    editing: RwSignal<bool>,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let app = use_app();
    let description = RwSignal::new(cred.description.clone());
    let metadata = RwSignal::new(cred.metadata.clone());
    let rules = RwSignal::new(cred.acl.clone());
    let path = paths::credential(&cred.id);
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
    let save = Submit::patch(path, reload, move |_: &Credential| {
        app.toast("Credential saved.", false);
        editing.try_set(false);
        reload.try_update(|r| *r += 1);
    });
    let valid = move || live.with(Vec::is_empty);
    view! {
        <form class="card form" on:submit=save.on_submit(move || valid().then(|| request.get_untracked())) novalidate aria-label="Edit credential">
            <h2>"Edit"</h2>
            <TextField name="description" label="Description" value=description error=save.message(live, "description") />
            <TextField name="metadata" label="Metadata" value=metadata error=save.message(live, "metadata") multiline=true />
            <AclEditor rules=rules server_error=save.error_signal() />
            // Said before saving, since the server acts on it at once (docs/acl.md).
            {move || request.with(|r| r.acl.is_some()).then(|| view! {
                <p class="hint">"A changed ACL applies at once: agents connected with this credential whose binds it does not permit are disconnected."</p>
            })}
            {save.failure("The credential was not saved")}
            {edit_actions(editing, move || save.busy(), move || unchanged() || !valid())}
        </form>
    }
}

/// The live tunnel sessions started with this credential's authtoken (fetched again with the
/// credential). The sessions list has no credential filter, so this asks for the sessions whose
/// searched text holds the id and keeps those of this credential exactly.
#[component]
fn CredentialSessions(id: String, reload: RwSignal<u32>) -> impl IntoView {
    let path = first_page(&with_search(paths::TUNNEL_SESSIONS, &id));
    let sessions = fetch_into::<TunnelSessionList>(move || path.clone(), reload);
    let view_of = move |list: TunnelSessionList| {
        let mine: Vec<TunnelSession> = list
            .tunnel_sessions
            .into_iter()
            .filter(|s| s.credential.id == id)
            .collect();
        if mine.is_empty() {
            return view! { <p class="muted">"No tunnel session uses this credential now."</p> }
                .into_any();
        }
        view! {
            <ul class="plain-list">
                {mine.into_iter().map(|s| view! {
                    <li>
                        <A href=routes::tunnel_session(&s.id)><code>{s.id.clone()}</code></A>
                        " " {format!("{} agent {} from {}", s.os, s.agent_version, s.ip)} ", started "
                        <RelativeTime ts=s.started_at />
                    </li>
                }).collect_view()}
            </ul>
        }
        .into_any()
    };
    view! {
        <section class="card" aria-labelledby="credential-sessions">
            <h2 id="credential-sessions">"Live tunnel sessions"</h2>
            {move || render_load(sessions.get(), reload, view_of.clone())}
        </section>
    }
}
