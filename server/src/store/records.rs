//! What every resource table of an account shares, written once: keyset paging, fetching one
//! row, creating, updating and deleting one (refused while referenced), each with its event in
//! the same transaction (`super::events`), and checking that a referenced row exists.
//!
//! Each area's module declares its row type with `columns::record!` (its table, id kind, what
//! may reference it, its own columns) and keeps only what is its own: creation and update.

use super::columns::{Fields, Value, to_json};
use super::events::{Cause, Change, NewEvent, changed_fields};
use super::exec::Exec;
use super::{Error, PageQuery, Result, Store, WriteTx};
use serde_json::{Map, Value as Json};
use sqlx::AnyConnection;
use std::future::Future;
use tunnel_core::event_types::event_type;
use tunnel_core::ids::IdKind;

/// The reads of one row that [`Store::get`] may answer from the row cache.
enum RowReads<'s> {
    /// On this thread, on a SQLite file (`super::direct`).
    Direct(&'s super::direct::DirectConnections),
    /// On sqlx's PostgreSQL driver (`super::pg_reads`).
    Postgres(&'s super::pg_reads::PgReads<sqlx::PgConnection>),
}

/// What refuses the delete of a row: a statement counting the rows referencing it (one
/// parameter, `$1`: the id; the count named `n`), and the words of the 409 (see
/// [`Error::InUse`]).
#[derive(Debug, Clone, Copy)]
pub struct UsedBy {
    /// The ids of the rows referencing the row `$1` (as `user_id`), the first ten, each with
    /// how many there are in all (`total`): named in the refusal, so the caller knows what to
    /// change, and how much.
    pub ids: &'static str,
    pub by: &'static str,
}

/// The row type of one resource table. Every such table has `id` (time-sortable), `account_id`,
/// `created_at`, `description` and `metadata` columns and an `(account_id, id)` index.
pub trait Record: Sized + Clone + Send + Sync + Unpin + 'static {
    /// The table's name: a constant of this module's areas, never input.
    const TABLE: &'static str;
    /// The kind of the table's ids, which names the resource in errors.
    const KIND: IdKind;
    /// What may reference a row; `None` when nothing can.
    const USED_BY: Option<UsedBy> = None;
    /// The column naming the principal a row belongs to, for tables whose rows a member sees
    /// only of their own (API keys); `None` when every principal of the account sees every row.
    const OWNER: Option<&'static str> = None;
    /// The columns a search (`q`) looks in, in the order the search indexes hold them
    /// (`super::search_index::INDEXED`).
    const SEARCH: &'static [&'static str];

    /// The row of a `SELECT` of [`Record::select`]'s columns.
    fn decode(row: &dyn Fields) -> Result<Self>;

    /// The columns [`Record::decode`] reads, as a `SELECT` list.
    fn select() -> String;

    /// The row's id.
    fn id(&self) -> &str;

    /// The columns the row's `INSERT` writes, but for `account_id`.
    fn columns(&self) -> Vec<(&'static str, Value)>;

    /// Whether [`Record::complete`] reads other tables (then the table's reads take a
    /// connection of [`Store::reading`], not `super::direct`'s nor `super::pg_reads`'s row
    /// reads).
    const COMPLETES: bool = false;

    /// Completes decoded rows with what other tables hold for them (a subscription's
    /// destinations). Most tables hold everything in their own row.
    fn complete(
        _conn: &mut AnyConnection,
        rows: Vec<Self>,
    ) -> impl Future<Output = Result<Vec<Self>>> + Send {
        async move { Ok(rows) }
    }
}

/// Which rows of a table a generic read or write may touch: the account's, or of those only the
/// ones of one principal (a member's own API keys). `owner` applies to tables with a
/// [`Record::OWNER`] column and is ignored for the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope<'a> {
    pub account_id: &'a str,
    pub owner: Option<&'a str>,
}

