//! Create, list, get, update and delete, written once for every stored resource: an area
//! declares its resource with [`declare_resource!`] (its paths, the store's row type, the wire's
//! list page and requests, its own wire fields, and the functions that create and update it),
//! which implements [`Resource`] (and [`Updatable`] for a resource with a `PATCH`), and
//! [`router`] / [`updatable_router`] route the generic [`create`], [`list`], [`read`],
//! [`update`] and [`delete`] handlers. The area's own module keeps only what is particular to it:
//! how a resource is created and changed, and its special routes.
//!
//! Every write is recorded in the audit log in its own transaction (`store::events`): the
//! resource's [`Resource::audit`] gives the store the caller and the wire form of its rows.
//!
//! Lists follow docs/api/README.md (lists and paging): `limit` and `before_id`, newest first,
//! and an absolute `next_page_uri`. A list page is written as the area's page type of
//! `tunnel-core` ([`ListPage`]) is: the items under [`ListPage::FIELD`], `uri`, `next_page_uri`.

use super::{BodyId, Change, Path};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::json::JsonBody;
use crate::paging;
use crate::response::Json;
use crate::state::AppState;
use crate::store::{Audit, Cause, PageQuery, Record, Scope};
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::routing::{get, patch};
use serde::de::DeserializeOwned;
use serde::ser::{Serialize, SerializeStruct as _, Serializer};
use std::future::Future;
use tunnel_core::resources::{ListPage, Validate};

/// The wire type of a resource: the items of its list page.
pub type Wire<R> = <<R as Resource>::Page as ListPage>::Item;

/// A stored resource of an API area.
pub trait Resource: Send + Sync + 'static {
    /// The collection path (relative to the API prefix), e.g. `/credentials`.
    const PATH: &'static str;
    /// The store's row type, which also gives the resource's id kind ([`Record::KIND`]).
    type Row: Record;
    /// The list page of the wire; its items are the resource's wire type.
    type Page: ListPage<Item: Serialize + Send + HasId>;
    /// The create request of the wire.
    type Create: DeserializeOwned + Serialize + Validate + Send;

    /// The path of one resource (relative to the API prefix), e.g. `/credentials/{id}`.
    fn path(id: &str) -> String;

    /// The wire form of a stored row.
    fn wire(state: &AppState, row: Self::Row) -> Wire<Self>;

    /// Creates a resource from a request already validated; the wire form of what was created.
    fn create(new: New<'_, Self::Create>) -> impl Future<Output = ApiResult<Wire<Self>>> + Send;

    /// Which rows of the account `caller` reaches: all of them, unless the resource is one a
    /// member sees only of their own (API keys).
    fn scope(caller: &Caller) -> Scope<'_> {
        Scope::from(&caller.account_id)
    }

    /// What else a delete does once the row is gone (credentials disconnect their sessions).
    fn deleted<'a>(
        _state: &'a AppState,
        _account_id: &'a str,
        _id: &'a str,
        _cause: &'a Cause,
    ) -> impl Future<Output = ()> + Send + 'a {
        async {}
    }

    /// Completes wire forms about to be answered with what is live rather than stored (a
    /// backend's `tunnels`, from the sessions of every node). Events keep the stored fields.
    fn live<'a>(
        _state: &'a AppState,
        _account_id: &'a str,
        _items: &'a mut [Wire<Self>],
    ) -> impl Future<Output = ApiResult<()>> + Send + 'a {
        async { Ok(()) }
    }

    /// How the store records writes of this resource: caused by `cause`, showing rows in their
    /// wire form (which never carries a secret: creation answers add them to theirs).
    fn audit<'a>(state: &'a AppState, cause: &'a Cause) -> Audit<'a, Self::Row> {
        Audit::new(cause, move |row: &Self::Row| {
            serde_json::to_value(Self::wire(state, row.clone())).unwrap_or_default()
        })
    }
}

/// A stored resource with a `PATCH`.
pub trait Updatable: Resource {
    /// The update request of the wire.
    type Update: DeserializeOwned + Serialize + Validate + BodyId + Send;

    /// Applies a change already validated; the row as it is now.
    fn update(change: Change<Self::Update>) -> impl Future<Output = ApiResult<Self::Row>> + Send;
}

/// A create request, already validated, with who asks and what every handler sees.
#[derive(Debug)]
pub struct New<'a, C> {
    pub state: &'a AppState,
    pub caller: &'a Caller,
    /// The caller as the audit log records it.
    pub cause: Cause,
    pub request: C,
}

impl<C> New<'_, C> {
    /// The account the resource is created in: the caller's.
    pub fn account(&self) -> &str {
        &self.caller.account_id
    }

    /// How the store records the creation of an `R`.
    pub fn audit<R: Resource>(&self) -> Audit<'_, R::Row> {
        R::audit(self.state, &self.cause)
    }
}

