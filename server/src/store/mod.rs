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
//! Files: this one opens the database, runs migrations and keeps the secret helpers; `error` is the
//! store's one error type (nothing outside the store sees the database's); `columns` declares the
//! row types (`record!`), `records` holds what every resource table shares (paging, get, create,
//! update, delete, reference checks); then one module per API area, named like it (`credentials`,
//! `ssh_cas`, `tls_edges`, `backends`, `event_destinations`, `event_subscriptions`), `accounts`
//! for accounts, principals and API keys, `events` for the audit log and `deliveries` for the
//! webhook deliveries of its events. Tunnel sessions are not stored: they live in
//! `agents::Registry`.

mod accounts;
mod backends;
mod columns;
mod credentials;
mod deliveries;
mod error;
mod event_destinations;
mod event_subscriptions;
mod events;
mod records;
mod ssh_cas;
mod tls_edges;
mod transfer;

pub use accounts::{ApiKeyOwner, DEFAULT_ACCOUNT_NAME, NewPrincipal};
pub use backends::BackendRow;
pub use credentials::{
    AuthtokenCredential, CredentialChanges, CredentialRow, NewCredential, Seeded,
};
pub use deliveries::{AttemptOutcome, ClaimedDelivery, DeliveryRow};
pub use error::{DatabaseError, Error, ReferenceError, Result};
pub use event_destinations::{DestinationRow, SealedSecrets};
pub use event_subscriptions::{SourceEdit, SourceRefusal, SubscriptionChanges, SubscriptionRow};
pub(crate) use events::unix_ms;
pub use events::{Cause, EventFilter, EventRow, NewEvent};
pub use records::{Audit, Record, UsedBy};
pub use ssh_cas::SshCaRow;
pub use tls_edges::{NewModule, TlsEdgeRow};

use anyhow::Context as _;
use rand::RngCore as _;
use sha2::{Digest as _, Sha256};
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row as _};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tunnel_core::ids::{IdGenerator, IdKind, SECRET_BYTES, SecretToken};

/// Migrations of each database, in order, with the same version numbers (version `n` brings
/// both to the same schema). A migration is never edited once released: add a new one to both.
const SQLITE_MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../migrations/sqlite/0001_initial.sql")),
    (2, include_str!("../../migrations/sqlite/0002_events.sql")),
    (
        3,
        include_str!("../../migrations/sqlite/0003_server_key_check.sql"),
    ),
];
const POSTGRES_MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        include_str!("../../migrations/postgres/0001_initial.sql"),
    ),
    (2, include_str!("../../migrations/postgres/0002_events.sql")),
    (
        3,
        include_str!("../../migrations/postgres/0003_server_key_check.sql"),
    ),
];

/// The keys of the PostgreSQL advisory locks the store takes: one for migrations (held by the
/// server migrating, so several servers starting at once migrate one after the other) and one
/// for write transactions (see [`Store::write_tx`]). Arbitrary constants, fixed forever.
const MIGRATION_LOCK: i64 = 0x7475_6e6e_656c_0001;
const WRITE_LOCK: i64 = 0x7475_6e6e_656c_0002;

/// Log targets of the database library that are too chatty at `info` (every statement):
/// `main` quiets them, without having to know which library the store uses.
pub const QUIET_LOG_TARGETS: &str = "sqlx=warn";

/// Parameters of one list page (parsed from the query by `crate::paging`).
#[derive(Debug, Clone)]
pub struct PageQuery {
    pub limit: u32,
    pub before_id: Option<String>,
}

/// Where the database lives, as given by `--database`.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// A private in-memory SQLite database (tests).
    SqliteMemory,
    /// A SQLite file.
    SqliteFile(PathBuf),
    /// A PostgreSQL database: its `postgres://` URL, which may hold a password.
    Postgres(String),
}

/// Never prints a password: a PostgreSQL URL shows as `postgres://user:***@host:port/db`.
impl std::fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// Which SQL a database speaks where the two differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// A table of the elements of the JSON array (of strings) in `column`, as a column `value`.
    fn json_array_elements(self, column: &str) -> String {
        match self {
            Dialect::Sqlite => format!("json_each({column})"),
            Dialect::Postgres => {
                format!("jsonb_array_elements_text({column}::jsonb) AS elements(value)")
            }
        }
    }
}

