//! The store's reads outside a transaction on PostgreSQL (a row by id, a page of a list, a
//! search, the audit log, the users, the sessions' directory, a destination's deliveries and
//! secrets, the account's name, an API key or authtoken presented), on connections kept here
//! rather than in sqlx's pool (docs/database.md, connections): [`Store::reading`] picks where a
//! read runs.
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

use super::{ACQUIRE_TIMEOUT, Error, PING_WHEN_IDLE, Result, Store};
use crate::secret::Secret;
use sqlx::{AnyConnection, Connection as _};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, SemaphorePermit};

/// Connections at most, beside the pool's 16 (`Store::connect`): a read holds one for a
/// statement or two, and more than this many at once only queue in PostgreSQL.
const MAX_CONNECTIONS: usize = 8;

/// A connection older than this is closed when its read ends, as sqlx's pool does by default:
/// PostgreSQL's process behind a connection keeps caches that only grow.
const MAX_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// What a read connection calls itself in PostgreSQL (`pg_stat_activity.application_name`).
pub(super) const APPLICATION_NAME: &str = "tunnel-server reads";

/// `url` with [`APPLICATION_NAME`], unless it names an application of its own.
fn named(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed)
            if !parsed
                .query_pairs()
                .any(|(key, _)| key == "application_name") =>
        {
            parsed
                .query_pairs_mut()
                .append_pair("application_name", APPLICATION_NAME);
            parsed.into()
        }
        _ => url.to_owned(),
    }
}

/// The read connections of one PostgreSQL database.
#[derive(Debug)]
pub(super) struct PgReads {
    /// The connection URL: it may hold the database's password, so its `Debug` hides it.
    url: Secret,
    /// An idle connection unused for this long is closed ([`PgReads::spawn_sweep`]).
    idle_timeout: Duration,
    /// Idle connections, the last used on top: a quiet server keeps using the same few.
    idle: Mutex<Vec<Idle>>,
    /// One permit per connection open or opening; closed by [`PgReads::close`].
    permits: Semaphore,
}

#[derive(Debug)]
struct Idle {
    conn: AnyConnection,
    opened: Instant,
    since: Instant,
}

/// A connection lent to one read; deref to it to run statements.
#[derive(Debug)]
pub(super) struct ReadConnection<'a> {
    conn: Option<AnyConnection>,
    opened: Instant,
    reads: &'a PgReads,
    _permit: SemaphorePermit<'a>,
}

impl PgReads {
    pub(super) fn new(url: &str, idle_timeout: Duration) -> PgReads {
        PgReads {
            url: named(url).into(),
            idle_timeout,
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(MAX_CONNECTIONS),
        }
    }

    /// Starts the sweep that closes the connections idle for the idle timeout, or idle and
    /// older than [`MAX_LIFETIME`], a few times per timeout. It ends with [`PgReads::close`],
    /// or once the store is gone.
    pub(super) fn spawn_sweep(self: &Arc<PgReads>) {
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
        let stale: Vec<Idle> = {
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
    pub(super) async fn acquire(&self) -> Result<ReadConnection<'_>> {
        match tokio::time::timeout(ACQUIRE_TIMEOUT, self.acquire_unbounded()).await {
            Ok(lent) => lent,
            // Dropping the attempt drops what it held: a connection popped or half open, and
            // the permit.
            Err(_) => Err(sqlx::Error::PoolTimedOut.into()),
        }
    }

    async fn acquire_unbounded(&self) -> Result<ReadConnection<'_>> {
        let Ok(permit) = self.permits.acquire().await else {
            return Err(sqlx::Error::PoolClosed.into());
        };
        // A connection that fails its ping is dropped, and the next idle one tried.
        while let Some(mut idle) = self.pop() {
            if idle.since.elapsed() < PING_WHEN_IDLE || idle.conn.ping().await.is_ok() {
                return Ok(self.lend(idle.conn, idle.opened, permit));
            }
        }
        let conn = AnyConnection::connect(self.url.expose()).await?;
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

    fn pop(&self) -> Option<Idle> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop()
    }

    fn lend<'a>(
        &'a self,
        conn: AnyConnection,
        opened: Instant,
        permit: SemaphorePermit<'a>,
    ) -> ReadConnection<'a> {
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

impl ReadConnection<'_> {
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

impl Deref for ReadConnection<'_> {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        self.conn.as_ref().expect("lent until done")
    }
}

impl DerefMut for ReadConnection<'_> {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        self.conn.as_mut().expect("lent until done")
    }
}

#[cfg(test)]
mod tests {
    use super::{PgReads, named};
    use std::time::Duration;

    #[test]
    fn read_connections_print_without_the_password() {
        let reads = PgReads::new("postgres://u:pw-51d0@db:5432/t", Duration::from_secs(60));
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