/// Declares the [`Resource`] of an area: its type, paths, row and list page, create request and
/// the function creating it (`async fn(New<'_, Create>) -> ApiResult<Wire>`), if it has a
/// `PATCH` its update request and the function applying it (`async fn(Change<Update>) ->
/// ApiResult<Row>`, making it [`Updatable`]), which rows a caller reaches if not the whole
/// account, what else a delete does if anything, what live state completes its wire form if
/// any, and the row→wire mapping. The mapping names only the resource's own fields: `uri`,
/// `id`, `created_at`, `description` and `metadata`, which every resource has, are filled in
/// here, after the own fields (which may still borrow the row).
macro_rules! declare_resource {
    (
        $(#[$attr:meta])*
        $name:ident at $path:expr, $item:path;
        $row:ty => $page:ty, created from $create_ty:ty => $create:path;
        $(updated from $update_ty:ty => $update:path;)?
        $(scope => $scope:path;)?
        $(deleted => $deleted:path;)?
        $(live => $live:path;)?
        wire($state:ident, $row_var:ident) => $wire:ident { $($field:ident: $value:expr),* $(,)? }
    ) => {
        $(#[$attr])*
        #[derive(Debug)]
        pub struct $name;

        impl $crate::api::resource::Resource for $name {
            const PATH: &'static str = $path;
            type Row = $row;
            type Page = $page;
            type Create = $create_ty;

            fn path(id: &str) -> String {
                $item(id)
            }

            fn wire($state: &$crate::state::AppState, $row_var: $row) -> $wire {
                $wire {
                    $($field: $value,)*
                    uri: $state.uri(&$item(&$row_var.id)),
                    id: $row_var.id,
                    created_at: $row_var.created_at,
                    description: $row_var.description,
                    metadata: $row_var.metadata,
                }
            }

            fn create(
                new: $crate::api::resource::New<'_, $create_ty>,
            ) -> impl std::future::Future<Output = $crate::error::ApiResult<$wire>> + Send {
                $create(new)
            }

            $(fn scope(caller: &$crate::auth::Caller) -> $crate::store::Scope<'_> {
                $scope(caller)
            })?

            $(fn deleted<'a>(
                state: &'a $crate::state::AppState,
                account_id: &'a str,
                id: &'a str,
                cause: &'a $crate::store::Cause,
            ) -> impl std::future::Future<Output = ()> + Send + 'a {
                $deleted(state, account_id, id, cause)
            })?

            $(fn live<'a>(
                state: &'a $crate::state::AppState,
                account_id: &'a str,
                items: &'a mut [$wire],
            ) -> impl std::future::Future<Output = $crate::error::ApiResult<()>> + Send + 'a {
                $live(state, account_id, items)
            })?
        }

        $(impl $crate::api::resource::Updatable for $name {
            type Update = $update_ty;

            fn update(
                change: $crate::api::Change<$update_ty>,
            ) -> impl std::future::Future<Output = $crate::error::ApiResult<$row>> + Send {
                $update(change)
            }
        })?
    };
}
pub(crate) use declare_resource;

/// The generic routes of `R`: `POST` and `GET` of the collection, `GET` and `DELETE` of one
/// resource. An area adds its other methods and routes to it.
pub fn router<R: Resource>() -> Router<AppState> {
    Router::new()
        .route(R::PATH, get(list::<R>).post(create::<R>))
        .route(&R::path("{id}"), get(read::<R>).delete(delete::<R>))
}

/// [`router`], and `PATCH` of one resource.
pub fn updatable_router<R: Updatable>() -> Router<AppState> {
    router::<R>().route(&R::path("{id}"), patch(update::<R>))
}

/// Validates the change, applies it: 200 with the wire form of the resource as it is now.
pub async fn update<R: Updatable>(change: Change<R::Update>) -> ApiResult<Json<Wire<R>>> {
    change.body.validate()?;
    let state = change.state.clone();
    let account_id = change.caller.account_id.clone();
    let row = R::update(change).await?;
    let mut wire = [R::wire(&state, row)];
    R::live(&state, &account_id, &mut wire).await?;
    let [wire] = wire;
    Ok(Json(wire))
}

/// Validates the request, creates the resource: 201 with its wire form.
pub async fn create<R: Resource>(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(request): JsonBody<R::Create>,
) -> ApiResult<(StatusCode, Json<Wire<R>>)> {
    request.validate()?;
    let new = New {
        state: &state,
        caller: &caller,
        cause: caller.cause(),
        request,
    };
    let mut created = [R::create(new).await?];
    R::live(&state, &caller.account_id, &mut created).await?;
    let [created] = created;
    Ok((StatusCode::CREATED, Json(created)))
}