impl DatabaseUrl {
    pub fn parse(url: &str) -> anyhow::Result<DatabaseUrl> {
        if url == "sqlite::memory:" || url == "sqlite://:memory:" {
            return Ok(DatabaseUrl::SqliteMemory);
        }
        if let Some(path) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            let path = path.split('?').next().unwrap_or_default();
            anyhow::ensure!(!path.is_empty(), "the database URL `{url}` names no file");
            return Ok(DatabaseUrl::SqliteFile(PathBuf::from(path)));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let parsed = url::Url::parse(url).map_err(|e| {
                anyhow::anyhow!("the database URL `{}` is not a URL: {e}", redact(url))
            })?;
            anyhow::ensure!(
                parsed.host_str().is_some_and(|h| !h.is_empty()),
                "the database URL `{}` names no host",
                redact(url)
            );
            return Ok(DatabaseUrl::Postgres(url.to_owned()));
        }
        anyhow::bail!(
            "`{}` is not a database URL; use sqlite://data/tunnel.db, sqlite::memory: or \
             postgres://user:password@host:port/database",
            redact(url)
        )
    }

    /// The URL as it may be shown: a password is replaced by `***`.
    pub fn redacted(&self) -> String {
        match self {
            DatabaseUrl::SqliteMemory => "sqlite::memory:".into(),
            DatabaseUrl::SqliteFile(path) => format!("sqlite://{}", path.display()),
            DatabaseUrl::Postgres(url) => redact(url),
        }
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            DatabaseUrl::Postgres(_) => Dialect::Postgres,
            _ => Dialect::Sqlite,
        }
    }

    /// The directory holding the database file (and the server key), if any.
    pub fn data_dir(&self) -> Option<PathBuf> {
        match self {
            DatabaseUrl::SqliteMemory | DatabaseUrl::Postgres(_) => None,
            DatabaseUrl::SqliteFile(path) => Some(
                path.parent()
                    .map(PathBuf::from)
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or_else(|| ".".into()),
            ),
        }
    }
}

/// `url` with its password, if any, replaced by `***` (for errors and logs).
fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(_) => url.to_owned(),
        // Not a URL: show only its scheme, it may be a password typed in the wrong place.
        Err(_) => format!("{}…", url.split(':').next().unwrap_or_default()),
    }
}

/// The handle on the database, cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    dialect: Dialect,
    ids: Arc<Mutex<IdGenerator>>,
    /// Woken by every commit that queued a webhook delivery ([`WriteTx::commit`]).
    deliveries_queued: Arc<Notify>,
}

/// A write transaction: the changes, their events and their deliveries commit together
/// (`store::events`). Dereferences to the connection, so statements run in it.
#[derive(Debug)]
pub(crate) struct WriteTx {
    inner: sqlx::Transaction<'static, sqlx::Any>,
    /// Whether a delivery was queued: the commit then wakes the delivery workers.
    queued: bool,
    wake: Arc<Notify>,
}

impl WriteTx {
    /// Commits, then wakes the delivery workers if a delivery was queued (after, so they find
    /// it).
    pub(crate) async fn commit(self) -> Result<()> {
        self.inner.commit().await?;
        if self.queued {
            self.wake.notify_one();
        }
        Ok(())
    }
}

impl std::ops::Deref for WriteTx {
    type Target = sqlx::AnyConnection;
    fn deref(&self) -> &sqlx::AnyConnection {
        &self.inner
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut sqlx::AnyConnection {
        &mut self.inner
    }
}

impl Store {
    /// Opens (creating if needed) the database and runs pending migrations.
    pub async fn open(url: &DatabaseUrl) -> anyhow::Result<Store> {
        sqlx::any::install_default_drivers();
        let pool = match url {
            DatabaseUrl::SqliteMemory => {
                // One connection that never expires: each in-memory connection is its own
                // database, and closing it would drop the data.
                AnyPoolOptions::new()
                    .max_connections(1)
                    .min_connections(1)
                    .idle_timeout(None)
                    .max_lifetime(None)
                    .connect("sqlite::memory:")
                    .await?
            }
            DatabaseUrl::SqliteFile(path) => {
                if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).with_context(|| {
                        format!("cannot create the data directory {}", dir.display())
                    })?;
                }
                // sqlx's SQLite connections have foreign keys on and a 5 s busy timeout by
                // default; `mode=rwc` creates the file. The WAL journal is a property of the
                // file, set once below.
                let options = format!("sqlite://{}?mode=rwc", path.display());
                AnyPoolOptions::new()
                    .max_connections(8)
                    .connect(&options)
                    .await
                    .with_context(|| format!("cannot open the database {}", path.display()))?
            }
            DatabaseUrl::Postgres(database) => AnyPoolOptions::new()
                .max_connections(16)
                .acquire_timeout(Duration::from_secs(10))
                .connect(database)
                .await
                .map_err(|e| {
                    anyhow::anyhow!("cannot connect to the database {}: {e}", url.redacted())
                })?,
        };
        if let DatabaseUrl::SqliteFile(_) = url {
            sqlx::raw_sql("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await?;
        }
        let store = Store {
            pool,
            dialect: url.dialect(),
            ids: Arc::new(Mutex::new(IdGenerator::default())),
            deliveries_queued: Arc::new(Notify::new()),
        };
        store.migrate().await.context("database migration failed")?;
        Ok(store)
    }

