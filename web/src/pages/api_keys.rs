//! API keys (`docs/api/api_keys.md`): list (a member's own, every key for an admin), create
//! (the key shown once; an owner for admins), detail with edit and delete. Deleting the key this
//! console is signed in with says so first and signs out after.

use super::{detail_page, edit_actions, editable_head, identity_props, non_empty, title_or};
use crate::components::bulk::BulkAction;
use crate::components::confirm::ConfirmedDelete;
use crate::components::field::TextField;
use crate::components::list::{ListPage, RowName};
use crate::components::names::OwnerName;
use crate::components::picker::OwnerPicker;
use crate::components::submit::Submit;
use crate::components::time::RelativeTime;
use crate::components::token_dialog::{ShowSecret, ShownOnce};
use crate::components::use_open_created;
use crate::routes;
use crate::state::{AppState, use_app};
use leptos::prelude::*;
use leptos_router::components::A;
use tunnel_core::Validate;
use tunnel_core::paths;
use tunnel_core::resources::api_key::{ApiKey, ApiKeyCreate, ApiKeyList as Page, ApiKeyUpdate};

/// What the list does to selected rows.
const BULK: &[BulkAction] = &[BulkAction::delete(
    paths::api_key,
    "will be revoked at once: requests made with them are refused from then on. This cannot be undone.",
)];

#[component]
pub fn ApiKeyList() -> impl IntoView {
    let app = use_app();
    ListPage::new(paths::API_KEYS, routes::api_key)
        .search("Search API keys")
        .noun("API key", "API keys")
        .bulk(BULK)
        .export("api-keys")
        .title("API keys")
        .create(routes::API_KEY_NEW, "New API key")
        .lead("Keys that people and scripts use to call the API, each acting as its owner. Admins see every key of the account; members their own.")
        .columns(&["API key", "Owner", "Created"])
        .empty("No API keys. Create one for a script or a teammate.")
        .untitled("Untitled API key")
        .rows::<Page, _, _>(move |k: ApiKey| {
            // Reactive: after a reload the rows may arrive before who is signed in is known.
            let (key_id, owner) = (k.id.clone(), k.owner_id.clone());
            let note = move || {
                usage_note(app, &key_id, &owner).map(|n| view! { " " <span class="badge">{n}</span> })
            };
            let cells = view! {
                <td><OwnerName id=k.owner_id />{note}</td>
                <td><RelativeTime ts=k.created_at.clone() /></td>
            };
            (RowName::new(k.id, k.description), cells)
        })
}

/// "this console" for the key the console is signed in with, "yours" for another key of the
/// signed-in principal (tracked: `None` until who is signed in is known).
fn usage_note(app: AppState, key_id: &str, owner_id: &str) -> Option<&'static str> {
    app.me.with(|me| {
        let me = me.as_ref()?;
        if me.api_key_id == key_id {
            Some("this console")
        } else if me.principal_id == owner_id {
            Some("yours")
        } else {
            None
        }
    })
}

