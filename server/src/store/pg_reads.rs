//! The store's reads outside a transaction on PostgreSQL (a row by id, a page of a list, a
//! search, the audit log, the users, the sessions' directory, a destination's deliveries and
//! secrets, the account's name, an API key or authtoken presented), on connections kept here
//! rather than in sqlx's pool (docs/database.md, connections): [`PgReads::rows`] for the reads
//! of rows (below), [`Store::reading`] for the others, which picks where such a read runs.
//!
//! sqlx's pool pings every connection given back to it (a `Sync` message and PostgreSQL's
//! answer) before anyone may use it again, and has no setting to skip that. For a `GET` of one
//! resource that was a second round trip to PostgreSQL beside the statement's own, waking the
//! database's process twice a request: on these connections the same server served about half
//! as many again (BENCHMARKS.md, closing note). The ping is for a connection whose user stopped
//! midway (a request dropped mid-statement, a transaction left open) before another user gets
//! it. A connection here only ever runs reads, outside any transaction, and goes back only when
//! its read finished ([`ReadConnection::done`]): one dropped midway, or whose read the database
//! failed, is closed instead. So it needs no ping on its way back. As in the pool, one idle for
//! [`PING_WHEN_IDLE`] is pinged before its next use, one older than [`MAX_LIFETIME`] is
//! replaced, and one idle for the store's idle timeout (`--database-idle-timeout`) is closed by
//! a sweep in the background ([`PgReads::spawn_sweep`]), so a server that was busy once does
//! not keep its connections, and PostgreSQL's processes behind them, for good. Each says what
//! it is in PostgreSQL's `pg_stat_activity`: its `application_name` is [`APPLICATION_NAME`],
//! unless the database URL names one.
//!
//! There are two sets of them ([`PgReads`] is generic over its connection type). The read of
//! one row by id and a page of a list (with or without a search), of the tables whose rows hold
//! everything (`super::Record::COMPLETES`), and the audit log's reads run on connections of
//! sqlx's own PostgreSQL driver ([`PgReads::rows`]): the same statements that the other reads
//! send through sqlx's `Any` driver, whose rows copy every value of every row (and the row's
//! column list) before the row type reads them, a fifth of the server's CPU for a list page of
//! 100 (BENCHMARKS.md, closing note). The other reads, written against `Any` as the rest of the
//! store is, keep a smaller set of their own.

use super::columns::{Fields, PgFields};
use super::{ACQUIRE_TIMEOUT, Error, PING_WHEN_IDLE, Result, Store};
use crate::secret::Secret;
use sqlx::{AnyConnection, Connection};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, SemaphorePermit};

/// Row-read connections at most ([`PgReads::rows`]), beside the pool's 16 (`Store::connect`):
/// a read holds one for a statement, and more than this many at once only queue in
/// PostgreSQL.
pub(super) const ROW_CONNECTIONS: usize = 8;

/// Connections at most for the other reads: fewer, since the row reads are most of the API's,
/// and every connection counts against PostgreSQL's `max_connections` on every node.
pub(super) const OTHER_CONNECTIONS: usize = 4;

/// A connection older than this is closed when its read ends, as sqlx's pool does by default:
/// PostgreSQL's process behind a connection keeps caches that only grow.
const MAX_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// What a read connection calls itself in PostgreSQL (`pg_stat_activity.application_name`).
pub(super) const APPLICATION_NAME: &str = "tunnel-server reads";
/// What the pool's connections (the writes, and the reads that are not this module's) call
/// themselves.
pub(super) const POOL_APPLICATION_NAME: &str = "tunnel-server";

/// `url` with [`APPLICATION_NAME`], unless it names an application of its own.
fn named(url: &str) -> String {
    named_as(url, APPLICATION_NAME)
}

/// `url` with the application name `name`, unless it names an application of its own: an
/// operator tells the server's connections apart in `pg_stat_activity`.
pub(super) fn named_as(url: &str, name: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed)
            if !parsed
                .query_pairs()
                .any(|(key, _)| key == "application_name") =>
        {
            parsed
                .query_pairs_mut()
                .append_pair("application_name", name);
            parsed.into()
        }
        _ => url.to_owned(),
    }
}

/// The read connections of one PostgreSQL database, of sqlx's driver `C`.
#[derive(Debug)]
pub(super) struct PgReads<C = AnyConnection> {
    /// The connection URL: it may hold the database's password, so its `Debug` hides it.
    url: Secret,
    /// An idle connection unused for this long is closed ([`PgReads::spawn_sweep`]).
    idle_timeout: Duration,
    /// Idle connections, the last used on top: a quiet server keeps using the same few.
    idle: Mutex<Vec<Idle<C>>>,
    /// One permit per connection open or opening; closed by [`PgReads::close`].
    permits: Semaphore,
}