impl<'a> Scope<'a> {
    /// Only the rows of `owner` in the account.
    pub fn owned_by(account_id: &'a str, owner: &'a str) -> Scope<'a> {
        Scope {
            account_id,
            owner: Some(owner),
        }
    }

    /// `AND …` restricting a statement on `R` to this scope, numbering its parameters from
    /// `$first`, and the values to bind, in order: the account, then the owner when it applies.
    fn filter<R: Record>(&self, first: usize) -> (String, Vec<&'a str>) {
        match (R::OWNER, self.owner) {
            (Some(column), Some(owner)) => (
                format!("account_id = ${first} AND {column} = ${}", first + 1),
                vec![self.account_id, owner],
            ),
            _ => (format!("account_id = ${first}"), vec![self.account_id]),
        }
    }
}

/// The whole account.
impl<'a> From<&'a str> for Scope<'a> {
    fn from(account_id: &'a str) -> Scope<'a> {
        Scope {
            account_id,
            owner: None,
        }
    }
}

impl<'a> From<&'a String> for Scope<'a> {
    fn from(account_id: &'a String) -> Scope<'a> {
        Scope::from(account_id.as_str())
    }
}

/// How a write to rows of `R` is recorded: who causes it, and the wire form of a row (which
/// only the API layer knows: it has the base URL and the live sessions).
pub struct Audit<'a, R> {
    pub cause: &'a Cause,
    wire: Box<dyn Fn(&R) -> Json + Send + Sync + 'a>,
}

impl<R> std::fmt::Debug for Audit<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit")
            .field("cause", &self.cause)
            .finish_non_exhaustive()
    }
}

impl<'a, R: Record> Audit<'a, R> {
    pub fn new(cause: &'a Cause, wire: impl Fn(&R) -> Json + Send + Sync + 'a) -> Audit<'a, R> {
        Audit {
            cause,
            wire: Box::new(wire),
        }
    }

    /// The wire form of `row`.
    pub fn wire(&self, row: &R) -> Json {
        (self.wire)(row)
    }

    /// The event `<object>_<verb>.v0` about `row` as it is now.
    pub fn event(&self, verb: &str, id: &str, row: &R) -> NewEvent {
        NewEvent {
            event_type: event_type(R::KIND, verb),
            cause: self.cause.clone(),
            object_id: id.to_owned(),
            object: self.wire(row),
            changed_fields: Vec::new(),
            details: Map::new(),
        }
    }

    /// The update of `before` into `after`, naming the wire fields that changed; `None` when
    /// nothing did (a PATCH repeating the values changes nothing and records nothing).
    pub fn updated(&self, verb: &str, id: &str, before: &R, after: &R) -> Option<NewEvent> {
        let (before, after) = (self.wire(before), self.wire(after));
        let changed = changed_fields(&before, &after);
        (!changed.is_empty()).then(|| NewEvent {
            event_type: event_type(R::KIND, verb),
            cause: self.cause.clone(),
            object_id: id.to_owned(),
            object: after,
            changed_fields: changed,
            details: Map::new(),
        })
    }
}