#[component]
pub fn ApiKeyNew() -> impl IntoView {
    let app = use_app();
    let open_created = use_open_created();
    let description = RwSignal::new(String::new());
    let metadata = RwSignal::new(String::new());
    let owner = RwSignal::new(String::new());
    let request = Memo::new(move |_| ApiKeyCreate {
        description: non_empty(description.get()),
        metadata: non_empty(metadata.get()),
        owner_id: non_empty(owner.get().trim().to_owned()),
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    // The key is shown once; closing its dialog goes on to the new key's page.
    let secrets = ShowSecret::use_it();
    let create = Submit::post(paths::API_KEYS, move |k: &ApiKey| {
        app.toast(format!("API key {} created.", k.id), false);
        let (open_created, href) = (open_created.clone(), routes::api_key(&k.id));
        if let Some(token) = k.token.clone() {
            secrets.show(ShownOnce::ApiKey, token, move || open_created(&href));
        }
    });
    let valid = move || live.with(Vec::is_empty);
    view! {
        <p class="crumbs"><A href=routes::API_KEYS exact=true>"API keys"</A>" / new"</p>
        <h1>"New API key"</h1>
        <form class="card form" on:submit=create.on_submit(move || valid().then(|| request.get_untracked())) novalidate>
            <TextField name="description" label="Description" value=description error=create.message(live, "description")
                hint="Who or what uses this key, e.g. \"CI deploys\". At most 255 bytes." />
            <TextField name="metadata" label="Metadata" value=metadata error=create.message(live, "metadata") multiline=true
                hint="Machine-readable data, e.g. JSON. At most 4096 bytes." />
            {move || app.is_admin().then(|| view! {
                <OwnerPicker owner=owner error=create.message(live, "owner_id")
                    hint="The key acts as its owner. As an admin you may make a key for another user or bot of the account." />
            })}
            {create.failure("The API key was not created")}
            <div class="actions">
                <A href=routes::API_KEYS attr:class="button">"Cancel"</A>
                <button type="submit" class="primary" disabled=move || !valid() aria-disabled=move || create.busy().to_string()>
                    {move || if create.busy() { "Creating…" } else { "Create API key" }}
                </button>
            </div>
        </form>
    }
}

#[component]
pub fn ApiKeyDetail() -> impl IntoView {
    detail_page(routes::API_KEYS, "API keys", paths::api_key, api_key_view)
}

/// A loaded key: its properties, the editor (on demand) and delete.
fn api_key_view(key: ApiKey, reload: RwSignal<u32>) -> impl IntoView {
    let app = use_app();
    let editing = RwSignal::new(false);
    let id = key.id.clone();
    // Tracked: after a reload the key may arrive before who is signed in is known.
    let key_id = id.clone();
    let this_console = Memo::new(move |_| {
        app.me
            .with(|me| me.as_ref().is_some_and(|me| me.api_key_id == key_id))
    });
    let leave = crate::components::use_leave_when_done();
    let deleted_id = id.clone();
    let delete = ConfirmedDelete::new(paths::api_key(&id), move || {
        if this_console.get_untracked() {
            app.sign_out_own_key_deleted();
            return;
        }
        app.toast(
            format!("API key {deleted_id} deleted; requests made with it now fail."),
            false,
        );
        leave(&app.list_url(routes::API_KEYS));
    });
    let warning = move || {
        if this_console.get() {
            format!(
                "This console is signed in with API key {id}: deleting it revokes it at once and signs you out of this browser. This cannot be undone."
            )
        } else {
            format!(
                "API key {id} will be revoked at once: every script or person using it gets 401 from the next request. This cannot be undone."
            )
        }
    };
    let edit_key = key.clone();
    view! {
        {editable_head(title_or(&key.description, "API key"), editing, delete, "The API key was not deleted")}
        {move || this_console.get().then(|| view! { <p class="hint">"This console is signed in with this key."</p> })}
        <dl class="props card">
            {identity_props(key.id.clone(), key.uri.clone(), &key.created_at)}
            <dt>"Owner"</dt><dd><OwnerName id=key.owner_id.clone() /></dd>
            <dt>"Description"</dt><dd>{key.description.clone()}</dd>
            <dt>"Metadata"</dt><dd><pre class="mono">{key.metadata.clone()}</pre></dd>
            <dt>"Key"</dt><dd>"Shown only once, when the key was created."</dd>
        </dl>
        {move || editing.get().then(|| view! { <ApiKeyEdit key=edit_key.clone() editing=editing reload=reload /> })}
        {move || delete.dialog("Delete this API key?", warning(), "Delete API key")}
    }
}

#[component]
fn ApiKeyEdit(key: ApiKey, editing: RwSignal<bool>, reload: RwSignal<u32>) -> impl IntoView {
    let app = use_app();
    let description = RwSignal::new(key.description.clone());
    let metadata = RwSignal::new(key.metadata.clone());
    let path = paths::api_key(&key.id);
    let original = StoredValue::new(key);
    // Only changed fields are sent: PATCH leaves the others as they are.
    let request = Memo::new(move |_| {
        original.with_value(|o| ApiKeyUpdate {
            id: None,
            description: Some(description.get()).filter(|d| *d != o.description),
            metadata: Some(metadata.get()).filter(|m| *m != o.metadata),
        })
    });
    let live = Memo::new(move |_| request.with(Validate::field_errors));
    let unchanged = move || request.with(|r| r.description.is_none() && r.metadata.is_none());
    let save = Submit::patch(path, reload, move |_: &ApiKey| {
        app.toast("API key saved.", false);
        editing.try_set(false);
        reload.try_update(|r| *r += 1);
    });
    let valid = move || live.with(Vec::is_empty);
    view! {
        <form class="card form" on:submit=save.on_submit(move || valid().then(|| request.get_untracked())) novalidate aria-label="Edit API key">
            <h2>"Edit"</h2>
            <TextField name="description" label="Description" value=description error=save.message(live, "description") />
            <TextField name="metadata" label="Metadata" value=metadata error=save.message(live, "metadata") multiline=true />
            {save.failure("The API key was not saved")}
            {edit_actions(editing, move || save.busy(), move || unchanged() || !valid())}
        </form>
    }
}
