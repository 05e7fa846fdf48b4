//! Storage: ALL the SQL of the server lives under this module, and nothing outside it knows
//! which database is behind [`Store`].
//!
//! Two databases serve it (docs/database.md): embedded SQLite (WAL journal, foreign keys on) and a
//! PostgreSQL server. The statements are written once, in the SQL both understand (numbered `$n`
//! parameters, `ON CONFLICT`, `RETURNING`), and run through sqlx's `Any` driver; the few places
//! where the two differ are named by [`Dialect`]. Handlers only see `Store` methods taking and
//! returning plain Rust records. Each database has its own migrations, embedded in the binary
//! (`server/migrations/<database>/`) with the same version numbers, run at start by
//! [`Store::open`].
//!
//! The store also mints ids and timestamps, so every row's id sorts like its `created_at`.
//!
//! Files: this one opens the database, starts write transactions and keeps the secret helpers;
//! `database` says where the database is and which SQL it speaks (`DatabaseUrl`, `Dialect`);
//! `migrations` brings its schema up to date; `transfer` copies one database into another
//! (`tunnel-server migrate`); `error` is the store's one error type (nothing outside the store
//! sees the database's); `columns` declares the row types (`record!`), `records` holds what every resource table shares (paging, get, create,
//! update, delete, reference checks); then one module per API area, named like it (`credentials`,
//! `ssh_cas`, `tls_edges`, `backends`, `event_destinations`, `event_subscriptions`), `accounts`
//! for accounts, principals and API keys, `users` for the users and bots as the API lists them,
//! `events` for the audit log and `deliveries` for the webhook deliveries of its events,
//! `search` for the condition a searched list adds and `search_index` for SQLite's search
//! indexes and their indexer, `key_cache` and `row_cache` for what this process keeps of API
//! keys it authenticated and of rows it read,
//! `sessions` for the directory of live tunnel sessions and the cluster's nodes (the connections
//! themselves live in `agents::Registry`).

mod accounts;
mod api_keys;
mod backends;
mod columns;
mod credentials;
mod database;
mod deliveries;
mod direct;
mod direct_writes;
mod error;
mod event_destinations;
mod event_subscriptions;
mod events;
mod exec;
mod key_cache;
mod migrations;
mod pg_reads;
mod records;
mod row_cache;
mod search;
mod search_index;
mod sessions;
mod ssh_cas;
mod tls_edges;
mod transfer;
mod users;
mod writer;

pub use accounts::{ApiKeyOwner, DEFAULT_ACCOUNT_NAME, NewPrincipal, Principal};
pub use api_keys::{ApiKeyRow, NewApiKey};
pub use backends::BackendRow;
pub use credentials::{
    AuthtokenCredential, CredentialChanges, CredentialRow, NewCredential, Seeded,
};
pub use database::{DatabaseUrl, Dialect, ServingClaim, private_file};
pub use deliveries::{AttemptOutcome, BusyTargets, ClaimedDelivery, DeliveryRow};
pub use error::{DatabaseError, Error, ReferenceError, Result};
pub use event_destinations::{DestinationRow, SealedSecrets};
pub use event_subscriptions::{SourceEdit, SourceRefusal, SubscriptionChanges, SubscriptionRow};
pub(crate) use events::unix_ms;
pub use events::{Cause, EventFilter, EventRow, NewEvent};
pub use records::{Audit, Record, Scope, UsedBy};
pub use sessions::{EndedEvent, LocatedSession, Reaped, SessionRow};
pub use ssh_cas::SshCaRow;
pub use tls_edges::{NewModule, TlsEdgeRow};
pub use users::{Removal, RoleChange, UserRow};

use anyhow::Context as _;
use rand::RngCore as _;
use sha2::{Digest as _, Sha256};
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row as _};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tunnel_core::ids::{IdGenerator, IdKind, SECRET_BYTES, SecretToken};
pub(crate) use writer::WriteTx;