impl Store {
    /// One page of the rows in `scope` (those holding the page's search, if any), newest first
    /// (oldest first for `order=oldest`), `limit + 1` of them so the caller knows whether more exist.
    ///
    /// Of a table whose row holds everything, read on this thread on a SQLite file without a
    /// search (`super::direct`), and through sqlx's PostgreSQL driver on PostgreSQL
    /// (`super::pg_reads`); else where [`Store::reading`] runs reads.
    pub async fn list<'a, R: Record>(
        &self,
        scope: impl Into<Scope<'a>>,
        page: &PageQuery,
    ) -> Result<Vec<R>> {
        let scope = scope.into();
        if let (Some(direct), None) = (self.direct::<R>(), &page.q) {
            let (sql, values) = list_statement::<R>(self.dialect, scope, page, false);
            return direct.read(&sql, &values, |row| R::decode(row));
        }
        // PostgreSQL never reads a search's matches apart (`super::search::narrow`).
        if let (Some(reads), false) = (&self.pg_rows, R::COMPLETES) {
            let (sql, values) = list_statement::<R>(self.dialect, scope, page, false);
            return reads.rows(&sql, &values, |row| R::decode(row)).await;
        }
        self.reading(async |conn| self.list_on::<R>(conn, scope, page).await)
            .await
    }

    /// [`Store::list`]'s page, read on `conn` ([`Store::reading`]).
    async fn list_on<R: Record>(
        &self,
        conn: &mut sqlx::AnyConnection,
        scope: Scope<'_>,
        page: &PageQuery,
    ) -> Result<Vec<R>> {
        // A search with few matches reads them rather than the account's rows (search.rs).
        let narrow = match page.q.as_deref() {
            Some(q) => {
                let forms = super::search::forms(q, R::SEARCH);
                super::search::narrow(conn, self.dialect, R::TABLE, &forms).await?
            }
            None => false,
        };
        let (sql, values) = list_statement::<R>(self.dialect, scope, page, narrow);
        let mut query = sqlx::query(&sql);
        for value in values {
            query = query.bind(value);
        }
        let rows = query.fetch_all(&mut *conn).await?;
        let rows = rows
            .iter()
            .map(|row| R::decode(row))
            .collect::<Result<Vec<R>>>()?;
        R::complete(conn, rows).await
    }

    /// The reads on this thread, for a table whose rows hold everything ([`Record::COMPLETES`])
    /// on a SQLite file (`super::direct`).
    fn direct<R: Record>(&self) -> Option<&super::direct::DirectConnections> {
        self.direct_reads().filter(|_| !R::COMPLETES)
    }

    /// Where [`Store::get`] reads a row of `R` (and keeps it, `super::row_cache`): `None` for
    /// a table whose rows need another's ([`Record::COMPLETES`]) and in an in-memory database,
    /// read where [`Store::reading`] runs reads.
    fn row_reads<R: Record>(&self) -> Option<RowReads<'_>> {
        match (self.direct::<R>(), &self.pg_rows) {
            (Some(direct), _) => Some(RowReads::Direct(direct)),
            (None, Some(pg)) if !R::COMPLETES => Some(RowReads::Postgres(pg)),
            _ => None,
        }
    }

    /// The row `id` in `scope` ([`Error::NotFound`] otherwise).
    ///
    /// A table whose row holds everything ([`Record::COMPLETES`]) is read on this thread on a
    /// SQLite file (`super::direct`), through sqlx's PostgreSQL driver on PostgreSQL
    /// (`super::pg_reads`); either way, answered from the rows read before while this process
    /// has committed nothing since and is the one server (`super::row_cache`; not for rows
    /// scoped to an owner). Else where [`Store::reading`] runs reads.
    pub async fn get<'a, R: Record>(&self, scope: impl Into<Scope<'a>>, id: &str) -> Result<R> {
        let scope = scope.into();
        let Some(reads) = self.row_reads::<R>() else {
            return self
                .reading(async |conn| fetch(&mut Exec::Sqlx(conn), scope, id).await)
                .await;
        };
        let account_id = scope.account_id;
        let commits = self.writer.settled().filter(|_| R::OWNER.is_none());
        let stamp = match commits.map(|c| self.rows.get(R::TABLE, account_id, id, c)) {
            Some(Ok(row)) => return Ok(row),
            Some(Err(stamp)) => stamp,
            None => None,
        };
        let (sql, values) = fetch_statement::<R>(scope, id);
        let decode = |row: &dyn Fields| {
            let weighed = super::row_cache::Weighed::new(row);
            Ok((R::decode(&weighed)?, weighed.text_bytes()))
        };
        let rows = match reads {
            RowReads::Direct(direct) => direct.read(&sql, &values, decode)?,
            RowReads::Postgres(pg) => pg.rows(&sql, &values, decode).await?,
        };
        let (row, text) = rows.into_iter().next().ok_or_else(|| not_found::<R>(id))?;
        if let Some(stamp) = stamp {
            self.rows
                .put(R::TABLE, account_id, id, stamp, text, row.clone());
        }
        Ok(row)
    }

    /// Deletes the row `id` in `scope`, recording its last wire form: [`Error::NotFound`]
    /// when there is none, [`Error::InUse`] while something references it. The check, the
    /// delete and the event share one write transaction, so no reference can appear in between.
    pub async fn delete<'a, R: Record>(
        &self,
        scope: impl Into<Scope<'a>>,
        id: &str,
        audit: &Audit<'_, R>,
    ) -> Result<()> {
        let scope = scope.into();
        let account_id = scope.account_id;
        self.write::<R, _>(async |tx| {
            let before = fetch::<R>(&mut tx.exec(), scope, id).await?;
            if let Some(used_by) = R::USED_BY {
                let found = tx
                    .exec()
                    .fetch(used_by.ids, &[id.into()], |row| {
                        Ok((row.text("user_id")?, row.integer("total")?))
                    })
                    .await?;
                let total = found.first().and_then(|(_, total)| *total).unwrap_or(0);
                let users: Vec<String> = found.into_iter().filter_map(|(user, _)| user).collect();
                if !users.is_empty() {
                    return Err(Error::InUse {
                        kind: R::KIND,
                        id: id.to_owned(),
                        by: used_by.by,
                        users,
                        total: u64::try_from(total).unwrap_or(0),
                    });
                }
            }
            let sql = format!("DELETE FROM {} WHERE account_id = $1 AND id = $2", R::TABLE);
            let values = vec![account_id.into(), id.into()];
            let change = Change {
                table: R::TABLE,
                sql,
                values,
            };
            let event = audit.event("deleted", id, &before);
            self.emit_after(tx, account_id, Some(change), event).await?;
            Ok(())
        })
        .await?;
        if R::TABLE == super::ApiKeyRow::TABLE {
            // Revoked at once: after the commit, so no lookup can put the key back
            // (`key_cache`); the other nodes are told by the API (`api::api_keys`).
            self.keys.clear();
        }
        Ok(())
    }

    /// Mints an id of `R`'s kind, makes the row of it with `row`, and stores it in the account
    /// with its event ([`Store::create_recorded`]).
    pub(super) async fn create<R: Record>(
        &self,
        account_id: &str,
        audit: &Audit<'_, R>,
        row: impl FnOnce((String, String)) -> R,
    ) -> Result<R> {
        let row = row(self.mint(R::KIND));
        self.create_recorded(account_id, &row, vec![], audit)
            .await?;
        Ok(row)
    }

    /// Stores `row` in the account (with `extra` columns, see [`insert`]) with its `created`
    /// event, in a write of its own ([`Store::write`]).
    pub(super) async fn create_recorded<R: Record>(
        &self,
        account_id: &str,
        row: &R,
        extra: Vec<(&'static str, Value)>,
        audit: &Audit<'_, R>,
    ) -> Result<()> {
        self.write::<R, _>(async |tx| {
            self.insert_recorded(tx, account_id, row, extra, audit)
                .await
        })
        .await
    }

    /// Stores `row` in the account (with `extra` columns, see [`insert`]) and records its
    /// `created` event, in `tx`.
    pub(super) async fn insert_recorded<R: Record>(
        &self,
        tx: &mut WriteTx,
        account_id: &str,
        row: &R,
        extra: Vec<(&'static str, Value)>,
        audit: &Audit<'_, R>,
    ) -> Result<()> {
        let event = audit.event("created", row.id(), row);
        let change = insert_statement(account_id, row, extra);
        self.emit_after(tx, account_id, Some(change), event).await?;
        Ok(())
    }

    /// Applies `set` to the row `id` in `scope` and records the change: the row as it is now.
    pub(super) async fn apply<'a, R: Record>(
        &self,
        scope: impl Into<Scope<'a>>,
        id: &str,
        set: Changes,
        audit: &Audit<'_, R>,
    ) -> Result<R> {
        let scope = scope.into();
        let account_id = scope.account_id;
        self.write::<R, _>(async |tx| {
            let before = fetch::<R>(&mut tx.exec(), scope, id).await?;
            let after = update_returning::<R>(&mut tx.exec(), account_id, id, set).await?;
            self.record_change(tx, account_id, &before, after, "updated", audit)
                .await
        })
        .await
    }

    /// Reads the row `before` was, after it was changed in `tx`, and records the `<verb>` event
    /// naming the fields that changed (none when nothing did): the row as it is now.
    pub(super) async fn record_update<R: Record>(
        &self,
        tx: &mut WriteTx,
        account_id: &str,
        before: &R,
        verb: &str,
        audit: &Audit<'_, R>,
    ) -> Result<R> {
        let after = fetch::<R>(&mut tx.exec(), account_id, before.id()).await?;
        self.record_change(tx, account_id, before, after, verb, audit)
            .await
    }

    /// Records the `<verb>` event of `before` becoming `after` in `tx`, naming the fields that
    /// changed (none when nothing did): `after`.
    async fn record_change<R: Record>(
        &self,
        tx: &mut WriteTx,
        account_id: &str,
        before: &R,
        after: R,
        verb: &str,
        audit: &Audit<'_, R>,
    ) -> Result<R> {
        if let Some(event) = audit.updated(verb, before.id(), before, &after) {
            self.emit(tx, account_id, event).await?;
        }
        Ok(after)
    }
}

