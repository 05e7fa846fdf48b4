//! What every resource table of an account shares, written once: keyset paging, fetching one
//! row, deleting one (refused while referenced), checking a referenced row exists, and the
//! `INSERT` of the columns every resource row starts with.
//!
//! Each area's module describes its table with a [`Record`] (the row type, its table, its id
//! kind, what may reference it) and keeps only its own statements: create and update.

use super::{Error, Result, Store};
use sqlx::sqlite::{SqliteArguments, SqliteRow};
use sqlx::{Row as _, Sqlite, SqliteConnection};
use std::future::Future;
use tunnel_core::ids::IdKind;

/// Parameters of one list page (parsed from the query by `crate::paging`).
#[derive(Debug, Clone)]
pub struct PageQuery {
    pub limit: u32,
    pub before_id: Option<String>,
}

/// What refuses the delete of a row: a statement counting the rows referencing it (one `?`: the
/// id), and the words of the 409 (see [`Error::InUse`]).
#[derive(Debug, Clone, Copy)]
pub struct UsedBy {
    pub count: &'static str,
    pub by: &'static str,
}

/// The row type of one resource table. Every such table has `id` (time-sortable), `account_id`,
/// `created_at`, `description` and `metadata` columns and an `(account_id, id)` index.
pub trait Record: Sized + Send + Unpin + 'static {
    /// The table's name: a constant of this module's areas, never input.
    const TABLE: &'static str;
    /// The kind of the table's ids, which names the resource in errors.
    const KIND: IdKind;
    /// What may reference a row; `None` when nothing can.
    const USED_BY: Option<UsedBy> = None;

    /// The row of a `SELECT *` of the table.
    fn decode(row: &SqliteRow) -> Result<Self>;

    /// Completes decoded rows with what other tables hold for them (a subscription's
    /// destinations). Most tables hold everything in their own row.
    fn complete(
        _conn: &mut SqliteConnection,
        rows: Vec<Self>,
    ) -> impl Future<Output = Result<Vec<Self>>> + Send {
        async move { Ok(rows) }
    }
}

impl Store {
    /// One page of the account's rows, newest first, `limit + 1` of them so the caller knows
    /// whether more exist.
    pub async fn list<R: Record>(&self, account_id: &str, page: &PageQuery) -> Result<Vec<R>> {
        // Two statements rather than one with `(? IS NULL OR id < ?)`: SQLite plans a statement
        // once, and with that OR it cannot use `id < ?` as a range on the (account_id, id)
        // index, so it walked the index from the newest row and filtered; a deep page cost
        // O(rows newer than before_id) (34× the first page at 100 k credentials, `cargo xtask
        // bench`). With `id < ?` alone the search starts at `before_id`, and every page costs
        // the same whatever the total (docs/api/README.md, lists and paging).
        let table = R::TABLE;
        let sql = match page.before_id {
            Some(_) => format!(
                "SELECT * FROM {table} WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT ?"
            ),
            None => format!("SELECT * FROM {table} WHERE account_id = ? ORDER BY id DESC LIMIT ?"),
        };
        let mut query = sqlx::query(&sql).bind(account_id);
        if let Some(before_id) = page.before_id.as_deref() {
            query = query.bind(before_id);
        }
        let mut conn = self.pool.acquire().await?;
        let rows = query
            .bind(i64::from(page.limit) + 1)
            .fetch_all(&mut *conn)
            .await?;
        let rows = rows.iter().map(R::decode).collect::<Result<Vec<R>>>()?;
        R::complete(&mut conn, rows).await
    }

    /// The row `id` of the account ([`Error::NotFound`] otherwise).
    pub async fn get<R: Record>(&self, account_id: &str, id: &str) -> Result<R> {
        let sql = format!("SELECT * FROM {} WHERE account_id = ? AND id = ?", R::TABLE);
        let mut conn = self.pool.acquire().await?;
        let found = sqlx::query(&sql)
            .bind(account_id)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or_else(|| not_found::<R>(id))?;
        let rows = R::complete(&mut conn, vec![R::decode(&found)?]).await?;
        rows.into_iter().next().ok_or_else(|| not_found::<R>(id))
    }

