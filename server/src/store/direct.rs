//! Reads of a SQLite file on the calling thread: a row by id, a page of a list without a search,
//! the audit log (docs/database.md, connections); and the connection direct writes run in
//! (`direct_writes.rs`).
//!
//! sqlx's SQLite driver runs each connection on a thread of its own: a statement is a message
//! to that thread and its rows a message back, each a wake-up of another thread. For the `GET`
//! of one credential that hand-over cost three times the rest of the request: the same server
//! with that read taken out served 2.5–3× the requests at under a third of the CPU per request
//! (BENCHMARKS.md, closing note, direct reads). So `Store::get` and `Store::list` of the
//! `record!` tables, and the audit log's event by id and pages, run here when they can: with
//! rusqlite on the same SQLite library, in the calling task. A lookup by primary key takes
//! microseconds and a page of 101 rows a fraction of a millisecond, about what the hand-overs
//! cost. A search stays on the pool (one matching little can read many rows, which must not hold
//! a runtime thread), as do an audit-log page filtered on two columns or more (one index, the
//! other filters checked row by row) and a table whose rows need another table's
//! (`Record::COMPLETES`). These are reads like any other, not a cache: in
//! WAL mode they see every committed write, whoever made it, and never wait for a writer.
//!
//! Only for SQLite files: an in-memory database is private to sqlx's one connection, and
//! PostgreSQL is a server whose round trip is the cost anyway.

use super::columns::{ColumnNames, Fields, SqliteRow};
use super::{Result, Store};
use rusqlite::{Connection, OpenFlags};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Idle connections kept: a read holds one only while it runs, never across an `.await`, so
/// there are about as many at once as the runtime has worker threads.
const MAX_IDLE: usize = 16;

/// How long a read (or the search indexer, `search_index.rs`) waits for a lock, as sqlx's
/// connections wait. In WAL mode a reader waits only
/// while the file is being recovered, or while another process holds it exclusively (a
/// `VACUUM` by hand); that wait holds the runtime thread it runs on.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Prepared statements kept per connection: a table's read of one row and its list pages (first
/// or later, either order, each limit its own text) of every table, and the audit log's (each
/// filter and limit its own text), with room to spare for the limits in common use (rusqlite
/// keeps 16 by default, fewer than that).
const STATEMENTS: usize = 256;

/// Read-only connections to one SQLite file, used one read at a time; and it opens the write
/// connection.
#[derive(Debug)]
pub(super) struct DirectConnections {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    /// Set by [`DirectConnections::close`]: no read starts here any more.
    closed: AtomicBool,
}

impl DirectConnections {
    pub(super) fn new(path: PathBuf) -> DirectConnections {
        DirectConnections {
            path,
            idle: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        }
    }

    /// Whether reads may still run here (else they go to the pool, closed as well).
    pub(super) fn is_open(&self) -> bool {
        !self.closed.load(Ordering::Acquire)
    }