/// What a list statement adds for one page beyond its scope (` AND …`, or nothing for the first
/// page of every row): `id < before_id` for a later page (`>` oldest first), then the search, on `table` whose
/// columns are qualified with `qualifier` and searched in `columns`; parameters numbered from
/// `$first`, and the values to bind, in order. Shared by the resource lists and the sessions'.
pub(super) fn page_filter(
    dialect: super::Dialect,
    table: &str,
    qualifier: &str,
    columns: &[&str],
    page: &PageQuery,
    first: usize,
) -> (String, Vec<String>) {
    let (mut filter, mut values) = (String::new(), Vec::new());
    if let Some(before_id) = &page.before_id {
        // Past the previous page's last row, in the page's order.
        let past = if page.oldest_first { ">" } else { "<" };
        filter.push_str(&format!(" AND {qualifier}id {past} ${first}"));
        values.push(before_id.clone());
    }
    if let Some(q) = page.q.as_deref() {
        let param = first + values.len();
        let forms = super::search::forms(q, columns);
        let (condition, search) =
            super::search::condition(dialect, table, qualifier, columns, param, &forms);
        filter.push_str(&format!(" AND {condition}"));
        values.extend(search);
    }
    (filter, values)
}

/// The row `id` in `scope`, read in `exec` ([`Error::NotFound`] otherwise).
pub(super) async fn fetch<'a, R: Record>(
    exec: &mut Exec<'_>,
    scope: impl Into<Scope<'a>>,
    id: &str,
) -> Result<R> {
    let (sql, values) = fetch_statement::<R>(scope.into(), id);
    let values: Vec<Value> = values.into_iter().map(Value::from).collect();
    let found = exec.fetch(&sql, &values, |row| R::decode(row)).await?;
    completed(exec, found, id).await
}

