//! Where a statement of the shared record machinery runs (`records.rs`, and the audit log's
//! `events.rs`): in a sqlx connection (PostgreSQL, an in-memory SQLite database, a pooled
//! connection, or a write transaction whose area code speaks sqlx), or in the rusqlite
//! connection of a direct write on a SQLite file, on the calling thread (`direct_writes.rs`,
//! docs/database.md, writes). The same statement text serves both: SQLite reads `$1`, `$2`, …
//! as parameters numbered in order of appearance, and the machinery numbers them in order.

use super::Result;
use super::columns::{Fields, Value};

/// A connection to run statements in.
pub(super) enum Exec<'c> {
    Sqlx(&'c mut sqlx::AnyConnection),
    /// `&mut`, not `&`: a rusqlite connection is not `Sync`, and a future holding a shared
    /// reference to it could not move between the runtime's threads.
    Direct(&'c mut rusqlite::Connection),
}

impl Exec<'_> {
    /// Runs `sql` with `values` bound in order; the number of rows it changed.
    pub(super) async fn execute(&mut self, sql: &str, values: &[Value]) -> Result<u64> {
        match self {
            Exec::Sqlx(conn) => Ok(bind(sqlx::query(sql), values)
                .execute(&mut **conn)
                .await?
                .rows_affected()),
            Exec::Direct(conn) => {
                let mut statement = conn.prepare_cached(sql)?;
                let changed = statement.execute(rusqlite::params_from_iter(values))?;
                Ok(u64::try_from(changed).unwrap_or(u64::MAX))
            }
        }
    }

    /// The rows of `sql` with `values` bound in order, each decoded by `decode`.
    pub(super) async fn fetch<T>(
        &mut self,
        sql: &str,
        values: &[Value],
        mut decode: impl FnMut(&dyn Fields) -> Result<T>,
    ) -> Result<Vec<T>> {
        match self {
            Exec::Sqlx(conn) => {
                let rows = bind(sqlx::query(sql), values)
                    .fetch_all(&mut **conn)
                    .await?;
                rows.iter().map(|row| decode(row)).collect()
            }
            Exec::Direct(conn) => super::direct::rows(conn, sql, values, |row| decode(row)),
        }
    }

    /// The sqlx connection, for what only the pool's side does (a table whose rows need
    /// another table's, `super::Record::complete`); `None` in a direct write.
    pub(super) fn sqlx(&mut self) -> Option<&mut sqlx::AnyConnection> {
        match self {
            Exec::Sqlx(conn) => Some(conn),
            Exec::Direct(_) => None,
        }
    }
}

/// `query` with `values` bound in order, each as the type it holds (borrowed, not copied).
fn bind<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    values: &'q [Value],
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    for value in values {
        query = match value {
            Value::Text(text) => query.bind(text.as_str()),
            Value::Blob(bytes) => query.bind(bytes.as_slice()),
            Value::Integer(n) => query.bind(*n),
            Value::Null => query.bind(None::<String>),
        };
    }
    query
}