/// One page of the caller's resources.
pub async fn list<R: Resource>(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<Page<R::Page>>> {
    let page = paging::parse(query.as_deref(), &[<R::Row as Record>::KIND])?;
    let rows = state.store.list::<R::Row>(R::scope(&caller), &page).await?;
    let wire = |row| R::wire(&state, row);
    let mut page = Page::of_rows(&state, R::PATH, &page, rows, wire);
    R::live(&state, &caller.account_id, &mut page.items).await?;
    Ok(Json(page))
}

/// One resource the caller reaches (404 otherwise).
pub async fn read<R: Resource>(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Wire<R>>> {
    let row = state.store.get::<R::Row>(R::scope(&caller), &id).await?;
    let mut wire = [R::wire(&state, row)];
    R::live(&state, &caller.account_id, &mut wire).await?;
    let [wire] = wire;
    Ok(Json(wire))
}

/// Deletes one resource the caller reaches: 204, 404, or 409 while it is in use.
pub async fn delete<R: Resource>(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let cause = caller.cause();
    let audit = R::audit(&state, &cause);
    state
        .store
        .delete::<R::Row>(R::scope(&caller), &id, &audit)
        .await?;
    R::deleted(&state, &caller.account_id, &id, &cause).await;
    Ok(StatusCode::NO_CONTENT)
}

/// A list page on the wire, serialised exactly as the page type `P` of `tunnel-core` is (same
/// properties, same order), without first building a `P`: `ListPage` names the items' property
/// but offers no constructor.
#[derive(Debug)]
pub struct Page<P: ListPage> {
    items: Vec<P::Item>,
    uri: String,
    next_page_uri: Option<String>,
}

impl<P: ListPage> Page<P> {
    /// The page of `items` of the list at `list_path` (one page of `page`'s size); `more` says
    /// whether items follow the last one.
    pub fn new(
        state: &AppState,
        list_path: &str,
        page: &PageQuery,
        items: Vec<P::Item>,
        more: bool,
    ) -> Page<P>
    where
        P::Item: HasId,
    {
        let last = items.last().map(HasId::id);
        let next_page_uri = paging::next_page_uri(state, list_path, page, more, last);
        Page {
            uri: state.uri(list_path),
            items,
            next_page_uri,
        }
    }

    /// The page of the store's `rows` (the `limit + 1` a store list answers, so the last one
    /// only says that more follow), each shown with `wire`.
    pub fn of_rows<T>(
        state: &AppState,
        list_path: &str,
        page: &PageQuery,
        mut rows: Vec<T>,
        wire: impl FnMut(T) -> P::Item,
    ) -> Page<P>
    where
        P::Item: HasId,
    {
        let limit = page.limit as usize;
        let more = rows.len() > limit;
        rows.truncate(limit);
        let items = rows.into_iter().map(wire).collect();
        Page::new(state, list_path, page, items, more)
    }
}

impl<P: ListPage<Item: Serialize>> Serialize for Page<P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut page = serializer.serialize_struct("Page", 3)?;
        page.serialize_field(P::FIELD, &self.items)?;
        page.serialize_field("uri", &self.uri)?;
        page.serialize_field("next_page_uri", &self.next_page_uri)?;
        page.end()
    }
}

/// A wire item with an id: the `before_id` of the next page is the last item's.
pub trait HasId {
    fn id(&self) -> &str;
}

super::id_field!(HasId::id -> str:
    tunnel_core::resources::credential::Credential,
    tunnel_core::resources::api_key::ApiKey,
    tunnel_core::resources::ssh_ca::SshCertificateAuthority,
    tunnel_core::resources::tunnel_session::TunnelSession,
    tunnel_core::resources::tls_edge::TlsEdge,
    tunnel_core::resources::backend::TunnelGroupBackend,
    tunnel_core::resources::event_destination::EventDestination,
    tunnel_core::resources::event_subscription::EventSubscription,
    tunnel_core::resources::event::Event,
    tunnel_core::resources::event_destination::EventDelivery,
    tunnel_core::resources::user::User,
);

#[cfg(test)]
mod tests {
    use super::*;
    use tunnel_core::resources::credential::{Credential, CredentialList};

    #[test]
    fn a_page_is_written_as_the_page_type_of_tunnel_core() {
        let item = Credential {
            id: "cr_1".into(),
            uri: "u".into(),
            created_at: "t".into(),
            description: "d".into(),
            metadata: "m".into(),
            token: None,
            acl: vec![],
            owner_id: "usr_1".into(),
        };
        let page: Page<CredentialList> = Page {
            items: vec![item.clone()],
            uri: "l".into(),
            next_page_uri: Some("n".into()),
        };
        let typed = CredentialList {
            credentials: vec![item],
            uri: "l".into(),
            next_page_uri: Some("n".into()),
        };
        assert_eq!(
            serde_json::to_string(&page).unwrap(),
            serde_json::to_string(&typed).unwrap()
        );
    }
}