/// `found`, the row `id` as its own table holds it (or nothing), completed with what other
/// tables hold for it ([`Record::complete`]).
async fn completed<R: Record>(exec: &mut Exec<'_>, found: Vec<R>, id: &str) -> Result<R> {
    let rows = match exec.sqlx() {
        Some(conn) => R::complete(conn, found).await?,
        None if !R::COMPLETES => found,
        // `Store::write` never makes a direct write of such a table.
        None => {
            return Err(sqlx::Error::Protocol(format!(
                "{} rows are read in a direct write, which cannot complete them",
                R::TABLE
            ))
            .into());
        }
    };
    rows.into_iter().next().ok_or_else(|| not_found::<R>(id))
}

/// The `SELECT` of one page of `R` in `scope` (its order, search and `limit + 1` rows), and its
/// parameters in order; `narrow` reads a search's matches (`super::search::narrow`).
fn list_statement<R: Record>(
    dialect: super::Dialect,
    scope: Scope<'_>,
    page: &PageQuery,
    narrow: bool,
) -> (String, Vec<String>) {
    // The statement has `id < ?` only for a later page, never `(? IS NULL OR id < ?)`: SQLite
    // plans a statement once, and with that OR it cannot use `id < ?` as a range on the
    // (account_id, id) index, so it walked the index from the newest row and filtered; a deep
    // page cost O(rows newer than before_id) (34× the first page at 100 k credentials, `cargo
    // xtask bench`). With `id < ?` alone the search starts at `before_id`, and every page costs
    // the same whatever the total (docs/api/README.md, lists and paging).
    let table = R::TABLE;
    let from = if narrow {
        format!("{table} NOT INDEXED")
    } else {
        table.to_owned()
    };
    let (scoped, values) = scope.filter::<R>(1);
    let (paged, page_values) = page_filter(dialect, table, "", R::SEARCH, page, values.len() + 1);
    // The limit is a number of ours (validated), written into the statement.
    let sql = format!(
        "SELECT {} FROM {from} WHERE {scoped}{paged} ORDER BY id {} LIMIT {}",
        R::select(),
        page.direction(),
        u64::from(page.limit) + 1
    );
    let values = values.into_iter().map(str::to_owned).chain(page_values);
    (sql, values.collect())
}