/// The keys of the PostgreSQL advisory locks the store takes: one for migrations (held by the
/// server migrating, so several servers starting at once migrate one after the other) and one
/// for write transactions (see [`Store::write_tx`]). Arbitrary constants, fixed forever.
pub(super) const MIGRATION_LOCK: i64 = 0x7475_6e6e_656c_0001;
pub(super) const WRITE_LOCK: i64 = 0x7475_6e6e_656c_0002;

/// How long a PostgreSQL connection may sit idle in the pool before it is pinged on its next
/// use (`Store::connect`).
const PING_WHEN_IDLE: Duration = Duration::from_secs(1);

/// How long a PostgreSQL connection stays open unused, the pool's and the read connections'
/// (`--database-idle-timeout`'s default; the pool library's own default).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// How long a PostgreSQL statement waits for a connection (its ping or its connecting
/// included), in the pool and for the read connections (`pg_reads.rs`) alike.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// `options` whose connections each run `sql`, if any, once connected.
fn with_statement(options: AnyPoolOptions, sql: Option<String>) -> AnyPoolOptions {
    let Some(sql) = sql else { return options };
    options.after_connect(move |conn, _| {
        let sql = sql.clone();
        Box::pin(async move {
            sqlx::Executor::execute(conn, sql.as_str()).await?;
            Ok(())
        })
    })
}

/// The value sealed with the server key that the database keeps (`server_key_check`).
const KEY_CHECK_SELECT: &str = "SELECT sealed FROM server_key_check WHERE id = 1";

/// Log targets of the database library that are too chatty at `info` (every statement):
/// `main` quiets them, without having to know which library the store uses.
pub const QUIET_LOG_TARGETS: &str = "sqlx=warn";

/// Parameters of one list page (parsed from the query by `crate::paging`).
#[derive(Debug, Clone)]
pub struct PageQuery {
    pub limit: u32,
    pub before_id: Option<String>,
    /// The search (`q`): only rows whose searched text holds it; `None` for every row.
    pub q: Option<String>,
    /// `order=oldest` (an extension): oldest first, `before_id` then naming the last row of the
    /// previous page in that order.
    pub oldest_first: bool,
}

impl PageQuery {
    /// The page's `ORDER BY` direction on `id`.
    pub fn direction(&self) -> &'static str {
        if self.oldest_first { "ASC" } else { "DESC" }
    }
}

/// The handle on the database, cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    dialect: Dialect,
    ids: Arc<Mutex<IdGenerator>>,
    /// This process's write transactions, committed in groups ([`Store::write_tx`]).
    writer: Arc<writer::Writer>,
    /// Woken by every commit that queued a webhook delivery ([`WriteTx::commit`]).
    deliveries_queued: Arc<Notify>,
    /// The API keys recently authenticated ([`Store::authenticate_api_key`]).
    keys: Arc<key_cache::KeyCache>,
    /// Rows of the resource tables read before, valid until this process commits again, kept
    /// while it is the one server: on a SQLite file always, on PostgreSQL while its node finds
    /// no other ([`Store::get`], [`Store::look_for_peers`]).
    rows: Arc<row_cache::RowCache>,
    /// On a SQLite file, reads of one row and of list pages without the pool's threads
    /// ([`Store::get`], [`Store::list`]).
    direct: Option<Arc<direct::DirectConnections>>,
    /// On a SQLite file, the shared record machinery's writes on the request's thread
    /// ([`Store::write`]).
    direct_writes: Option<Arc<direct_writes::DirectWrites>>,
    /// On SQLite (opened to write), the search indexes' indexer (`search_index.rs`).
    search: Option<Arc<search_index::Indexer>>,
    /// On PostgreSQL, the API's other reads on connections outside the pool
    /// ([`Store::reading`]): those not of `pg_rows`.
    pg_reads: Option<Arc<pg_reads::PgReads>>,
    /// On PostgreSQL, the reads of one row and of list pages ([`Store::get`], [`Store::list`])
    /// and the audit log's, on connections of sqlx's own PostgreSQL driver.
    pg_rows: Option<Arc<pg_reads::PgReads<sqlx::PgConnection>>>,
}

