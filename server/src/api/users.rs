//! The users and bots of the account (docs/api/users.md, an extension): listed (paged and
//! searched like every list) and read, so a client shows owners by name. Every principal of the
//! account sees them all; none is created or changed through the API (the operator's commands
//! do that).

use super::Path;
use super::resource::Page;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::paging;
use crate::response::Json;
use crate::state::AppState;
use crate::store::UserRow;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::routing::get;
use tunnel_core::ids::IdKind;
use tunnel_core::paths;
use tunnel_core::resources::user::{User, UserList};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(paths::USERS, get(list))
        .route(&paths::user("{id}"), get(read))
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<Page<UserList>>> {
    let page = paging::parse(query.as_deref(), &[IdKind::User, IdKind::Bot])?;
    let rows = state.store.list_users(&caller.account_id, &page).await?;
    let wire = |row| wire(&state, row);
    Ok(Json(Page::of_rows(&state, paths::USERS, &page, rows, wire)))
}

async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<User>> {
    let row = state.store.user(&caller.account_id, &id).await?;
    Ok(Json(wire(&state, row)))
}

fn wire(state: &AppState, row: UserRow) -> User {
    User {
        uri: state.uri(&paths::user(&row.id)),
        kind: row.kind().to_owned(),
        id: row.id,
        created_at: row.created_at,
        name: row.name,
        is_admin: row.is_admin,
    }
}