#[derive(Debug)]
struct Idle<C> {
    conn: C,
    opened: Instant,
    since: Instant,
}

/// A connection lent to one read; deref to it to run statements.
#[derive(Debug)]
pub(super) struct ReadConnection<'a, C: Connection = AnyConnection> {
    conn: Option<C>,
    opened: Instant,
    reads: &'a PgReads<C>,
    _permit: SemaphorePermit<'a>,
}

impl<C: Connection + 'static> PgReads<C> {
    /// At most `max` connections to the database of `url`, open or opening.
    pub(super) fn new(url: &str, idle_timeout: Duration, max: usize) -> PgReads<C> {
        PgReads {
            url: named(url).into(),
            idle_timeout,
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(max),
        }
    }

    /// Starts the sweep that closes the connections idle for the idle timeout, or idle and
    /// older than [`MAX_LIFETIME`], a few times per timeout. It ends with [`PgReads::close`],
    /// or once the store is gone.
    pub(super) fn spawn_sweep(self: &Arc<PgReads<C>>) {
        let every =
            (self.idle_timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
        let reads = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(reads) = reads.upgrade() else { return };
                if reads.permits.is_closed() {
                    return;
                }
                reads.sweep().await;
            }
        });
    }

    /// Closes the idle connections unused for the idle timeout or past their lifetime.
    async fn sweep(&self) {
        let stale: Vec<Idle<C>> = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            let (stale, kept) = std::mem::take(&mut *idle).into_iter().partition(|idle| {
                idle.since.elapsed() >= self.idle_timeout || idle.opened.elapsed() >= MAX_LIFETIME
            });
            *idle = kept;
            stale
        };
        for idle in stale {
            // Closing politely tells PostgreSQL; a failure means it is gone already.
            let _ = idle.conn.close().await;
        }
    }

    /// An idle connection, else a new one; fails once [`PgReads::close`] ran. Waiting for a
    /// connection, pinging idle ones and connecting take at most [`ACQUIRE_TIMEOUT`] in all, as
    /// in the pool: a ping or a connect to a database gone silent (a failover leaving half-open
    /// sockets) would otherwise wait for TCP to give up, minutes, holding its permit.
    pub(super) async fn acquire(&self) -> Result<ReadConnection<'_, C>> {
        match tokio::time::timeout(ACQUIRE_TIMEOUT, self.acquire_unbounded()).await {
            Ok(lent) => lent,
            // Dropping the attempt drops what it held: a connection popped or half open, and
            // the permit.
            Err(_) => Err(sqlx::Error::PoolTimedOut.into()),
        }
    }

    async fn acquire_unbounded(&self) -> Result<ReadConnection<'_, C>> {
        let Ok(permit) = self.permits.acquire().await else {
            return Err(sqlx::Error::PoolClosed.into());
        };
        // A connection that fails its ping is dropped, and the next idle one tried.
        while let Some(mut idle) = self.pop() {
            if idle.since.elapsed() < PING_WHEN_IDLE || idle.conn.ping().await.is_ok() {
                return Ok(self.lend(idle.conn, idle.opened, permit));
            }
        }
        let conn = C::connect(self.url.expose()).await?;
        Ok(self.lend(conn, Instant::now(), permit))
    }

    /// Closes the idle connections; reads under way close theirs when they end.
    pub(super) async fn close(&self) {
        self.permits.close();
        while let Some(idle) = self.pop() {
            // Closing politely tells PostgreSQL; a failure means it is gone already.
            let _ = idle.conn.close().await;
        }
    }

    fn pop(&self) -> Option<Idle<C>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop()
    }

    fn lend<'a>(
        &'a self,
        conn: C,
        opened: Instant,
        permit: SemaphorePermit<'a>,
    ) -> ReadConnection<'a, C> {
        ReadConnection {
            conn: Some(conn),
            opened,
            reads: self,
            _permit: permit,
        }
    }
}

impl Store {
    /// Runs `read`, statements outside any transaction, on a connection for reads: on
    /// PostgreSQL a read connection of this module's, else one of the pool's.
    pub(super) async fn reading<T>(
        &self,
        read: impl AsyncFnOnce(&mut AnyConnection) -> Result<T>,
    ) -> Result<T> {
        if let Some(reads) = &self.pg_reads {
            let mut conn = reads.acquire().await?;
            let result = read(&mut conn).await;
            return conn.done(result);
        }
        let mut conn = self.pool.acquire().await?;
        read(&mut conn).await
    }
}