    /// Deletes the row `id` of the account: [`Error::NotFound`] when there is none,
    /// [`Error::InUse`] while something references it. The check and the delete share one
    /// write transaction, so no reference can appear in between.
    pub async fn delete<R: Record>(&self, account_id: &str, id: &str) -> Result<()> {
        let mut tx = self.write_tx().await?;
        if let Some(used_by) = R::USED_BY {
            if !exists(&mut tx, R::TABLE, account_id, id).await? {
                return Err(not_found::<R>(id));
            }
            let users: i64 = sqlx::query_scalar(used_by.count)
                .bind(id)
                .fetch_one(&mut *tx)
                .await?;
            if users > 0 {
                return Err(Error::InUse {
                    kind: R::KIND,
                    id: id.to_owned(),
                    by: used_by.by,
                });
            }
        }
        let sql = format!("DELETE FROM {} WHERE account_id = ? AND id = ?", R::TABLE);
        let done = sqlx::query(&sql)
            .bind(account_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 0 {
            return Err(not_found::<R>(id));
        }
        tx.commit().await?;
        Ok(())
    }

    /// The row after an `UPDATE … WHERE account_id = ? AND id = ?` that changed `rows_affected`
    /// rows: [`Error::NotFound`] when it changed none.
    pub(super) async fn updated<R: Record>(
        &self,
        account_id: &str,
        id: &str,
        rows_affected: u64,
    ) -> Result<R> {
        if rows_affected == 0 {
            return Err(not_found::<R>(id));
        }
        self.get(account_id, id).await
    }
}

fn not_found<R: Record>(id: &str) -> Error {
    Error::NotFound {
        kind: R::KIND,
        id: id.to_owned(),
    }
}

/// Whether `table` (a constant, never input) has the row `id` in the account.
pub(super) async fn exists(
    conn: &mut SqliteConnection,
    table: &'static str,
    account_id: &str,
    id: &str,
) -> Result<bool> {
    let sql = format!("SELECT id FROM {table} WHERE account_id = ? AND id = ?");
    let found: Option<String> = sqlx::query_scalar(&sql)
        .bind(account_id)
        .bind(id)
        .fetch_optional(conn)
        .await?;
    Ok(found.is_some())
}

/// A row a write refers to (by the request field `field`) must be one of the account's:
/// [`Error::Missing`] otherwise. Called inside the write's transaction, so a concurrent delete
/// is a 400 on the field, never a foreign-key failure (500).
pub(super) async fn require<R: Record>(
    conn: &mut SqliteConnection,
    account_id: &str,
    id: &str,
    field: String,
) -> Result<()> {
    if exists(conn, R::TABLE, account_id, id).await? {
        return Ok(());
    }
    Err(Error::Missing {
        field,
        kind: R::KIND,
        id: id.to_owned(),
    })
}

/// The `INSERT` of a row of `R`: the columns every resource row starts with, then `extra`, whose values the caller
/// binds in that order on the query [`insert`] returns.
pub(super) fn insert_sql<R: Record>(extra: &[&str]) -> String {
    let columns: Vec<&str> = ["id", "account_id", "created_at", "description", "metadata"]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    let marks = vec!["?"; columns.len()].join(", ");
    format!(
        "INSERT INTO {} ({}) VALUES ({marks})",
        R::TABLE,
        columns.join(", ")
    )
}

/// The query of [`insert_sql`]'s statement with the columns every row starts with bound:
/// `account_id`, and `[id, created_at, description, metadata]` of the row.
pub(super) fn insert<'q>(
    sql: &'q str,
    account_id: &'q str,
    [id, created_at, description, metadata]: [&'q str; 4],
) -> sqlx::query::Query<'q, Sqlite, SqliteArguments<'q>> {
    sqlx::query(sql)
        .bind(id)
        .bind(account_id)
        .bind(created_at)
        .bind(description)
        .bind(metadata)
}

/// A JSON column.
pub(super) fn json_col<T: serde::de::DeserializeOwned>(row: &SqliteRow, col: &str) -> Result<T> {
    let text: String = row.try_get(col)?;
    serde_json::from_str(&text).map_err(|e| sqlx::Error::Decode(Box::new(e)).into())
}

/// The text of a JSON column.
pub(super) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}