    /// Closes the idle connections and takes no more reads: an idle connection keeps a shared
    /// lock on the file, and the pool's last connection can only checkpoint the WAL into the
    /// file and remove it, as it does when the server stops, once no other connection is open.
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.idle().clear();
    }

    /// A read-write connection to the file, for direct writes.
    pub(super) fn open_writer(&self) -> Result<Connection> {
        let conn = self.open(OpenFlags::SQLITE_OPEN_READ_WRITE)?;
        // As sqlx's connections: the schema's references are enforced.
        conn.pragma_update(None, "foreign_keys", "ON")?;
        Ok(conn)
    }

    /// The rows of `sql` with `params` bound in order (`$1`, `$2`, …), each decoded by `decode`.
    pub(super) fn read<T, P: rusqlite::ToSql>(
        &self,
        sql: &str,
        params: &[P],
        decode: impl FnMut(&dyn Fields) -> Result<T>,
    ) -> Result<Vec<T>> {
        let popped = self.idle().pop();
        let conn = match popped {
            Some(conn) => conn,
            None => self.open(OpenFlags::SQLITE_OPEN_READ_ONLY)?,
        };
        let read = rows(&conn, sql, params, decode);
        let mut idle = self.idle();
        if idle.len() < MAX_IDLE && self.is_open() {
            idle.push(conn);
        }
        read
    }

    /// A connection to the file, read-only or read-write (`mode`); never creating it.
    fn open(&self, mode: OpenFlags) -> Result<Connection> {
        let conn = Connection::open_with_flags(&self.path, mode | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.set_prepared_statement_cache_capacity(STATEMENTS);
        Ok(conn)
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Store {
    /// The reads on this thread, on a SQLite file until the store closes.
    pub(super) fn direct_reads(&self) -> Option<&DirectConnections> {
        self.direct.as_deref().filter(|direct| direct.is_open())
    }
}

/// The rows of `sql` in `conn` with `params` bound in order (`$1`, `$2`, …), each decoded by
/// `decode`: the direct reads' and the direct writes' (`super::exec`) statement, prepared once
/// per connection.
pub(super) fn rows<T, P: rusqlite::ToSql>(
    conn: &Connection,
    sql: &str,
    params: &[P],
    mut decode: impl FnMut(&dyn Fields) -> Result<T>,
) -> Result<Vec<T>> {
    let mut statement = conn.prepare_cached(sql)?;
    let columns = ColumnNames::of(&statement);
    let mut rows = statement.query(rusqlite::params_from_iter(params))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(decode(&SqliteRow::new(row, &columns))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The number of this process's open files on `path`.
    fn open_files(path: &std::path::Path) -> usize {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|fd| std::fs::read_link(fd.unwrap().path()).ok())
            .filter(|target| target == path)
            .count()
    }

    #[test]
    fn reads_keep_a_connection_until_closed_and_none_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        // Written and closed first: SQLite keeps a closed connection's file open while another
        // connection of the process holds a lock on it, which would hide the reads' own.
        Connection::open(&path)
            .unwrap()
            .execute_batch(
                "PRAGMA journal_mode = WAL; CREATE TABLE t (id TEXT, n INTEGER);
                 INSERT INTO t VALUES ('a', 1), ('b', NULL);",
            )
            .unwrap();
        let reads = DirectConnections::new(path.clone());
        let read = |reads: &DirectConnections| {
            reads
                .read(
                    "SELECT id, n FROM t WHERE id > $1 ORDER BY id",
                    &["0"],
                    |row| Ok((row.required_text("id")?, row.integer("n")?)),
                )
                .unwrap()
        };
        let rows = vec![("a".to_owned(), Some(1)), ("b".to_owned(), None)];
        assert_eq!(read(&reads), rows);
        assert_eq!(open_files(&path), 1, "one connection kept for reads");
        assert_eq!(read(&reads), rows);
        assert_eq!(open_files(&path), 1, "the kept connection is used again");

        reads.close();
        assert!(!reads.is_open());
        assert_eq!(open_files(&path), 0, "closing closes the kept connection");
        assert_eq!(
            read(&reads),
            rows,
            "a read in flight at the close still ends"
        );
        assert_eq!(open_files(&path), 0, "and its connection is not kept");
    }

    #[test]
    fn columns_are_found_by_name_as_rusqlite_finds_them() {
        let conn = Connection::open_in_memory().unwrap();
        let sql = "SELECT 'x' AS Label, 7 AS n, 'y' AS other";
        // In the statement's order, out of it, and the same column twice; ASCII
        // case-insensitively.
        let read = rows(&conn, sql, &[] as &[&str], |row| {
            Ok([
                row.text("label")?,
                row.integer("N")?.map(|n| n.to_string()),
                row.text("OTHER")?,
                row.text("Label")?,
                row.text("other")?,
                row.text("other")?,
                row.integer("n")?.map(|n| n.to_string()),
            ])
        })
        .unwrap();
        let want = ["x", "7", "y", "x", "y", "y", "7"].map(|v| Some(v.to_owned()));
        assert_eq!(read, vec![want]);
        // Two columns of one name: the name is the first of them, however often it is asked.
        let twice = rows(&conn, "SELECT 1 AS id, 2 AS ID", &[] as &[&str], |row| {
            Ok([row.integer("id")?, row.integer("id")?, row.integer("Id")?])
        })
        .unwrap();
        assert_eq!(twice, vec![[Some(1); 3]]);
        // A column the statement does not have is an error naming it, not another column.
        let missing = rows(&conn, sql, &[] as &[&str], |row| row.text("colour"))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("colour"), "{missing}");
    }
}
