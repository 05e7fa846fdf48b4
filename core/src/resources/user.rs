//! Users and bots of an account (an extension, docs/api/users.md): who owns credentials and API
//! keys, by name. Read-only through the API: the operator's command line creates and names them.

use super::list_page;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct User {
    /// `usr_…` or `bot_…`.
    pub id: String,
    pub uri: String,
    pub created_at: String,
    /// The name the operator gave; empty when none was given.
    pub name: String,
    /// `user` or `bot`.
    pub kind: String,
    pub is_admin: bool,
}

list_page!(
    /// `GET /users`: the account's users, then its bots, newest first.
    UserList, users, User
);
