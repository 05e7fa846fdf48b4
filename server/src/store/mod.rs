//! Storage: ALL the SQL of the server lives under this module, and nothing outside it knows
//! which database is behind [`Store`].
//!
//! Today the backend is embedded SQLite (sqlx, WAL journal, foreign keys on). Handlers only see
//! `Store` methods taking and returning plain Rust records, so PostgreSQL can be added later by
//! giving `Store` a second pool kind here without touching a handler. Migrations are embedded in
//! the binary (`server/migrations/`) and run at start by [`Store::open`].
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
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow};
use sqlx::{Row as _, SqlitePool};
use std::path::PathBuf;
use std::str::FromStr as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tunnel_core::ids::{IdGenerator, IdKind, SECRET_BYTES, SecretToken};

/// Migrations, in order. A migration is never edited once released: add a new one.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../migrations/0001_initial.sql")),
    (2, include_str!("../../migrations/0002_events.sql")),
];

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// A private in-memory SQLite database (tests).
    SqliteMemory,
    /// A SQLite file.
    SqliteFile(PathBuf),
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
            anyhow::bail!("PostgreSQL is not supported by this build yet; use sqlite://<file>");
        }
        anyhow::bail!(
            "`{url}` is not a database URL; use sqlite://data/tunnel.db or sqlite::memory:"
        )
    }

    /// The directory holding the database file (and the server key), if any.
    pub fn data_dir(&self) -> Option<PathBuf> {
        match self {
            DatabaseUrl::SqliteMemory => None,
            DatabaseUrl::SqliteFile(path) => Some(
                path.parent()
                    .map(PathBuf::from)
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or_else(|| ".".into()),
            ),
        }
    }
}

/// The handle on the database, cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
    ids: Arc<Mutex<IdGenerator>>,
    /// Woken by every commit that queued a webhook delivery ([`WriteTx::commit`]).
    deliveries_queued: Arc<Notify>,
}

/// A write transaction: the changes, their events and their deliveries commit together
/// (`store::events`). Dereferences to the connection, so statements run in it.
#[derive(Debug)]
pub(crate) struct WriteTx {
    inner: sqlx::Transaction<'static, sqlx::Sqlite>,
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
    type Target = sqlx::SqliteConnection;
    fn deref(&self) -> &sqlx::SqliteConnection {
        &self.inner
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut sqlx::SqliteConnection {
        &mut self.inner
    }
}

impl Store {
    /// Opens (creating if needed) the database and runs pending migrations.
    pub async fn open(url: &DatabaseUrl) -> anyhow::Result<Store> {
        let pool = match url {
            DatabaseUrl::SqliteMemory => {
                // One connection that never expires: each in-memory connection is its own
                // database, and closing it would drop the data.
                let options = SqliteConnectOptions::from_str("sqlite::memory:")?.foreign_keys(true);
                SqlitePoolOptions::new()
                    .max_connections(1)
                    .min_connections(1)
                    .idle_timeout(None)
                    .max_lifetime(None)
                    .connect_with(options)
                    .await?
            }
            DatabaseUrl::SqliteFile(path) => {
                if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).with_context(|| {
                        format!("cannot create the data directory {}", dir.display())
                    })?;
                }
                let options = SqliteConnectOptions::new()
                    .filename(path)
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .foreign_keys(true)
                    .busy_timeout(Duration::from_secs(5));
                SqlitePoolOptions::new()
                    .max_connections(8)
                    .connect_with(options)
                    .await
                    .with_context(|| format!("cannot open the database {}", path.display()))?
            }
        };
        let store = Store {
            pool,
            ids: Arc::new(Mutex::new(IdGenerator::default())),
            deliveries_queued: Arc::new(Notify::new()),
        };
        store.migrate().await.context("database migration failed")?;
        Ok(store)
    }

    async fn migrate(&self) -> Result<()> {
        sqlx::raw_sql(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)",
        )
        .execute(&self.pool)
        .await?;
        for (version, sql) in MIGRATIONS {
            let mut tx = self.write_tx().await?;
            let done: Option<i64> =
                sqlx::query_scalar("SELECT version FROM schema_migrations WHERE version = ?")
                    .bind(version)
                    .fetch_optional(&mut *tx)
                    .await?;
            if done.is_none() {
                sqlx::raw_sql(sql).execute(&mut *tx).await?;
                sqlx::query("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)")
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

    /// A write transaction. `BEGIN IMMEDIATE` takes SQLite's write lock up front, so two
    /// read-then-write transactions wait for each other (busy timeout) instead of one failing
    /// with "database is locked" when it upgrades its read lock.
    async fn write_tx(&self) -> Result<WriteTx> {
        Ok(WriteTx {
            inner: self.pool.begin_with("BEGIN IMMEDIATE").await?,
            queued: false,
            wake: self.deliveries_queued.clone(),
        })
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

impl Store {
    /// The row `sql` (one `?`: the lookup of the presented secret) finds for a presented secret,
    /// if its `secret_hash` column matches the secret: the hashes are compared in constant time.
    async fn find_secret(&self, sql: &str, presented: &str) -> Result<Option<SqliteRow>> {
        use subtle::ConstantTimeEq as _;
        let found = sqlx::query(sql)
            .bind(lookup_of(presented))
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = found else { return Ok(None) };
        let stored: Vec<u8> = row.try_get("secret_hash")?;
        let matches: bool = stored.ct_eq(&hash_secret(presented)).into();
        Ok(matches.then_some(row))
    }
}