impl Store {
    /// Opens (creating if needed) the database and runs pending migrations.
    pub async fn open(url: &DatabaseUrl) -> anyhow::Result<Store> {
        Store::open_with(url, DEFAULT_IDLE_TIMEOUT).await
    }

    /// [`Store::open`], closing a PostgreSQL connection once idle for `idle_timeout`
    /// (`--database-idle-timeout`).
    pub async fn open_with(url: &DatabaseUrl, idle_timeout: Duration) -> anyhow::Result<Store> {
        let store = Store::connect(url, false, idle_timeout).await?;
        // A newer build migrated it: its schema is one this build does not know.
        if let Some(found) = store.schema_version_if_any().await?
            && found > store.latest_version()
        {
            anyhow::bail!(
                "the database {} is at schema version {found}, newer than this build's {}: a \
                 newer tunnel-server has migrated it; run that version (going back needs the \
                 backup made before the upgrade, docs/database.md)",
                url.redacted(),
                store.latest_version()
            );
        }
        store.migrate().await.context("database migration failed")?;
        store
            .start_search()
            .await
            .context("cannot open the search index")?;
        Ok(store)
    }

    /// Opens an existing database to read it (what `migrate` moves from): nothing is created
    /// or migrated, a SQLite file is opened read-only, and the schema must be this build's.
    pub async fn open_existing(url: &DatabaseUrl) -> anyhow::Result<Store> {
        if let DatabaseUrl::SqliteFile(path) = url {
            anyhow::ensure!(
                path.is_file(),
                "the database {} does not exist",
                path.display()
            );
        }
        let store = Store::connect(url, true, DEFAULT_IDLE_TIMEOUT).await?;
        let (found, wanted) = (store.schema_version_if_any().await?, store.latest_version());
        let shown = url.redacted();
        match found {
            Some(found) if found == wanted => Ok(store),
            None | Some(0) => anyhow::bail!("the database {shown} holds no installation"),
            Some(found) if found < wanted => anyhow::bail!(
                "the database {shown} is at schema version {found}, this build's is {wanted}: \
                 start this version's server on it once (it migrates at start), then move it"
            ),
            Some(found) => anyhow::bail!(
                "the database {shown} is at schema version {found}, newer than this build's \
                 {wanted}: move it with the tunnel-server that migrated it"
            ),
        }
    }

