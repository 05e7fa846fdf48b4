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
    /// The connection of a pooled write without a savepoint of its own (`writer.rs`, `Undo`),
    /// and its mark: whether the write may have left something in the group's transaction
    /// ([`tracked`]).
    Marked(&'c mut sqlx::AnyConnection, &'c mut bool),
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
            Exec::Marked(conn, marked) => {
                let statement = bind(sqlx::query(sql), values).execute(&mut **conn);
                Ok(tracked(marked, sql, statement).await?.rows_affected())
            }
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
            Exec::Marked(conn, marked) => {
                let statement = bind(sqlx::query(sql), values).fetch_all(&mut **conn);
                let rows = tracked(marked, sql, statement).await?;
                rows.iter().map(|row| decode(row)).collect()
            }
            Exec::Direct(conn) => super::direct::rows(conn, sql, values, |row| decode(row)),
        }
    }

    /// The sqlx connection, for what only the pool's side does (a table whose rows need
    /// another table's, `super::Record::complete`); `None` in a direct write.
    pub(super) fn sqlx(&mut self) -> Option<&mut sqlx::AnyConnection> {
        match self {
            Exec::Sqlx(conn) | Exec::Marked(conn, _) => Some(conn),
            Exec::Direct(_) => None,
        }
    }
}

/// Runs `statement` (the text `sql`) keeping `marked` true unless every statement so far was a
/// read (`SELECT …`) that came back: a change, a failure (on PostgreSQL it aborts the whole
/// transaction) and a statement whose future was dropped before its answer (a request gone)
/// all leave it set, so the write is undone with its group rather than alone.
async fn tracked<T>(
    marked: &mut bool,
    sql: &str,
    statement: impl Future<Output = Result<T, sqlx::Error>>,
) -> Result<T, sqlx::Error> {
    let reads = sql
        .trim_start()
        .get(..6)
        .is_some_and(|word| word.eq_ignore_ascii_case("select"));
    let after = *marked || !reads;
    *marked = true;
    let result = statement.await;
    if result.is_ok() {
        *marked = after;
    }
    result
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

#[cfg(test)]
mod tests {
    use super::tracked;
    use futures_util::FutureExt as _;
    use std::future::{pending, ready};

    #[test]
    fn only_reads_that_came_back_leave_a_write_unmarked() {
        let ok = || ready(Ok::<(), sqlx::Error>(()));
        let mut marked = false;
        tracked(&mut marked, "  select n FROM scratch", ok()).now_or_never();
        assert!(!marked, "a read that came back");
        let failed = ready(Err::<(), _>(sqlx::Error::RowNotFound));
        tracked(&mut marked, "SELECT n FROM scratch", failed).now_or_never();
        assert!(marked, "a read that failed");

        let mut marked = false;
        // Polled once and dropped unanswered, as when a request is gone.
        let unanswered = tracked(&mut marked, "SELECT 1", pending::<Result<(), _>>());
        assert!(unanswered.now_or_never().is_none());
        assert!(marked, "a read left unanswered");

        let mut marked = false;
        tracked(&mut marked, "INSERT INTO scratch (n) VALUES ($1)", ok()).now_or_never();
        assert!(marked, "a change");
        tracked(&mut marked, "SELECT n FROM scratch", ok()).now_or_never();
        assert!(marked, "a read after a change");
    }
}
