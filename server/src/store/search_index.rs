//! SQLite's search indexes, kept off the write's path (docs/database.md, search).
//!
//! Migrations 6 and 7 kept a trigram index per searchable table in the database file, written
//! by triggers inside every write's transaction. FTS5 merges its index segments in bursts, so one
//! commit in a few hundred took 10–30 ms, and every writer queued behind it waited (`POST
//! /api/credentials` p99 ~30 ms, 6.5 ms with the credentials' trigger dropped; BENCHMARKS.md).
//! Since migration 8:
//! - a write notes each row it changes in `search_changes`, in its own transaction: one row in
//!   a plain table, not an index;
//! - the indexes live in the search file beside the database (`<file>-search`, attached to
//!   every connection as `search`): one contentless FTS5 table per searchable table
//!   ([`INDEXED`]), and `search_progress`, the last change indexed (`done`) and
//!   the database the index was built for (`source`, that database's `search_source`);
//! - the indexer, a thread of its own at the lowest priority with a connection of its own,
//!   every [`PAUSE`] indexes the changes past `done` in one transaction of the search file (it
//!   never holds the database's write lock meanwhile), then deletes the indexed changes from
//!   `search_changes` in the process's write turn;
//! - a search reads the index for the rows indexed and the rows themselves for the changes past
//!   `done` (`search.rs`), so it sees every committed write however far behind the indexer is.
//!
//! An in-memory database has its index in memory, attached to its one connection, and a task
//! indexes in the pool's write transactions instead.
//!
//! At start, an index built for another database (a copy, a backup put back: its `source` or a
//! `done` past the database's last change says so), or of another layout, is emptied and every
//! row noted as changed: searches stay complete while the indexer catches up.