/// The `SELECT` of the row `id` in `scope`, and its parameters in order.
fn fetch_statement<'a, R: Record>(scope: Scope<'a>, id: &'a str) -> (String, Vec<&'a str>) {
    let (filter, mut values) = scope.filter::<R>(1);
    let sql = format!(
        "SELECT {} FROM {} WHERE {filter} AND id = ${}",
        R::select(),
        R::TABLE,
        values.len() + 1
    );
    values.push(id);
    (sql, values)
}

pub(super) fn not_found<R: Record>(id: &str) -> Error {
    Error::NotFound {
        kind: R::KIND,
        id: id.to_owned(),
    }
}

/// Whether `table` (a constant, never input) has the row `id` in the account.
pub(super) async fn exists(
    conn: &mut AnyConnection,
    table: &'static str,
    account_id: &str,
    id: &str,
) -> Result<bool> {
    let sql = format!("SELECT id FROM {table} WHERE account_id = $1 AND id = $2");
    let found: Option<String> = sqlx::query_scalar(&sql)
        .bind(account_id)
        .bind(id)
        .fetch_optional(conn)
        .await?;
    Ok(found.is_some())
}

/// A row a write refers to (by the request field `field`) must be one of the account's:
/// [`Error::Missing`] otherwise. Called inside the write's transaction, so a concurrent delete
/// is a 400 on the field, never a foreign-key failure (500).
pub(super) async fn require<R: Record>(
    conn: &mut AnyConnection,
    account_id: &str,
    id: &str,
    field: String,
) -> Result<()> {
    if exists(conn, R::TABLE, account_id, id).await? {
        return Ok(());
    }
    Err(Error::Missing {
        field,
        kind: R::KIND,
        id: id.to_owned(),
    })
}