impl PgReads<sqlx::PgConnection> {
    /// The rows of `sql` with `values` bound in order, each decoded by `decode` through
    /// [`PgFields`], on one of these connections.
    pub(super) async fn rows<T>(
        &self,
        sql: &str,
        values: &[impl AsRef<str>],
        mut decode: impl FnMut(&dyn Fields) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut conn = self.acquire().await?;
        let mut query = sqlx::query::<sqlx::Postgres>(sql);
        for value in values {
            query = query.bind(value.as_ref());
        }
        let result = match query.fetch_all(&mut *conn).await {
            Ok(rows) => rows.iter().map(|row| decode(&PgFields::new(row))).collect(),
            Err(error) => Err(error.into()),
        };
        conn.done(result)
    }
}

impl<C: Connection> ReadConnection<'_, C> {
    /// Ends the read that gave `result`, then returns it: the connection goes back for the next
    /// read if the read succeeded or failed in the terms of the store (a row not found). After
    /// a failure of the database it is closed: the connection may be what failed (PostgreSQL
    /// ending it answers the next statement with an error before closing it).
    pub(super) fn done<T>(mut self, result: Result<T>) -> Result<T> {
        let reusable = !matches!(result, Err(Error::Database(_)));
        if let Some(conn) = self.conn.take()
            && reusable
            && self.opened.elapsed() < MAX_LIFETIME
        {
            let mut idle = self.reads.idle.lock().unwrap_or_else(|e| e.into_inner());
            // Checked under the lock: `close` closes the permits before it empties the idle
            // list, so a connection put back after that is never left open.
            if !self.reads.permits.is_closed() {
                idle.push(Idle {
                    conn,
                    opened: self.opened,
                    since: Instant::now(),
                });
            }
        }
        result
    }
}

impl<C: Connection> Deref for ReadConnection<'_, C> {
    type Target = C;

    fn deref(&self) -> &C {
        self.conn.as_ref().expect("lent until done")
    }
}

impl<C: Connection> DerefMut for ReadConnection<'_, C> {
    fn deref_mut(&mut self) -> &mut C {
        self.conn.as_mut().expect("lent until done")
    }
}

#[cfg(test)]
mod tests {
    use super::{PgReads, named};
    use std::time::Duration;

    #[tokio::test]
    async fn row_reads_find_columns_by_name_on_a_real_database() {
        // The run's cluster when it has one (its admin database: nothing here makes a table),
        // else one of this test's own.
        let (_cluster, url) = tunnel_testkit::postgres::shared_or_own_cluster().unwrap();
        let reads: PgReads<sqlx::PgConnection> = PgReads::new(&url, Duration::from_secs(60), 1);
        let sql = "SELECT $1::text AS label, 7::bigint AS n, NULL::text AS other";
        // In the statement's order, out of it, and the same column twice; NULL as `None`.
        let read = reads
            .rows(sql, &["x"], |row| {
                Ok([
                    row.text("label")?,
                    row.integer("n")?.map(|n| n.to_string()),
                    row.text("other")?,
                    row.text("label")?,
                    row.integer("n")?.map(|n| n.to_string()),
                    row.integer("n")?.map(|n| n.to_string()),
                ])
            })
            .await
            .unwrap();
        let want = [Some("x"), Some("7"), None, Some("x"), Some("7"), Some("7")];
        assert_eq!(read, vec![want.map(|v| v.map(str::to_owned))]);
        // A column the statement does not have is an error naming it, not another column; a
        // column read as the wrong type is an error, not its bytes taken for the other type.
        let missing = reads
            .rows(sql, &["x"], |row| row.text("colour"))
            .await
            .unwrap_err()
            .to_string();
        assert!(missing.contains("colour"), "{missing}");
        let mistyped = reads.rows(sql, &["x"], |row| {
            row.text("label")?;
            row.text("n")
        });
        assert!(mistyped.await.is_err());
        // Every row, each decoded on its own.
        let many = reads
            .rows(
                "SELECT g::text AS v FROM generate_series(1, 3) g",
                &[] as &[&str],
                |row| row.required_text("v"),
            )
            .await
            .unwrap();
        assert_eq!(many, ["1", "2", "3"]);
        reads.close().await;
    }

    #[test]
    fn read_connections_print_without_the_password() {
        let reads: PgReads =
            PgReads::new("postgres://u:pw-51d0@db:5432/t", Duration::from_secs(60), 1);
        let shown = format!("{reads:?}");
        assert!(!shown.contains("pw-51d0"), "{shown}");
    }

    #[test]
    fn read_connections_name_themselves_unless_the_url_does() {
        assert_eq!(
            named("postgres://u:p%40ss@db:5432/t"),
            "postgres://u:p%40ss@db:5432/t?application_name=tunnel-server+reads"
        );
        assert_eq!(
            named("postgres://db/t?sslmode=disable"),
            "postgres://db/t?sslmode=disable&application_name=tunnel-server+reads"
        );
        let own = "postgres://db/t?application_name=mine";
        assert_eq!(named(own), own);
    }
}