use super::columns::Value;
use super::exec::Exec;
use super::writer::Writer;
use super::{
    ApiKeyRow, BackendRow, CredentialRow, DestinationRow, Record, Result, SshCaRow, Store,
    SubscriptionRow, TlsEdgeRow,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::Notify;

/// Every searchable table and the columns its search looks in (`search.rs`): what the indexer
/// indexes and migration 8's triggers watch (a test below checks that they agree). Here, not in
/// `search.rs`, which the tables' own modules use.
pub(super) const INDEXED: &[(&str, &[&str])] = &[
    (CredentialRow::TABLE, CredentialRow::SEARCH),
    (ApiKeyRow::TABLE, ApiKeyRow::SEARCH),
    (SshCaRow::TABLE, SshCaRow::SEARCH),
    (BackendRow::TABLE, BackendRow::SEARCH),
    (TlsEdgeRow::TABLE, TlsEdgeRow::SEARCH),
    (DestinationRow::TABLE, DestinationRow::SEARCH),
    (SubscriptionRow::TABLE, SubscriptionRow::SEARCH),
    ("tunnel_sessions", super::sessions::SEARCH),
    ("principals", super::users::SEARCH),
];

/// How long the indexer waits between passes: long enough that a pass indexes many changes at
/// once (a transaction of the search file costs a sync), short enough that few rows wait for it.
const PAUSE: Duration = Duration::from_millis(200);

/// The most changes one pass indexes: bounds one transaction of the search file.
const BATCH: i64 = 20_000;

/// How long a bulk load waits for the index to catch up ([`super::Store::refresh_statistics`]).
const CATCH_UP: Duration = Duration::from_secs(3600);

/// The search file of the database `database`.
pub(super) fn file_of(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push("-search");
    PathBuf::from(name)
}

/// The statement attaching the search index to a pool connection: the file `index` read-only, or
/// one in memory (`None`, an in-memory database's, which its one connection writes). Read-only,
/// because a `BEGIN IMMEDIATE` takes a write lock on every database attached read-write: each
/// pooled write would then hold the index's lock, and wait for the indexer's pass to end.
/// `file:` names are URIs: `%`, `?` and `#` are percent-encoded.
fn attach(index: Option<&Path>) -> String {
    let name = match index {
        Some(path) => format!("file:{}?mode=ro", super::database::uri_path(path)),
        None => ":memory:".to_owned(),
    };
    format!("ATTACH DATABASE '{}' AS search", name.replace('\'', "''"))
}

/// The index's tables, as created: a layout stored with the index, so that one of another
/// layout (another build's columns) is rebuilt.
fn layout() -> String {
    INDEXED
        .iter()
        .map(|(table, columns)| {
            format!(
                "CREATE VIRTUAL TABLE search.{table}_search USING fts5({}, content='', \
                 contentless_delete=1, tokenize='trigram')",
                columns.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join(";\n")
}

/// Whether the index is stale, in `exec` (a write transaction of a connection with the index
/// attached; committed before [`reset`] runs in a second one): if so, notes every row as
/// changed and returns the last change before them and the database's `source`. Noting twice
/// (a crash between the two transactions) only indexes rows twice.
async fn stale(exec: &mut Exec<'_>) -> Result<Option<(i64, String)>> {
    exec.execute(
        "CREATE TABLE IF NOT EXISTS search.search_progress (id INTEGER PRIMARY KEY \
         CHECK (id = 1), done INTEGER NOT NULL, source TEXT NOT NULL, layout TEXT NOT NULL)",
        &[],
    )
    .await?;
    let token = exec
        .fetch(
            "SELECT token FROM main.search_source WHERE id = 1",
            &[],
            |row| row.required_text("token"),
        )
        .await?
        .pop()
        .ok_or(sqlx::Error::RowNotFound)?;
    let last = last_change(exec).await?;
    let found = exec
        .fetch(
            "SELECT done, source, layout FROM search.search_progress WHERE id = 1",
            &[],
            |row| {
                Ok((
                    row.integer("done")?.unwrap_or(i64::MAX),
                    row.required_text("source")?,
                    row.required_text("layout")?,
                ))
            },
        )
        .await?;
    let fresh = found.first().is_some_and(|(done, source, built)| {
        *source == token && *built == layout() && *done <= last
    });
    if fresh {
        return Ok(None);
    }
    for (table, _) in INDEXED {
        exec.execute(
            &format!("INSERT INTO main.search_changes (tbl, row) SELECT '{table}', rowid FROM main.{table}"),
            &[],
        )
        .await?;
    }
    Ok(Some((last, token)))
}

/// Empties the index (creating its tables anew) and records that the changes up to `done` are
/// in it: with [`stale`]'s value, every row is past it.
async fn reset(exec: &mut Exec<'_>, done: i64, source: &str) -> Result<()> {
    for (table, _) in INDEXED {
        exec.execute(&format!("DROP TABLE IF EXISTS search.{table}_search"), &[])
            .await?;
    }
    for create in layout().split(";\n") {
        exec.execute(create, &[]).await?;
    }
    exec.execute(
        "INSERT INTO search.search_progress (id, done, source, layout) VALUES (1, $1, $2, $3) \
         ON CONFLICT (id) DO UPDATE SET done = excluded.done, source = excluded.source, \
         layout = excluded.layout",
        &[
            Value::Integer(done),
            Value::from(source),
            Value::from(layout()),
        ],
    )
    .await?;
    Ok(())
}

/// The last change ever noted (changes indexed are deleted, their numbers never reused).
async fn last_change(exec: &mut Exec<'_>) -> Result<i64> {
    number(
        exec,
        "SELECT seq AS n FROM main.sqlite_sequence WHERE name = 'search_changes'",
    )
    .await
}

/// The integer `n` of the first row of `sql`; 0 when it has none or it is NULL.
async fn number(exec: &mut Exec<'_>, sql: &str) -> Result<i64> {
    let found = exec.fetch(sql, &[], |row| row.integer("n")).await?;
    Ok(found.into_iter().next().flatten().unwrap_or(0))
}

/// One pass of the indexer in `exec`, inside the caller's transaction: indexes up to [`BATCH`]
/// changes past `done` and moves `done` past them. Returns the new `done` and whether changes
/// remain, or `None` when there was nothing to index.
async fn pass(exec: &mut Exec<'_>) -> Result<Option<(i64, bool)>> {
    // Written first, so the transaction holds the search file's write lock before it reads
    // `done`: another process's indexer (a command run beside the server) waits, then reads
    // the `done` this one leaves.
    exec.execute("UPDATE search.search_progress SET done = done", &[])
        .await?;
    let done = number(exec, "SELECT done AS n FROM search.search_progress").await?;
    let last = number(exec, "SELECT max(seq) AS n FROM main.search_changes").await?;
    if last <= done {
        return Ok(None);
    }
    let top = last.min(done.saturating_add(BATCH));
    let range = [Value::Integer(done), Value::Integer(top)];
    // Only the tables changed in the range: most passes index one or two of them, and the
    // other tables' two statements each cost as much as theirs.
    let touched = exec
        .fetch(
            "SELECT DISTINCT tbl FROM main.search_changes WHERE seq > $1 AND seq <= $2",
            &range,
            |row| row.required_text("tbl"),
        )
        .await?;
    for (table, columns) in INDEXED
        .iter()
        .filter(|(table, _)| touched.iter().any(|t| t == table))
    {
        let changed = format!(
            "SELECT row FROM main.search_changes WHERE seq > $1 AND seq <= $2 AND tbl = '{table}'"
        );
        // A row changed twice in the range is deleted and inserted once: `IN` reads a set.
        exec.execute(
            &format!("DELETE FROM search.{table}_search WHERE rowid IN ({changed})"),
            &range,
        )
        .await?;
        let columns = columns.join(", ");
        exec.execute(
            &format!(
                "INSERT INTO search.{table}_search (rowid, {columns}) SELECT rowid, {columns} \
                 FROM main.{table} WHERE rowid IN ({changed})"
            ),
            &range,
        )
        .await?;
    }
    exec.execute(
        "UPDATE search.search_progress SET done = $1",
        &[Value::Integer(top)],
    )
    .await?;
    Ok(Some((top, top < last)))
}

/// The statement deleting the changes indexed, up to `$1`.
const FORGET: &str = "DELETE FROM main.search_changes WHERE seq <= $1";

/// The indexer of a store's SQLite database (none on PostgreSQL).
#[derive(Debug)]
pub(super) struct Indexer {
    /// The database file; `None` in memory.
    database: Option<PathBuf>,
    /// The indexer's connection to a file database, the only one writing the search file, until
    /// [`Store::start_search`] hands it to the indexer's thread.
    conn: Mutex<Option<rusqlite::Connection>>,
    signal: Arc<Signal>,
    running: Mutex<Option<Running>>,
}

#[derive(Debug)]
enum Running {
    Thread(std::thread::JoinHandle<()>),
    Task(tokio::task::JoinHandle<()>),
}

/// Wakes the indexer's thread early: to stop, or to index now.
#[derive(Debug, Default)]
struct Signal {
    state: Mutex<Wake>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct Wake {
    stop: bool,
    now: bool,
}

impl Indexer {
    /// The indexer of `database` (`None` in memory). For a file it opens its connection now,
    /// creating the search file (in WAL mode) before the pool's connections attach it.
    pub(super) fn new(database: Option<PathBuf>) -> Result<Indexer> {
        let conn = database.as_deref().map(open).transpose()?;
        Ok(Indexer {
            database,
            conn: Mutex::new(conn),
            signal: Arc::default(),
            running: Mutex::new(None),
        })
    }

    /// The statement attaching the index to each connection of the pool ([`attach`]).
    pub(super) fn attach(&self) -> String {
        attach(self.database.as_deref().map(file_of).as_deref())
    }

    /// Asks the indexer's thread for a pass now.
    fn nudge(&self) {
        self.signal.state().now = true;
        self.signal.changed.notify_all();
    }

    /// Stops the indexer and waits for its thread to close its connection.
    pub(super) async fn stop(&self) {
        self.signal.state().stop = true;
        self.signal.changed.notify_all();
        let running = self.running().take();
        match running {
            Some(Running::Thread(thread)) => {
                let _ = tokio::task::spawn_blocking(move || thread.join()).await;
            }
            Some(Running::Task(task)) => {
                task.abort();
                let _ = task.await;
            }
            None => {}
        }
    }

    fn running(&self) -> MutexGuard<'_, Option<Running>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A store dropped without [`Store::close`] (tests) stops its indexer all the same.
impl Drop for Indexer {
    fn drop(&mut self) {
        self.signal.state().stop = true;
        self.signal.changed.notify_all();
        if let Some(Running::Task(task)) = self.running().take() {
            task.abort();
        }
    }
}

impl Store {
    /// Makes the search index ready and starts its indexer ([`Store::open`], SQLite): for a file
    /// in the indexer's connection, then its thread; in memory in the pool's write
    /// transactions, then a task.
    pub(super) async fn start_search(&self) -> Result<()> {
        let Some(indexer) = &self.search else {
            return Ok(());
        };
        let conn = indexer
            .conn
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(mut conn) = conn {
            let stale =
                in_transaction(&mut conn, "BEGIN IMMEDIATE", async |exec| stale(exec).await)
                    .await?;
            if let Some((done, source)) = stale {
                in_transaction(&mut conn, "BEGIN", async |exec| {
                    reset(exec, done, &source).await
                })
                .await?;
                tracing::info!(
                    "the search index was built for another database or build: rebuilding it"
                );
            }
            let signal = indexer.signal.clone();
            let indexing = Indexing {
                writer: self.writer.clone(),
                wake: self.deliveries_queued.clone(),
                runtime: tokio::runtime::Handle::current(),
            };
            let thread = std::thread::Builder::new()
                .name("search-indexer".to_owned())
                .spawn(move || {
                    lower_priority();
                    indexing.run(conn, &signal);
                })
                .map_err(sqlx::Error::Io)?;
            *indexer.running() = Some(Running::Thread(thread));
            return Ok(());
        }
        let mut tx = self.write_tx().await?;
        let stale = stale(&mut tx.exec()).await?;
        tx.commit().await?;
        if let Some((done, source)) = stale {
            let mut tx = self.write_tx().await?;
            reset(&mut tx.exec(), done, &source).await?;
            tx.commit().await?;
        }
        // The task's store has no indexer of its own: dropping the last store that has one
        // aborts the task.
        let mut store = self.clone();
        store.search = None;
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(PAUSE).await;
                if let Err(e) = store.index_in_memory().await {
                    tracing::warn!(error = %e, "a pass of the search indexer failed; it tries again");
                }
            }
        });
        *indexer.running() = Some(Running::Task(task));
        Ok(())
    }

    /// One pass of an in-memory database's indexer, forgetting what it indexed in the same
    /// write transaction; whether changes remain.
    async fn index_in_memory(&self) -> Result<bool> {
        let mut tx = self.write_tx().await?;
        let indexed = pass(&mut tx.exec()).await?;
        let Some((done, more)) = indexed else {
            return Ok(false);
        };
        tx.exec().execute(FORGET, &[Value::Integer(done)]).await?;
        tx.commit().await?;
        Ok(more)
    }

    /// Waits until the search index holds every change committed so far (an hour at most):
    /// after a bulk load, so the searches that follow read the index rather than the rows; and
    /// in tests, to search through the index. Nothing to wait for on PostgreSQL.
    pub async fn settle_search(&self) -> Result<()> {
        let Some(indexer) = &self.search else {
            return Ok(());
        };
        if indexer.database.is_none() {
            while self.index_in_memory().await? {}
            return Ok(());
        }
        let deadline = tokio::time::Instant::now() + CATCH_UP;
        loop {
            let pending: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM (SELECT 1 FROM main.search_changes \
                 WHERE seq > (SELECT done FROM search.search_progress) LIMIT 1)",
            )
            .fetch_one(&self.pool)
            .await?;
            if pending == 0 {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(sqlx::Error::Protocol(format!(
                    "the search index did not catch up within {} s",
                    CATCH_UP.as_secs()
                ))
                .into());
            }
            indexer.nudge();
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Signal {
    fn state(&self) -> MutexGuard<'_, Wake> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits up to [`PAUSE`] unless asked for a pass; whether to stop.
    fn wait(&self) -> bool {
        let state = self.state();
        let (mut state, _) = self
            .changed
            .wait_timeout_while(state, PAUSE, |wake| !wake.stop && !wake.now)
            .unwrap_or_else(|e| e.into_inner());
        state.now = false;
        state.stop
    }
}

/// What the indexer's thread holds besides its connection.
struct Indexing {
    writer: Arc<Writer>,
    wake: Arc<Notify>,
    runtime: tokio::runtime::Handle,
}

impl Indexing {
    fn run(&self, mut conn: rusqlite::Connection, signal: &Signal) {
        while !signal.wait() {
            // Passes follow each other while changes remain (a bulk load, a catch-up).
            loop {
                let indexed =
                    self.runtime
                        .block_on(in_transaction(&mut conn, "BEGIN", async |exec| {
                            pass(exec).await
                        }));
                match indexed {
                    Ok(Some((done, more))) => {
                        if let Err(e) = self.forget(&conn, done) {
                            tracing::warn!(error = %e, "the search indexer cannot forget the changes it indexed");
                        }
                        if !more || signal.state().stop {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        tracing::warn!(error = %e, "a pass of the search indexer failed; it tries again");
                        break;
                    }
                }
            }
        }
        // The pool's connections read the search file read-only and cannot fold its WAL into it
        // as they close: this one does, so a stopped server leaves the file whole.
        if let Err(e) = conn.query_row("PRAGMA search.wal_checkpoint(TRUNCATE)", [], |_| Ok(())) {
            tracing::debug!(error = %e, "the search file's journal stays until the next start");
        }
    }

    /// Deletes the changes indexed, in the process's write turn: never beside a group of
    /// writes.
    fn forget(&self, conn: &rusqlite::Connection, done: i64) -> Result<()> {
        let turn = self.runtime.block_on(self.writer.direct_turn(&self.wake));
        conn.execute(FORGET, [done])?;
        drop(turn);
        Ok(())
    }
}

/// The indexer's connection: the database, with the search file attached read-write (created,
/// in WAL mode, if missing).
fn open(database: &Path) -> Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let conn = rusqlite::Connection::open_with_flags(
        database,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(super::direct::BUSY_TIMEOUT)?;
    // A pass runs two statements for each table it indexes and six of its own: with rusqlite's
    // 16 kept by default, a pass over many tables prepared each of them anew. Twice that, so
    // the start's statements (`stale`, `reset`) do not push a pass's out.
    conn.set_prepared_statement_cache_capacity(2 * (2 * INDEXED.len() + 6));
    conn.execute(
        "ATTACH DATABASE ?1 AS search",
        [file_of(database).to_string_lossy().as_ref()],
    )?;
    conn.query_row("PRAGMA search.journal_mode = WAL", [], |_| Ok(()))?;
    // A pass is acknowledged (its changes forgotten) only once it is on disk.
    conn.execute_batch("PRAGMA search.synchronous = FULL")?;
    Ok(conn)
}

/// Runs `work` in a transaction of `conn` begun with `begin`: committed if it succeeds.
async fn in_transaction<T>(
    conn: &mut rusqlite::Connection,
    begin: &str,
    work: impl AsyncFnOnce(&mut Exec<'_>) -> Result<T>,
) -> Result<T> {
    conn.execute_batch(begin)?;
    let result = work(&mut Exec::Direct(conn)).await;
    conn.execute_batch(if result.is_ok() { "COMMIT" } else { "ROLLBACK" })?;
    result
}

/// Runs the indexer's thread at the lowest priority: indexing may fall behind under load (a
/// search then reads more rows itself), the requests must not.
#[cfg(target_os = "linux")]
fn lower_priority() {
    // On Linux each thread has a nice value of its own, and no pid names the calling thread.
    if let Err(e) = rustix::process::setpriority_process(None, 19) {
        tracing::debug!(error = %e, "the search indexer keeps its priority");
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The migrations that made the triggers noting changes (8) and changed them since (10).
    const SQLITE_LATER: &str = include_str!("../../migrations/sqlite/0010_session_search.sql");
    const SQLITE: &str = concat!(
        include_str!("../../migrations/sqlite/0008_search_off_writes.sql"),
        include_str!("../../migrations/sqlite/0010_session_search.sql"),
    );
    const POSTGRES: &str = concat!(
        include_str!("../../migrations/postgres/0006_search.sql"),
        include_str!("../../migrations/postgres/0007_user_names.sql"),
        include_str!("../../migrations/postgres/0010_session_search.sql"),
    );
    const POSTGRES_LISTS: &str =
        include_str!("../../migrations/postgres/0009_small_pending_lists.sql");

    #[test]
    fn every_searchable_table_is_indexed_on_what_its_search_reads() {
        for (table, columns) in INDEXED {
            assert!(
                SQLITE.contains(&format!(
                    "AFTER UPDATE OF {} ON {table} BEGIN",
                    columns.join(", ")
                )),
                "SQLite notes the changes of {table}'s searched columns"
            );
            for event in ["INSERT", "DELETE"] {
                assert!(
                    SQLITE.contains(&format!("AFTER {event} ON {table} BEGIN")),
                    "SQLite notes every {event} of {table}"
                );
            }
            assert!(
                POSTGRES.contains(&format!(
                    "ON {table} USING gin (lower({}) gin_trgm_ops)",
                    super::super::search::expression("", columns)
                )),
                "the PostgreSQL index of {table} is on its expression"
            );
            assert!(
                POSTGRES_LISTS.contains(&format!(
                    "ALTER INDEX {table}_search SET (gin_pending_list_limit = {});",
                    super::super::search::PENDING_LIST_KB
                )),
                "the PostgreSQL index of {table} flushes its pending list in small pieces"
            );
        }
        assert_eq!(
            SQLITE.matches("CREATE TRIGGER").count() - SQLITE_LATER.matches("DROP TRIGGER").count(),
            3 * INDEXED.len(),
            "no table is watched that is not searched"
        );
        assert_eq!(
            POSTGRES_LISTS.matches("ALTER INDEX").count(),
            INDEXED.len(),
            "every trigram index is altered once"
        );
    }
}