    /// The pool on `url` (a SQLite file read-only when `read_only`).
    async fn connect(
        url: &DatabaseUrl,
        read_only: bool,
        idle_timeout: Duration,
    ) -> anyhow::Result<Store> {
        sqlx::any::install_default_drivers();
        if let DatabaseUrl::SqliteFile(_) = url
            && !read_only
        {
            url.create_data_dir()?;
        }
        // Every connection of a SQLite database opened to write reads the search index
        // (`search_index.rs`), in memory for an in-memory database. The indexer of a file
        // creates the search file first.
        let search = match url {
            DatabaseUrl::SqliteMemory => Some(None),
            DatabaseUrl::SqliteFile(path) if !read_only => Some(Some(path.clone())),
            _ => None,
        }
        .map(search_index::Indexer::new)
        .transpose()
        // The indexer's connection is the first to open the database file itself, so what
        // fails here is most often the database (not a SQLite file, not writable), not the
        // search file beside it.
        .with_context(|| {
            format!(
                "cannot open the database {} or its search index",
                url.redacted()
            )
        })?
        .map(Arc::new);
        let attach = search.as_ref().map(|search| search.attach());
        let pool = match url {
            DatabaseUrl::SqliteMemory => {
                // One connection that never expires: each in-memory connection is its own
                // database, and closing it would drop the data.
                with_statement(AnyPoolOptions::new(), attach)
                    .max_connections(1)
                    .min_connections(1)
                    .idle_timeout(None)
                    .max_lifetime(None)
                    .connect("sqlite::memory:")
                    .await?
            }
            DatabaseUrl::SqliteFile(path) => {
                // sqlx's SQLite connections have foreign keys on and a 5 s busy timeout by
                // default; `mode=rwc` creates the file. The WAL journal is a property of the
                // file, set once below. The driver percent-decodes the path: encode it.
                let encoded = database::uri_path(path);
                let mode = if read_only { "ro" } else { "rwc" };
                let options = with_statement(AnyPoolOptions::new(), attach);
                // No ping before each acquire (sqlx's default): a SQLite connection is a file
                // in this process and cannot have gone away, and the ping was a round trip to
                // the connection's thread on every request (`cargo xtask bench`). For the same
                // reason connections live as long as the server: sqlx's default closes each
                // after 30 minutes (10 idle), and a new one is a new thread with empty page and
                // statement caches to fill again. Under the soak every 30 minutes all eight were
                // replaced at once and the server's memory stepped up (BENCHMARKS.md).
                options
                    .max_connections(8)
                    .test_before_acquire(false)
                    .idle_timeout(None)
                    .max_lifetime(None)
                    .connect(&format!("sqlite://{encoded}?mode={mode}"))
                    .await
                    .with_context(|| format!("cannot open the database {}", path.display()))?
            }
            // A connection idle for a moment is pinged before use, as sqlx does by default
            // for every acquire; one in steady use is not. The default's ping was a round trip
            // to PostgreSQL before every statement's own (`cargo xtask bench`). A connection
            // the server lost within the last second then fails the request that finds it
            // (and is dropped), as one lost mid-request always did.
            DatabaseUrl::Postgres(database) => match AnyPoolOptions::new()
                .max_connections(16)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .idle_timeout(idle_timeout)
                .test_before_acquire(false)
                .before_acquire(|conn, meta| {
                    Box::pin(async move {
                        if meta.idle_for >= PING_WHEN_IDLE {
                            sqlx::Connection::ping(conn).await?;
                        }
                        Ok(true)
                    })
                })
                .connect(&pg_reads::named_as(
                    database,
                    pg_reads::POOL_APPLICATION_NAME,
                ))
                .await
            {
                Ok(pool) => pool,
                Err(e) => {
                    // The pool says only that it timed out; one connection of our own says why
                    // (refused, no such host, a wrong password).
                    let why = match e {
                        sqlx::Error::PoolTimedOut => {
                            match <sqlx::AnyConnection as sqlx::Connection>::connect(database).await
                            {
                                Err(cause) => cause.to_string(),
                                Ok(_) => e.to_string(),
                            }
                        }
                        e => e.to_string(),
                    };
                    anyhow::bail!("cannot connect to the database {}: {why}", url.redacted());
                }
            },
        };
        if let DatabaseUrl::SqliteFile(_) = url
            && !read_only
        {
            sqlx::raw_sql("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await?;
        }
        let direct = match url {
            DatabaseUrl::SqliteFile(path) => {
                Some(Arc::new(direct::DirectConnections::new(path.clone())))
            }
            _ => None,
        };
        let (pg_reads, pg_rows) = match url {
            DatabaseUrl::Postgres(database) => {
                let other = pg_reads::OTHER_CONNECTIONS;
                let reads = Arc::new(pg_reads::PgReads::new(database, idle_timeout, other));
                let row = pg_reads::ROW_CONNECTIONS;
                let rows = Arc::new(pg_reads::PgReads::new(database, idle_timeout, row));
                reads.spawn_sweep();
                rows.spawn_sweep();
                (Some(reads), Some(rows))
            }
            _ => (None, None),
        };
        let writer: Arc<writer::Writer> = Arc::default();
        let deliveries_queued = Arc::new(Notify::new());
        Ok(Store {
            pool,
            dialect: url.dialect(),
            ids: Arc::new(Mutex::new(IdGenerator::default())),
            keys: Arc::default(),
            rows: Arc::new(row_cache::RowCache::new(url.dialect() == Dialect::Sqlite)),
            direct_writes: direct.clone().map(|direct| {
                Arc::new(direct_writes::DirectWrites::new(
                    direct,
                    writer.clone(),
                    deliveries_queued.clone(),
                ))
            }),
            direct,
            writer,
            deliveries_queued,
            search,
            pg_reads,
            pg_rows,
        })
    }

    /// The value sealed with the server key that the database keeps, if it has met one yet.
    pub async fn stored_key_check(&self) -> Result<Option<Vec<u8>>> {
        Ok(sqlx::query_scalar(KEY_CHECK_SELECT)
            .fetch_optional(&self.pool)
            .await?)
    }

    /// One value sealed with the server key before the key check existed (an SSH CA's private
    /// key or a destination's signing secret) and the id it is bound to, if the database holds
    /// any: what the key must open before the database adopts its check.
    pub async fn sealed_sample(&self) -> Result<Option<(String, Vec<u8>)>> {
        for sql in [
            "SELECT id, private_key_sealed AS sealed FROM ssh_certificate_authorities ORDER BY id LIMIT 1",
            "SELECT id, secret_sealed AS sealed FROM event_destinations WHERE secret_sealed IS NOT NULL ORDER BY id LIMIT 1",
        ] {
            if let Some(row) = sqlx::query(sql).fetch_optional(&self.pool).await? {
                return Ok(Some((row.try_get("id")?, row.try_get("sealed")?)));
            }
        }
        Ok(None)
    }

    /// The value sealed with the server key that the database keeps to recognise it: the one
    /// already stored, or `sealed` stored now when there is none (the first start wins when
    /// several start at once).
    pub async fn server_key_check(&self, sealed: &[u8]) -> Result<Vec<u8>> {
        let mut tx = self.write_tx().await?;
        sqlx::query(
            "INSERT INTO server_key_check (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
        )
        .bind(sealed)
        .execute(&mut *tx)
        .await?;
        let stored: Vec<u8> = sqlx::query_scalar(KEY_CHECK_SELECT)
            .fetch_one(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(stored)
    }

    /// A write transaction. Writes are serialised, on both databases, so a transaction that
    /// reads and then writes (a reference check, a read-modify-write) sees no other write
    /// between the two:
    /// - SQLite: `BEGIN IMMEDIATE` takes the write lock up front, so two such transactions wait
    ///   for each other (busy timeout) instead of one failing with "database is locked" when it
    ///   upgrades its read lock.
    /// - PostgreSQL: a transaction-scoped advisory lock taken first. Statements of a READ
    ///   COMMITTED transaction each see what was committed before them, so once the lock is
    ///   held the transaction reads the latest writes, as on SQLite. Readers never wait.
    ///
    /// The writes queued meanwhile commit together (`writer.rs`): one commit for many.
    async fn write_tx(&self) -> Result<WriteTx> {
        self.write_tx_undone(writer::Undo::Savepoint).await
    }

    /// [`Store::write_tx`], undone as `undo` says when it ends uncommitted.
    async fn write_tx_undone(&self, undo: writer::Undo) -> Result<WriteTx> {
        let wake = &self.deliveries_queued;
        (self.writer.begin(&self.pool, self.dialect, wake, undo)).await
    }

    /// Runs `work`, a write of `R`'s table, in a write transaction and commits it: `work`'s
    /// statements all go through [`WriteTx::exec`] (the shared record machinery, `records.rs`,
    /// and the audit log), never its sqlx connection, and wait for nothing else. On a SQLite file
    /// it runs on the request's thread, in a group of direct writes (`direct_writes.rs`), unless
    /// `R`'s rows need another table's ([`Record::COMPLETES`]), which only a sqlx connection
    /// reads; elsewhere in a pooled write transaction ([`Store::write_tx_undone`]). Returns
    /// `work`'s value once committed. `work` refuses (returns an error) before it changes
    /// anything: neither a direct write nor a pooled one of a table that needs no other's has a
    /// savepoint of its own (on PostgreSQL that saves a round trip a write, inside the write
    /// turn), so one that fails after a change fails its group (`writer.rs`, `Undo::Group`).
    async fn write<R: Record, T>(
        &self,
        work: impl AsyncFnOnce(&mut WriteTx) -> Result<T>,
    ) -> Result<T> {
        let direct = self
            .direct_writes
            .as_ref()
            .filter(|direct| !R::COMPLETES && direct.is_open());
        if let Some(direct) = direct {
            return direct.write(work).await;
        }
        // `complete` reads through the sqlx connection, which `Exec::Marked` does not see.
        let undo = if R::COMPLETES {
            writer::Undo::Savepoint
        } else {
            writer::Undo::Group
        };
        let mut tx = self.write_tx_undone(undo).await?;
        let value = work(&mut tx).await?;
        tx.commit().await?;
        Ok(value)
    }

    /// Write transactions committed by this process since it started, and the writes they held
    /// (writes queued together commit together: `writer.rs`).
    pub fn commits(&self) -> (u64, u64) {
        self.writer.committed()
    }

    /// Whether this process keeps the rows it reads now (it is the one server: `row_cache.rs`),
    /// and how many it keeps.
    pub fn row_cache(&self) -> (bool, usize) {
        self.rows.state()
    }

    /// Notified after each commit that queued a webhook delivery: what the delivery workers
    /// wait on between due times.
    pub fn deliveries_queued(&self) -> Arc<Notify> {
        self.deliveries_queued.clone()
    }

    /// Wakes this process's delivery worker: deliveries it did not queue may be due (another
    /// node left and freed the ones it held).
    pub fn wake_deliveries(&self) {
        self.deliveries_queued.notify_one();
    }

    /// After a bulk load of `tables` (constants of the store, never input), on PostgreSQL:
    /// `VACUUM ANALYZE` them, as PostgreSQL advises after loading data, rather than leaving it to
    /// autovacuum's next round. Until then the planner knows nothing of the rows just written
    /// and guesses wrong (a search of 100 k credentials loaded a moment before walked the
    /// account's rows: 127 ms), and the trigram indexes hold the new rows in their pending list,
    /// which every search reads through (up to the index's limit, 256 kB since migration 9 and
    /// 4 MB during a load: with 4 MB, a search answered in 0.2 ms once the list was merged took
    /// 4 ms, and 56 ms in the bench). SQLite keeps no statistics unless asked, and its plans
    /// here do not depend on them (`search.rs`), but its search indexer works behind the writes:
    /// this waits until it has indexed the load (`search_index.rs`). Outside a transaction:
    /// `VACUUM` cannot run in one.
    pub(crate) async fn refresh_statistics(&self, tables: &[&str]) -> Result<()> {
        self.settle_search().await?;
        if self.dialect == Dialect::Postgres {
            for table in tables {
                sqlx::query(&format!("VACUUM ANALYZE {table}"))
                    .execute(&self.pool)
                    .await?;
            }
        }
        Ok(())
    }

    /// Stops the search indexer, closes the direct reads' and writes' connections and
    /// PostgreSQL's read connections, then the pool (which flushes the WAL); used before a
    /// restart in tests and at shutdown.
    pub async fn close(&self) {
        if let Some(search) = &self.search {
            search.stop().await;
        }
        if let Some(direct) = &self.direct {
            direct.close();
        }
        if let Some(direct) = &self.direct_writes {
            direct.close();
        }
        if let Some(reads) = &self.pg_reads {
            reads.close().await;
        }
        if let Some(reads) = &self.pg_rows {
            reads.close().await;
        }
        self.pool.close().await;
    }

    /// A new id of `kind` and its creation time: the id encodes the same instant.
    pub fn mint(&self, kind: IdKind) -> (String, String) {
        let now = time::OffsetDateTime::now_utc();
        let millis = u64::try_from(now.unix_timestamp_nanos() / 1_000_000).unwrap_or_default();
        let mut random = [0u8; 14];
        rand::rngs::OsRng.fill_bytes(&mut random);
        let id = self
            .ids
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .next(kind, millis, random);
        (id, rfc3339(now))
    }
}

/// Takes the database's write lock in the transaction just begun on `conn` with
/// [`Dialect::begin_write`]: on SQLite that statement took it; on PostgreSQL it is the
/// transaction-scoped advisory lock every write transaction takes, waiting at most 5 s when
/// `bounded` (as SQLite's busy timeout does).
pub(super) async fn lock_writes(
    dialect: Dialect,
    conn: &mut sqlx::AnyConnection,
    bounded: bool,
) -> Result<()> {
    use sqlx::Executor as _;
    if let Some(sql) = lock_writes_sql(dialect, bounded) {
        conn.execute(sql.as_str()).await?;
    }
    Ok(())
}

/// The statements of [`lock_writes`], `None` on SQLite: one text, sent in one round trip (a
/// simple query, so the lock's key is written out: a constant).
pub(super) fn lock_writes_sql(dialect: Dialect, bounded: bool) -> Option<String> {
    let timeout = if bounded {
        "SET LOCAL lock_timeout = '5s'; "
    } else {
        ""
    };
    (dialect == Dialect::Postgres)
        .then(|| format!("{timeout}SELECT pg_advisory_xact_lock({WRITE_LOCK})"))
}

/// RFC 3339 in UTC with `Z`, to the second (docs/ids.md).
pub fn rfc3339(t: time::OffsetDateTime) -> String {
    let t = t.replace_nanosecond(0).unwrap_or(t);
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

pub fn now_rfc3339() -> String {
    rfc3339(time::OffsetDateTime::now_utc())
}

/// A fresh secret token (authtoken or API key) for the record `id`.
pub(crate) fn new_token(id: &str) -> SecretToken {
    let mut random = [0u8; SECRET_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut random);
    SecretToken::new(tunnel_core::ids::suffix(id), random)
}

/// What is stored of a secret: its SHA-256 (the secrets are 256-bit random, no KDF needed).
pub(crate) fn hash_secret(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// The columns of a record with a secret (a credential, an API key) that are not fields of its
/// row: what is stored of the secret.
pub(crate) fn token_columns(token: &str) -> Vec<(&'static str, columns::Value)> {
    vec![
        ("lookup", columns::Value::Text(lookup_of(token))),
        ("secret_hash", columns::Value::Blob(hash_secret(token))),
    ]
}

/// The lookup part of a presented secret: the record's id suffix for our own format; for a
/// bootstrap key of another shape, a digest of it (so such keys still work, docs/accounts.md).
pub(crate) fn lookup_of(token: &str) -> String {
    match SecretToken::parse(token) {
        Some(t) => t.lookup,
        None => tunnel_core::ids::base62_fixed(
            &Sha256::digest(token.as_bytes())[..20],
            tunnel_core::ids::SUFFIX_LEN,
        ),
    }
}

/// The row `sql` (one parameter, `$1`: the lookup of the presented secret) finds in `conn` for
/// a presented secret, if its `secret_hash` column matches the secret: the hashes are compared
/// in constant time.
async fn find_secret(
    conn: &mut sqlx::AnyConnection,
    sql: &str,
    presented: &str,
) -> Result<Option<AnyRow>> {
    use subtle::ConstantTimeEq as _;
    let found = sqlx::query(sql)
        .bind(lookup_of(presented))
        .fetch_optional(conn)
        .await?;
    let Some(row) = found else { return Ok(None) };
    let stored: Vec<u8> = row.try_get("secret_hash")?;
    let matches: bool = stored.ct_eq(&hash_secret(presented)).into();
    Ok(matches.then_some(row))
}
