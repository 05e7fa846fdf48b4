//! Users and bots (`docs/api/users.md`): the account's people and bots by name, searchable,
//! read-only (the operator's command line creates and names them). A user's page leads to what
//! they own and what they did.

use super::{crumbs, detail_load, identity_props, title_or, use_detail};
use crate::components::list::{ListPage, RowName};
use crate::components::search::with_list_query;
use crate::components::time::RelativeTime;
use crate::routes;
use leptos::prelude::*;
use leptos_router::components::A;
use tunnel_core::paths;
use tunnel_core::resources::user::{User, UserList as Page};

#[component]
pub fn UserList() -> impl IntoView {
    ListPage::new(paths::USERS, routes::user)
        .search("Search users")
        .noun("user", "users")
        .export("users")
        .title("Users")
        .lead("The people and bots of this account, who own credentials and API keys. The server's operator adds and names them (tunnel-server user create, user rename). Listed users first, then bots, each newest first (Oldest first reverses both).")
        .columns(&["User", "Kind", "Role", "Created"])
        .empty("No users match.")
        .untitled("Unnamed")
        .rows::<Page, _, _>(|u: User| {
            let cells = view! {
                <td>{kind_label(&u.kind)}</td>
                <td>{role_label(u.is_admin)}</td>
                <td><RelativeTime ts=u.created_at.clone() /></td>
            };
            (RowName::new(u.id, u.name), cells)
        })
}

/// A user's page: who they are, and links to what they own and what they did. Users are not
/// the object of events, so the page has no recent activity of its own: the link shows what
/// they did instead.
#[component]
pub fn UserDetail() -> impl IntoView {
    let reload = RwSignal::new(0);
    let (id, user) = use_detail::<User>(paths::user, reload);
    view! {
        {crumbs(routes::USERS, "Users", id)}
        {move || detail_load(user.get(), reload, routes::USERS, "Users", user_view)}
    }
}

fn user_view(u: User) -> impl IntoView {
    let owned = |section: &str| with_list_query(section, &u.id, false);
    view! {
        <h1>{title_or(&u.name, "Unnamed user")}</h1>
        <dl class="props card">
            {identity_props(u.id.clone(), u.uri.clone(), &u.created_at)}
            <dt>"Name"</dt><dd>{if u.name.is_empty() { "none given".to_owned() } else { u.name.clone() }}</dd>
            <dt>"Kind"</dt><dd>{kind_label(&u.kind)}</dd>
            <dt>"Role"</dt><dd>{role_label(u.is_admin)}</dd>
        </dl>
        <nav class="card" aria-label="What this user owns and did">
            <ul class="links">
                <li><A href=owned(routes::CREDENTIALS)>"Credentials they own"</A></li>
                <li><A href=owned(routes::API_KEYS)>"API keys they own"</A></li>
                <li><A href=routes::activity_filtered(&[("actor_id", &u.id)])>"What they did (activity)"</A></li>
            </ul>
        </nav>
    }
}

fn kind_label(kind: &str) -> &'static str {
    if kind == "bot" { "Bot" } else { "User" }
}

fn role_label(is_admin: bool) -> &'static str {
    if is_admin { "Admin" } else { "Member" }
}