    /// Which SQL the database speaks.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Applies the migrations the database lacks, each in its own transaction with its
    /// version row. On PostgreSQL the whole run holds an advisory lock on one connection, so
    /// servers started together migrate one after the other and the later ones find nothing
    /// left to do; SQLite's write lock (`BEGIN IMMEDIATE`) does the same per migration.
    async fn migrate(&self) -> Result<()> {
        let mut conn = self.pool.acquire().await?;
        let migrations = match self.dialect {
            Dialect::Sqlite => SQLITE_MIGRATIONS,
            Dialect::Postgres => {
                sqlx::query("SELECT pg_advisory_lock($1)")
                    .bind(MIGRATION_LOCK)
                    .execute(&mut *conn)
                    .await?;
                POSTGRES_MIGRATIONS
            }
        };
        let applied = self.apply_migrations(&mut conn, migrations).await;
        if self.dialect == Dialect::Postgres {
            sqlx::query("SELECT pg_advisory_unlock($1)")
                .bind(MIGRATION_LOCK)
                .execute(&mut *conn)
                .await?;
        }
        applied
    }

    async fn apply_migrations(
        &self,
        conn: &mut sqlx::AnyConnection,
        migrations: &[(i64, &str)],
    ) -> Result<()> {
        sqlx::raw_sql(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at TEXT NOT NULL)",
        )
        .execute(&mut *conn)
        .await?;
        for (version, sql) in migrations {
            let mut tx = self.begin_write(conn).await?;
            let done: Option<i64> =
                sqlx::query_scalar("SELECT version FROM schema_migrations WHERE version = $1")
                    .bind(version)
                    .fetch_optional(&mut *tx)
                    .await?;
            if done.is_none() {
                sqlx::raw_sql(sql).execute(&mut *tx).await?;
                sqlx::query("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)")
                    .bind(version)
                    .bind(now_rfc3339())
                    .execute(&mut *tx)
                    .await?;
                tracing::info!(version, "applied database migration");
            }
            tx.commit().await?;
        }
        Ok(())
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
        let stored: Vec<u8> =
            sqlx::query_scalar("SELECT sealed FROM server_key_check WHERE id = 1")
                .fetch_one(&mut *tx)
                .await?;
        tx.commit().await?;
        Ok(stored)
    }

    /// The schema version of the database: the last migration applied.
    pub async fn schema_version(&self) -> Result<i64> {
        Ok(
            sqlx::query_scalar::<_, Option<i64>>("SELECT MAX(version) FROM schema_migrations")
                .fetch_one(&self.pool)
                .await?
                .unwrap_or(0),
        )
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
    async fn write_tx(&self) -> Result<WriteTx> {
        let mut inner = match self.dialect {
            Dialect::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Dialect::Postgres => self.pool.begin().await?,
        };
        if self.dialect == Dialect::Postgres {
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(WRITE_LOCK)
                .execute(&mut *inner)
                .await?;
        }
        Ok(WriteTx {
            inner,
            queued: false,
            wake: self.deliveries_queued.clone(),
        })
    }

    /// A write transaction on `conn` (the migrations' connection), serialised like
    /// [`Store::write_tx`].
    async fn begin_write<'c>(
        &self,
        conn: &'c mut sqlx::AnyConnection,
    ) -> Result<sqlx::Transaction<'c, sqlx::Any>> {
        use sqlx::Connection as _;
        let mut tx = match self.dialect {
            Dialect::Sqlite => conn.begin_with("BEGIN IMMEDIATE").await?,
            Dialect::Postgres => conn.begin().await?,
        };
        if self.dialect == Dialect::Postgres {
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(WRITE_LOCK)
                .execute(&mut *tx)
                .await?;
        }
        Ok(tx)
    }

    /// Notified after each commit that queued a webhook delivery: what the delivery workers
    /// wait on between due times.
    pub fn deliveries_queued(&self) -> Arc<Notify> {
        self.deliveries_queued.clone()
    }

    /// Closes the pool (flushes the WAL); used before a restart in tests and at shutdown.
    pub async fn close(&self) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_urls_parse_and_never_show_a_password() {
        let url = DatabaseUrl::parse("postgres://tunnel:s3cret@db.example:5432/tunnel").unwrap();
        assert_eq!(url.dialect(), Dialect::Postgres);
        assert_eq!(url.data_dir(), None);
        let shown = format!("{url:?} {}", url.redacted());
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(
            shown.contains("postgres://tunnel:***@db.example:5432/tunnel"),
            "{shown}"
        );
        let error = DatabaseUrl::parse("mysql://root:s3cret@h/db").unwrap_err();
        assert!(!error.to_string().contains("s3cret"), "{error}");
        assert!(DatabaseUrl::parse("postgres:///tunnel").is_err());
        assert_eq!(
            DatabaseUrl::parse("sqlite://data/t.db").unwrap(),
            DatabaseUrl::SqliteFile("data/t.db".into())
        );
        assert_eq!(
            DatabaseUrl::parse("sqlite::memory:").unwrap().dialect(),
            Dialect::Sqlite
        );
    }
}