/// Stores `row` in the account, in `exec` (a pooled connection or the caller's transaction),
/// with `extra` columns that are not fields of the row (such as a secret's hash).
pub(super) async fn insert<R: Record>(
    exec: &mut Exec<'_>,
    account_id: &str,
    row: &R,
    extra: Vec<(&'static str, Value)>,
) -> Result<()> {
    let insert = insert_statement(account_id, row, extra);
    exec.execute(&insert.sql, &insert.values).await?;
    Ok(())
}

/// The statement of [`insert`] and its values, numbered from `$1`.
pub(super) fn insert_statement<R: Record>(
    account_id: &str,
    row: &R,
    extra: Vec<(&'static str, Value)>,
) -> Change {
    let columns: Vec<(&str, Value)> = [("account_id", Value::Text(account_id.to_owned()))]
        .into_iter()
        .chain(row.columns())
        .chain(extra)
        .collect();
    let table = R::TABLE;
    let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
    let marks = super::database::placeholders(1, names.len());
    let sql = format!(
        "INSERT INTO {table} ({}) VALUES ({marks})",
        names.join(", ")
    );
    Change {
        table: R::TABLE,
        sql,
        values: columns.into_iter().map(|(_, value)| value).collect(),
    }
}

/// The columns a partial update writes: each given a value is set, the others kept as they are.
#[derive(Debug, Clone)]
pub(super) struct Changes(Vec<(&'static str, Option<Value>)>);

impl Changes {
    /// The description and metadata every resource has.
    pub(super) fn new(description: Option<String>, metadata: Option<String>) -> Changes {
        Changes(vec![
            ("description", description.map(Value::Text)),
            ("metadata", metadata.map(Value::Text)),
        ])
    }

    /// And a JSON column.
    pub(super) fn json<T: serde::Serialize + ?Sized>(
        mut self,
        column: &'static str,
        value: Option<&T>,
    ) -> Changes {
        self.0
            .push((column, value.map(|v| Value::Text(to_json(v)))));
        self
    }
}

/// Applies `changes` to the row `id` of the account, in `exec` (a pooled connection or the
/// caller's transaction). Returns the number of rows changed (0: no such row).
pub(super) async fn update<R: Record>(
    exec: &mut Exec<'_>,
    account_id: &str,
    id: &str,
    changes: Changes,
) -> Result<u64> {
    let (sql, values) = update_statement::<R>(account_id, id, changes, "");
    exec.execute(&sql, &values).await
}

/// Applies `changes` to the row `id` of the account, in `exec`, and reads the row as it is now
/// in the same statement ([`Error::NotFound`] if there is none): on PostgreSQL one round trip
/// where an update and a read after it were two, inside the write turn that every writer waits
/// for (docs/database.md, writes).
pub(super) async fn update_returning<R: Record>(
    exec: &mut Exec<'_>,
    account_id: &str,
    id: &str,
    changes: Changes,
) -> Result<R> {
    let returning = format!(" RETURNING {}", R::select());
    let (sql, values) = update_statement::<R>(account_id, id, changes, &returning);
    let found = exec.fetch(&sql, &values, |row| R::decode(row)).await?;
    completed(exec, found, id).await
}

/// The `UPDATE` of `changes` to the row `id` of the account, followed by `tail`, and its
/// parameters in order.
fn update_statement<R: Record>(
    account_id: &str,
    id: &str,
    Changes(columns): Changes,
    tail: &str,
) -> (String, Vec<Value>) {
    let sets: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, (name, _))| format!("{name} = COALESCE(${}, {name})", i + 1))
        .collect();
    let n = columns.len();
    let sql = format!(
        "UPDATE {} SET {} WHERE account_id = ${} AND id = ${}{tail}",
        R::TABLE,
        sets.join(", "),
        n + 1,
        n + 2
    );
    let values: Vec<Value> = columns
        .into_iter()
        .map(|(_, value)| value.unwrap_or(Value::Null))
        .chain([account_id.into(), id.into()])
        .collect();
    (sql, values)
}
