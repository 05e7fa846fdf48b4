//! Names for references: a list row that points at another resource (a session's credential, a
//! subscription's destinations, an edge's backend, the owner of a credential) shows that
//! resource's description (a user's name), with the id under it, instead of a bare id.
//!
//! Each referenced resource is fetched once per app (the cache lives in the app state), so a
//! list refreshed every few seconds does not refetch its names; a change or delete sent from
//! this tab forgets the name, which is then fetched again. A name that cannot be loaded
//! leaves the id alone on show.

use crate::api::Api;
use crate::routes;
use crate::state::use_app;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::Deserialize;
use tunnel_core::paths;

/// What a name is made from: the description of any resource, a user's name, else a webhook's
/// URL.
#[derive(Debug, Deserialize, PartialEq)]
struct Named {
    #[serde(default)]
    description: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    target: Option<Target>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Target {
    #[serde(default)]
    webhook: Option<Webhook>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Webhook {
    url: String,
}

impl Named {
    fn name(self) -> String {
        if !self.description.is_empty() {
            return self.description;
        }
        if !self.name.is_empty() {
            return self.name;
        }
        self.target
            .and_then(|t| t.webhook)
            .map(|w| w.url)
            .unwrap_or_default()
    }
}

/// The resource at API `path` (id `id`) by name, linked to `href` when given.
#[component]
pub fn RefName(
    #[prop(into)] path: String,
    #[prop(into)] id: String,
    #[prop(optional, into)] href: Option<String>,
) -> impl IntoView {
    let app = use_app();
    let names = app.names;
    // Fetched when missing: at first, and again when this tab changed or deleted the resource
    // (`AppState::forget_name`) while the name is on show.
    let wanted = path.clone();
    Effect::new(move |_| {
        if names.with(|n| n.contains_key(&wanted)) {
            return;
        }
        names.update(|n| {
            n.insert(wanted.clone(), None);
        });
        let api = Api::new(app);
        let path = wanted.clone();
        // Fire and forget: the name lands in the app-wide cache, which outlives this row and
        // serves every other row naming the same resource; nothing waits for it.
        spawn_local(async move {
            let name = api.get::<Named>(&path).await.ok().map(Named::name);
            names.try_update(|n| {
                n.insert(path, name);
            });
        });
    });
    let key = path.clone();
    let name = Memo::new(move |_| {
        names
            .with(|n| n.get(&key).cloned().flatten())
            .filter(|n| !n.is_empty())
    });
    let label = {
        let id = id.clone();
        move || name.get().unwrap_or_else(|| id.clone())
    };
    let main = match href {
        // A plain link, as a list row's name is (`list::NameCell` says why).
        Some(href) => view! { <a href=href class="name">{label}</a> }.into_any(),
        None => view! { <span class="name">{label}</span> }.into_any(),
    };
    view! {
        <span class="ref-name">
            {main}
            {move || name.with(Option::is_some).then(|| view! { <code class="id">{id.clone()}</code> })}
        </span>
    }
}

/// The user or bot `id` by name, linked to its page: the owner of a credential or API key.
#[component]
pub fn OwnerName(#[prop(into)] id: String) -> impl IntoView {
    view! { <RefName path=paths::user(&id) id=id.clone() href=routes::user(&id) /> }
}
