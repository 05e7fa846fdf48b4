//! Reads of a SQLite file on the calling thread: a row by id, a page of a list without a search
//! (docs/database.md, reads).
//!
//! sqlx's SQLite driver runs each connection on a thread of its own: a statement is a message
//! to that thread and its rows a message back, each a wake-up of another thread. For the `GET`
//! of one resource that hand-over cost three times the rest of the request: the same server
//! answering without reading the database served 2.5–3× the requests, at under a third of the
//! CPU per request (BENCHMARKS.md, closing note). So the reads of one row by id, and the pages
//! of a list without a search, run here, with rusqlite on the same SQLite library, in the
//! calling task: a lookup by primary key takes microseconds and a page of 101 rows a fraction of
//! a millisecond, about what the hand-overs cost. A search stays on the pool: one matching
//! little can read many rows, and that must not hold a runtime thread. It is a read like any other (no cache): in WAL
//! mode it sees every committed write, whoever wrote it, and never waits for a writer.
//!
//! Only for SQLite files: an in-memory database is private to sqlx's one connection, and
//! PostgreSQL is a server whose round trip is the cost anyway.

use super::Result;
use rusqlite::{Connection, OpenFlags};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// Idle connections kept: a read holds one only while it runs, never across an `.await`, so
/// there are about as many at once as the runtime has worker threads.
const MAX_IDLE: usize = 16;

/// How long a read waits for a lock (rare in WAL mode: while the file is being recovered), as
/// sqlx's connections wait.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Read-only connections to one SQLite file, used one read at a time.
#[derive(Debug)]
pub(super) struct DirectReads {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl DirectReads {
    pub(super) fn new(path: PathBuf) -> DirectReads {
        DirectReads {
            path,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// The rows of `sql` with `params` bound in order (`$1`, `$2`, …), each decoded by `decode`.
    pub(super) fn read<T, P: rusqlite::ToSql>(
        &self,
        sql: &str,
        params: &[P],
        mut decode: impl FnMut(&rusqlite::Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let popped = self.idle().pop();
        let conn = match popped {
            Some(conn) => conn,
            None => self.open()?,
        };
        let read = (|| {
            let mut statement = conn.prepare_cached(sql)?;
            let mut rows = statement.query(rusqlite::params_from_iter(params))?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                out.push(decode(row)?);
            }
            Ok(out)
        })();
        let mut idle = self.idle();
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
        read
    }

    fn open(&self) -> Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        Ok(conn)
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }
}
