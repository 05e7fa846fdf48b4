//! Moving an installation from one database to another (`tunnel-server migrate`,
//! docs/database.md): every table of the schema copied row for row — ids, secret hashes, sealed
//! keys and secrets, events and deliveries exactly as stored — in one transaction on the target,
//! read from one consistent snapshot of the source.
//!
//! The tables are listed here with their columns and kinds, in an order where every row's
//! references are copied before it. [`Store::copy_into`] checks that list against both
//! databases first, so a table or column added by a later migration but not here stops the move
//! instead of being left behind.

use super::{Dialect, Result, Store};
use sqlx::Row as _;
use sqlx::any::AnyRow;

/// How a column's values are read and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Int,
    Bytes,
}

use Kind::{Bytes, Int, Text};

/// A table: its name, the columns of its primary key (its rows are read in their order),
/// whether it is a resource table (whose rows start with [`RESOURCE_COLUMNS`]), and its own
/// columns.
struct Table {
    name: &'static str,
    key: &'static [&'static str],
    resource: bool,
    own: &'static [(&'static str, Kind)],
}

impl Table {
    const fn plain(
        name: &'static str,
        key: &'static [&'static str],
        own: &'static [(&'static str, Kind)],
    ) -> Table {
        Table {
            name,
            key,
            resource: false,
            own,
        }
    }

    const fn resource(name: &'static str, own: &'static [(&'static str, Kind)]) -> Table {
        Table {
            name,
            key: &["id"],
            resource: true,
            own,
        }
    }

    /// Every column of the table.
    fn columns(&self) -> Vec<(&'static str, Kind)> {
        let shared = if self.resource { RESOURCE_COLUMNS } else { &[] };
        shared.iter().chain(self.own).copied().collect()
    }
}

/// The columns every resource table starts with (`records::Record`).
const RESOURCE_COLUMNS: &[(&str, Kind)] = &[
    ("id", Text),
    ("account_id", Text),
    ("created_at", Text),
    ("description", Text),
    ("metadata", Text),
];

/// Every table of the schema (but `schema_migrations`, which each database keeps for itself,
/// and the [`LIVE_TABLES`]), parents first.
const TABLES: &[Table] = &[
    Table::plain(
        "accounts",
        &["id"],
        &[("id", Text), ("name", Text), ("created_at", Text)],
    ),
    Table::plain(
        "principals",
        &["id"],
        &[
            ("id", Text),
            ("account_id", Text),
            ("is_admin", Int),
            ("created_at", Text),
            ("name", Text),
        ],
    ),
    Table::resource(
        "api_keys",
        &[
            ("lookup", Text),
            ("secret_hash", Bytes),
            ("principal_id", Text),
        ],
    ),
    Table::resource(
        "credentials",
        &[
            ("lookup", Text),
            ("secret_hash", Bytes),
            ("acl", Text),
            ("owner_id", Text),
        ],
    ),
    Table::resource(
        "ssh_certificate_authorities",
        &[
            ("key_type", Text),
            ("public_key", Text),
            ("private_key_sealed", Bytes),
        ],
    ),
    Table::resource("tunnel_group_backends", &[("labels", Text)]),
    Table::resource(
        "tls_edges",
        &[
            ("hostports", Text),
            ("backend_id", Text),
            ("backend_enabled", Int),
        ],
    ),
    Table::resource(
        "event_destinations",
        &[
            ("format", Text),
            ("target", Text),
            ("secret_sealed", Bytes),
            ("previous_secret_sealed", Bytes),
            ("previous_secret_until", Int),
        ],
    ),
    Table::resource("event_subscriptions", &[("sources", Text)]),
    Table::plain(
        "event_subscription_destinations",
        &["subscription_id", "destination_id"],
        &[
            ("subscription_id", Text),
            ("position", Int),
            ("destination_id", Text),
        ],
    ),
    Table::plain(
        "events",
        &["id"],
        &[
            ("id", Text),
            ("account_id", Text),
            ("type", Text),
            ("occurred_at", Text),
            ("actor_type", Text),
            ("actor_id", Text),
            ("api_key_id", Text),
            ("operation_id", Text),
            ("object_id", Text),
            ("object", Text),
            ("changed_fields", Text),
            ("details", Text),
        ],
    ),
    Table::plain(
        "event_deliveries",
        &["id"],
        &[
            ("id", Text),
            ("account_id", Text),
            ("event_id", Text),
            ("destination_id", Text),
            ("created_at", Text),
            ("state", Text),
            ("attempt_count", Int),
            ("next_attempt_at", Int),
            ("lease_until", Int),
            ("lease_node", Text),
        ],
    ),
    Table::plain(
        "event_delivery_attempts",
        &["delivery_id", "attempt"],
        &[
            ("delivery_id", Text),
            ("attempt", Int),
            ("attempted_at", Text),
            ("status_code", Int),
            ("latency_ms", Int),
            ("error", Text),
            ("response_body", Text),
        ],
    ),
    Table::plain(
        "server_key_check",
        &["id"],
        &[("id", Int), ("sealed", Bytes)],
    ),
];

/// The tables of what is live, not moved: the nodes of the cluster and the sessions their
/// connections hold, which end when those servers stop (`store::sessions`).
const LIVE_TABLES: &[&str] = &["cluster_nodes", "tunnel_sessions"];

/// Rows per `INSERT` (well under both databases' limits on parameters per statement).
const ROWS_PER_INSERT: usize = 200;

/// Rows per read of the source. Each read is a short statement of its own, so none stays open
/// while the target is written, and the memory a table takes is bounded (the audit log may not
/// fit in memory). One `SELECT` streamed per table lasted the whole table's copy, and sqlx
/// logged it as a slow statement (its time being the copy's: 1.9 s for 20 000 credentials).
const ROWS_PER_READ: usize = 1000;

impl Store {
    /// Copies every row of this database into `target`, which must hold no row yet (its schema
    /// is made by its own migrations, so both are at this build's version). All or nothing:
    /// the target's copy commits once, after every row is in and every count matches. Returns
    /// each table with the number of rows moved.
    pub async fn copy_into(&self, target: &Store) -> anyhow::Result<Vec<(&'static str, u64)>> {
        for store in [self, target] {
            store.check_tables().await?;
        }
        anyhow::ensure!(
            self.schema_version().await? == target.schema_version().await?,
            "the two databases are at different schema versions"
        );
        for table in TABLES.iter().map(|t| t.name) {
            let count = target.count(table).await?;
            // The key check is written by a server's first start; any other row means data.
            if count > 0 && table != "server_key_check" {
                anyhow::bail!(
                    "the target database is not empty ({table} has {count} rows): moving into \
                     an installation in use would mix two of them; give a new, empty database"
                );
            }
        }
        // One snapshot of the source: what a server still writing adds meanwhile is either
        // wholly in it or not at all.
        let mut source = self.pool.begin().await?;
        if self.dialect == Dialect::Postgres {
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                .execute(&mut *source)
                .await?;
        }
        let mut tx = target.write_tx().await?;
        sqlx::query("DELETE FROM server_key_check")
            .execute(&mut *tx)
            .await?;
        let names: Vec<&str> = TABLES.iter().map(|t| t.name).collect();
        super::search::bulk_pending_lists(&mut tx, target.dialect, &names, true).await?;
        let mut moved = Vec::new();
        for table in TABLES {
            let (name, columns) = (table.name, table.columns());
            let mut copied = 0u64;
            walk(&mut source, table, &columns, ROWS_PER_READ, async |rows| {
                for chunk in rows.chunks(ROWS_PER_INSERT) {
                    insert_rows(&mut tx, name, &columns, chunk).await?;
                    copied += chunk.len() as u64;
                }
                Ok(())
            })
            .await?;
            let count: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {name}"))
                .fetch_one(&mut *tx)
                .await?;
            anyhow::ensure!(
                count == copied as i64,
                "{name}: {copied} rows read but {count} in the target; nothing was moved"
            );
            moved.push((name, copied));
        }
        super::search::bulk_pending_lists(&mut tx, target.dialect, &names, false).await?;
        // The source's snapshot ends first: once the target commits, the move has happened.
        source.rollback().await?;
        tx.commit().await?;
        target.refresh_statistics(&names).await?;
        Ok(moved)
    }

    /// The number of rows of `table` (a name of [`TABLES`]).
    async fn count(&self, table: &str) -> Result<i64> {
        Ok(sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
            .fetch_one(&self.pool)
            .await?)
    }

    /// Fails unless the database's tables and their columns are exactly those of [`TABLES`].
    async fn check_tables(&self) -> anyhow::Result<()> {
        let sql = match self.dialect {
            Dialect::Sqlite => {
                "SELECT m.name AS table_name, p.name AS column_name
                 FROM sqlite_master m JOIN pragma_table_info(m.name) p
                 WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'"
            }
            Dialect::Postgres => {
                "SELECT table_name::text AS table_name, column_name::text AS column_name
                 FROM information_schema.columns WHERE table_schema = current_schema()"
            }
        };
        let rows = sqlx::query(sql).fetch_all(&self.pool).await?;
        let mut found: Vec<(String, String)> = rows
            .iter()
            .map(|row: &AnyRow| Ok((row.try_get(0)?, row.try_get(1)?)))
            .collect::<Result<_>>()?;
        // SQLite's search bookkeeping (`search_changes`, `search_source`: the index itself is
        // in a file of its own) is the source's, not data: the target indexes what it receives.
        found.retain(|(table, _)| {
            table != "schema_migrations"
                && !LIVE_TABLES.contains(&table.as_str())
                && !table.starts_with("search_")
        });
        found.sort();
        let mut known: Vec<(String, String)> = TABLES
            .iter()
            .flat_map(|table| {
                table
                    .columns()
                    .into_iter()
                    .map(|(column, _)| (table.name.to_owned(), column.to_owned()))
            })
            .collect();
        known.sort();
        if found != known {
            let missing: Vec<String> = found
                .iter()
                .filter(|c| !known.contains(c))
                .map(|(t, c)| format!("{t}.{c}"))
                .collect();
            anyhow::bail!(
                "this build does not know how to move {}; nothing was moved",
                if missing.is_empty() {
                    "a database of another schema".to_owned()
                } else {
                    missing.join(", ")
                }
            );
        }
        Ok(())
    }
}

/// One multi-row `INSERT` of `rows` into `table`.
async fn insert_rows(
    conn: &mut sqlx::AnyConnection,
    table: &str,
    columns: &[(&str, Kind)],
    rows: &[AnyRow],
) -> anyhow::Result<()> {
    let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
    let tuples: Vec<String> = (0..rows.len())
        .map(|r| {
            format!(
                "({})",
                super::database::placeholders(r * names.len() + 1, names.len())
            )
        })
        .collect();
    let sql = format!(
        "INSERT INTO {table} ({}) VALUES {}",
        names.join(", "),
        tuples.join(", ")
    );
    let mut query = sqlx::query(&sql);
    for row in rows {
        for (name, kind) in columns {
            query = bind(query, row, name, *kind)?;
        }
    }
    query.execute(conn).await?;
    Ok(())
}

/// Every row of `table`, in key order, handed to `each` a page of at most `limit` rows at a
/// time, each page read after the last row of the one before.
async fn walk(
    conn: &mut sqlx::AnyConnection,
    table: &Table,
    columns: &[(&'static str, Kind)],
    limit: usize,
    mut each: impl AsyncFnMut(&[AnyRow]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut after: Option<AnyRow> = None;
    loop {
        let mut rows = read_page(conn, table, columns, after.as_ref(), limit).await?;
        each(&rows).await?;
        if rows.len() < limit {
            return Ok(());
        }
        after = rows.pop();
    }
}

/// The page of `table`'s rows after the row `after` (from the first row when `None`), in key
/// order: at most `limit` of them.
async fn read_page(
    conn: &mut sqlx::AnyConnection,
    table: &Table,
    columns: &[(&'static str, Kind)],
    after: Option<&AnyRow>,
    limit: usize,
) -> anyhow::Result<Vec<AnyRow>> {
    let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
    let key = table.key.join(", ");
    let from = match after {
        Some(_) => format!(
            "WHERE ({key}) > ({})",
            super::database::placeholders(1, table.key.len())
        ),
        None => String::new(),
    };
    let sql = format!(
        "SELECT {} FROM {} {from} ORDER BY {key} LIMIT {limit}",
        names.join(", "),
        table.name
    );
    let mut query = sqlx::query(&sql);
    if let Some(row) = after {
        for column in table.key {
            let (_, kind) = columns
                .iter()
                .find(|(name, _)| name == column)
                .ok_or_else(|| anyhow::anyhow!("{}: no key column {column}", table.name))?;
            query = bind(query, row, column, *kind)?;
        }
    }
    Ok(query.fetch_all(conn).await?)
}

/// `query` with the value of `row`'s column `name` bound next.
fn bind<'q>(
    query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    row: &AnyRow,
    name: &str,
    kind: Kind,
) -> anyhow::Result<sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>> {
    Ok(match kind {
        Text => query.bind(row.try_get::<Option<String>, _>(name)?),
        Int => query.bind(row.try_get::<Option<i64>, _>(name)?),
        Bytes => query.bind(row.try_get::<Option<Vec<u8>>, _>(name)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::DatabaseUrl;

    /// Pages of every size walk a two-column key, ties in its first column included, reading
    /// each row once and in key order, NULLs as they are.
    #[tokio::test]
    async fn pages_walk_a_two_column_key_without_loss_or_repeat() {
        let store = Store::open(&DatabaseUrl::SqliteMemory).await.unwrap();
        let mut conn = store.pool.acquire().await.unwrap();
        sqlx::query("CREATE TABLE walk (a TEXT, b INTEGER, c TEXT, PRIMARY KEY (a, b))")
            .execute(&mut *conn)
            .await
            .unwrap();
        // Inserted out of key order.
        let rows = [
            ("x", 2, None),
            ("y", 1, Some("1")),
            ("x", 10, Some("2")),
            ("w", 5, Some("3")),
            ("x", 1, None),
        ];
        for (a, b, c) in rows {
            sqlx::query("INSERT INTO walk VALUES ($1, $2, $3)")
                .bind(a)
                .bind(b)
                .bind(c)
                .execute(&mut *conn)
                .await
                .unwrap();
        }
        let table = Table::plain("walk", &["a", "b"], &[("a", Text), ("b", Int), ("c", Text)]);
        let columns = table.columns();
        let expected = [
            "w 5 Some(\"3\")",
            "x 1 None",
            "x 2 None",
            "x 10 Some(\"2\")",
            "y 1 Some(\"1\")",
        ];
        for limit in 1..=6 {
            let (mut read, mut pages) = (Vec::new(), 0);
            walk(&mut conn, &table, &columns, limit, async |page| {
                pages += 1;
                anyhow::ensure!(pages <= expected.len() + 1, "pages of {limit} never end");
                read.extend(page.iter().map(|row| {
                    let (a, b): (String, i64) = (row.get("a"), row.get("b"));
                    format!("{a} {b} {:?}", row.get::<Option<String>, _>("c"))
                }));
                Ok(())
            })
            .await
            .unwrap();
            assert_eq!(read, expected, "pages of {limit}");
            assert_eq!(pages, expected.len() / limit + 1, "pages of {limit}");
        }
    }
}
