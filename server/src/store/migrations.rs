//! The schema's migrations, embedded in the binary: one list per database with the same version
//! numbers (docs/database.md), applied at start by [`Store::open`](super::Store::open). On
//! PostgreSQL the whole run holds an advisory lock, so servers starting together migrate one
//! after the other.

use super::{Dialect, MIGRATION_LOCK, Result, Store, lock_writes, now_rfc3339};

/// Migrations of each database, in order, with the same version numbers (version `n` brings
/// both to the same schema). A migration is never edited once released: add a new one to both.
const SQLITE_MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../migrations/sqlite/0001_initial.sql")),
    (2, include_str!("../../migrations/sqlite/0002_events.sql")),
    (
        3,
        include_str!("../../migrations/sqlite/0003_server_key_check.sql"),
    ),
    (4, include_str!("../../migrations/sqlite/0004_cluster.sql")),
    (5, include_str!("../../migrations/sqlite/0005_api_keys.sql")),
    (6, include_str!("../../migrations/sqlite/0006_search.sql")),
    (
        7,
        include_str!("../../migrations/sqlite/0007_user_names.sql"),
    ),
    (
        8,
        include_str!("../../migrations/sqlite/0008_search_off_writes.sql"),
    ),
    (
        9,
        include_str!("../../migrations/sqlite/0009_small_pending_lists.sql"),
    ),
    (
        10,
        include_str!("../../migrations/sqlite/0010_session_search.sql"),
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
    (
        4,
        include_str!("../../migrations/postgres/0004_cluster.sql"),
    ),
    (
        5,
        include_str!("../../migrations/postgres/0005_api_keys.sql"),
    ),
    (6, include_str!("../../migrations/postgres/0006_search.sql")),
    (
        7,
        include_str!("../../migrations/postgres/0007_user_names.sql"),
    ),
    (
        8,
        include_str!("../../migrations/postgres/0008_search_off_writes.sql"),
    ),
    (
        9,
        include_str!("../../migrations/postgres/0009_small_pending_lists.sql"),
    ),
    (
        10,
        include_str!("../../migrations/postgres/0010_session_search.sql"),
    ),
];

impl Store {
    /// Applies the migrations the database lacks, each in its own transaction with its
    /// version row. On PostgreSQL the whole run holds an advisory lock on one connection, so
    /// servers started together migrate one after the other and the later ones find nothing
    /// left to do; SQLite's write lock (`BEGIN IMMEDIATE`) does the same per migration.
    pub(super) async fn migrate(&self) -> Result<()> {
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
            // The session lock ends with the session: on failure the connection is closed
            // rather than returned to the pool still holding it, and the migration's own
            // error is the one reported.
            if applied.is_err() {
                drop(conn.detach());
                return applied;
            }
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

    /// The version of the last migration of this build, for the database's dialect.
    pub(super) fn latest_version(&self) -> i64 {
        let migrations = match self.dialect {
            Dialect::Sqlite => SQLITE_MIGRATIONS,
            Dialect::Postgres => POSTGRES_MIGRATIONS,
        };
        migrations.last().map_or(0, |(version, _)| *version)
    }

    /// The schema version of a database that may have none yet (`None`: no migrations table).
    pub(super) async fn schema_version_if_any(&self) -> Result<Option<i64>> {
        match self.schema_version().await {
            Ok(version) => Ok(Some(version)),
            Err(_) => Ok(None),
        }
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

    /// A write transaction on `conn` (the migrations' connection), serialised like
    /// [`Store::write_tx`].
    async fn begin_write<'c>(
        &self,
        conn: &'c mut sqlx::AnyConnection,
    ) -> Result<sqlx::Transaction<'c, sqlx::Any>> {
        use sqlx::Connection as _;
        let mut tx = conn.begin_with(self.dialect.begin_write()).await?;
        // Unbounded, as before: a server starting waits for the writes of running ones.
        lock_writes(self.dialect, &mut tx, false).await?;
        Ok(tx)
    }
}
