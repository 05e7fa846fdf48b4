//! The users and bots of an account as the API shows them (docs/api/users.md): listed, read,
//! and named. The API only reads them; the operator's commands create them (`accounts.rs`),
//! name them ([`Store::rename_principal`]), give or take their admin role
//! ([`Store::set_principal_admin`]) and remove them ([`Store::remove_principal`]).

use super::error::Error;
use super::records::page_filter;
use super::{PageQuery, Result, Store};
use sqlx::Row as _;
use sqlx::any::AnyRow;
use tunnel_core::event_types::object_name;
use tunnel_core::ids::IdKind;

/// The columns a search of the users (`q`) looks in (`super::search`, migration 7).
pub(super) const SEARCH: &[&str] = &["id", "name"];

/// What [`Store::set_principal_admin`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleChange {
    Done,
    /// No user or bot of that id.
    NoSuch,
    /// It is its account's last admin: taking the role would leave nobody to manage it.
    LastAdmin,
}

/// What [`Store::remove_principal`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    /// Removed: this many API keys deleted with it, and credentials handed over.
    Done { api_keys: u64, credentials: u64 },
    /// No user or bot of that id.
    NoSuch,
    /// It is its account's last admin.
    LastAdmin,
    /// It owns credentials (this many) and no one was named to take them.
    OwnsCredentials(u64),
    /// The one named to take its credentials is not another user or bot of its account.
    NoHeir,
}

/// A user or bot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRow {
    pub id: String,
    pub created_at: String,
    pub name: String,
    pub is_admin: bool,
}

impl UserRow {
    /// `user` or `bot`, by the id's kind: what the wire calls it (`/users`, `/me`, `user list`).
    pub fn kind(&self) -> &'static str {
        object_name(IdKind::of_principal(&self.id))
    }
}

const COLUMNS: &str = "id, created_at, name, is_admin";

fn user_row(row: &AnyRow) -> Result<UserRow> {
    Ok(UserRow {
        id: row.try_get("id")?,
        created_at: row.try_get("created_at")?,
        name: row.try_get("name")?,
        is_admin: row.try_get::<i64, _>("is_admin")? != 0,
    })
}

impl Store {
    /// One page of the users and bots of `account_id` (`limit + 1` rows: the last one only says
    /// that more follow), by id: users before bots, each newest first (`usr_` sorts after
    /// `bot_`).
    pub async fn list_users(&self, account_id: &str, page: &PageQuery) -> Result<Vec<UserRow>> {
        let (filter, values) = page_filter(self.dialect, "principals", "", SEARCH, page, 2);
        let next = values.len() + 2;
        let sql = format!(
            "SELECT {COLUMNS} FROM principals WHERE account_id = $1{filter} ORDER BY id {} LIMIT ${next}",
            page.direction()
        );
        let mut query = sqlx::query(&sql).bind(account_id);
        for value in values {
            query = query.bind(value);
        }
        let query = query.bind(i64::from(page.limit) + 1);
        let rows = self
            .reading(async |conn| Ok(query.fetch_all(conn).await?))
            .await?;
        rows.iter().map(user_row).collect()
    }

    /// The user or bot `id` of `account_id` ([`Error::NotFound`] otherwise).
    pub async fn user(&self, account_id: &str, id: &str) -> Result<UserRow> {
        let sql = format!("SELECT {COLUMNS} FROM principals WHERE account_id = $1 AND id = $2");
        let query = sqlx::query(&sql).bind(account_id).bind(id);
        let row = self
            .reading(async |conn| Ok(query.fetch_optional(conn).await?))
            .await?;
        match row {
            Some(row) => user_row(&row),
            None => Err(Error::NotFound {
                kind: IdKind::of_principal(id),
                id: id.to_owned(),
            }),
        }
    }

    /// Makes the user or bot `id` (of any account: the operator's command) an admin, or a
    /// member; an account keeps at least one admin. Its API keys carry the new role from their
    /// next authentication (at most the key cache's 10 s later on a running server).
    pub async fn set_principal_admin(&self, id: &str, admin: bool) -> Result<RoleChange> {
        let mut tx = self.write_tx().await?;
        let Some(account) =
            sqlx::query_scalar::<_, String>("SELECT account_id FROM principals WHERE id = $1")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?
        else {
            return Ok(RoleChange::NoSuch);
        };
        if !admin && no_other_admin(&mut tx, &account, id).await? {
            return Ok(RoleChange::LastAdmin);
        }
        sqlx::query("UPDATE principals SET is_admin = $1 WHERE id = $2")
            .bind(i64::from(admin))
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(RoleChange::Done)
    }

    /// Removes the user or bot `id` (of any account: the operator's command), with its API keys;
    /// its credentials, which agents may be using, go to `heir` (another user or bot of the
    /// account), and without one a principal owning credentials is not removed. An account keeps
    /// at least one admin. All in one write transaction. Running servers refuse its keys from
    /// their next authentication (at most the key cache's 10 s later), and show the credentials'
    /// new owner from their next commit (a heartbeat at the latest, every few seconds: the row
    /// cache keeps rows only until a commit of its own process, `row_cache.rs`).
    pub async fn remove_principal(&self, id: &str, heir: Option<&str>) -> Result<Removal> {
        let mut tx = self.write_tx().await?;
        let Some(found) = sqlx::query("SELECT account_id, is_admin FROM principals WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
        else {
            return Ok(Removal::NoSuch);
        };
        let account: String = found.try_get("account_id")?;
        if found.try_get::<i64, _>("is_admin")? != 0
            && no_other_admin(&mut tx, &account, id).await?
        {
            return Ok(Removal::LastAdmin);
        }
        if let Some(heir) = heir {
            let known: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM principals WHERE account_id = $1 AND id = $2 AND id <> $3",
            )
            .bind(&account)
            .bind(heir)
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
            if known == 0 {
                return Ok(Removal::NoHeir);
            }
        }
        let owned: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM credentials WHERE owner_id = $1")
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        let owned = u64::try_from(owned).unwrap_or(0);
        let credentials = match heir {
            Some(heir) => sqlx::query("UPDATE credentials SET owner_id = $1 WHERE owner_id = $2")
                .bind(heir)
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected(),
            None if owned > 0 => return Ok(Removal::OwnsCredentials(owned)),
            None => 0,
        };
        let api_keys = sqlx::query("DELETE FROM api_keys WHERE principal_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        sqlx::query("DELETE FROM principals WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Removal::Done {
            api_keys,
            credentials,
        })
    }

    /// Names the user or bot `id` (of any account: the operator's command); `false` when there
    /// is none.
    pub async fn rename_principal(&self, id: &str, name: &str) -> Result<bool> {
        let mut tx = self.write_tx().await?;
        let changed = sqlx::query("UPDATE principals SET name = $1 WHERE id = $2")
            .bind(name)
            .bind(id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        tx.commit().await?;
        Ok(changed == 1)
    }
}

/// Whether `account` has no admin but `id`: the one whose role or removal would leave nobody
/// to manage it.
async fn no_other_admin(tx: &mut super::WriteTx, account: &str, id: &str) -> Result<bool> {
    let others: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM principals WHERE account_id = $1 AND is_admin <> 0 AND id <> $2",
    )
    .bind(account)
    .bind(id)
    .fetch_one(&mut **tx)
    .await?;
    Ok(others == 0)
}
