//! How a resource table's rows are declared: [`record!`] writes a row type (the fields every
//! resource row has, then the table's own) and its [`super::Record`], each field read and
//! written by a [`Column`] (text, JSON, or data of another table), so an area's module writes
//! neither its decoding nor its `INSERT`. A row is read through [`Fields`], whichever driver
//! fetched it (sqlx's `Any`, rusqlite's for `super::direct`, or sqlx's PostgreSQL driver for
//! `super::pg_reads`'s row reads).

use super::Result;
use sqlx::Row as _;
use sqlx::any::AnyRow;

/// The values of one fetched row, by column name: what [`Column::decode`] reads.
pub trait Fields {
    /// A text column; `None` for NULL.
    fn text(&self, name: &str) -> Result<Option<String>>;
    /// An integer column; `None` for NULL.
    fn integer(&self, name: &str) -> Result<Option<i64>>;

    /// A text column that is never NULL.
    fn required_text(&self, name: &str) -> Result<String> {
        self.text(name)?.ok_or_else(|| {
            sqlx::Error::Decode(format!("the column `{name}` is NULL").into()).into()
        })
    }
}

impl Fields for AnyRow {
    fn text(&self, name: &str) -> Result<Option<String>> {
        Ok(self.try_get(name)?)
    }

    fn integer(&self, name: &str) -> Result<Option<i64>> {
        Ok(self.try_get(name)?)
    }
}

/// A row of sqlx's PostgreSQL driver, its columns found by position first, as [`SqliteRow`]
/// does: the row types read their fields in the order their statements select them, so the
/// column after the last one asked for is tried first (its name compared exactly, as
/// PostgreSQL's names are), before sqlx's lookup by name (a hash of the name). Unlike
/// [`SqliteRow`], no care is taken over two columns of one name: none of the statements read
/// this way has them (`record!` select lists, `SELECT *` of the audit log).
pub(super) struct PgFields<'a> {
    row: &'a sqlx::postgres::PgRow,
    next: std::cell::Cell<usize>,
}

impl<'a> PgFields<'a> {
    pub(super) fn new(row: &'a sqlx::postgres::PgRow) -> PgFields<'a> {
        PgFields {
            row,
            next: std::cell::Cell::new(0),
        }
    }

    fn index(&self, name: &str) -> Result<usize> {
        use sqlx::Column as _;
        let next = self.next.get();
        let index = match self.row.columns().get(next) {
            Some(column) if column.name() == name => next,
            _ => sqlx::ColumnIndex::index(&name, self.row)?,
        };
        self.next.set(index + 1);
        Ok(index)
    }
}

impl Fields for PgFields<'_> {
    fn text(&self, name: &str) -> Result<Option<String>> {
        let text: Option<&str> = self.row.try_get(self.index(name)?)?;
        Ok(text.map(str::to_owned))
    }

    fn integer(&self, name: &str) -> Result<Option<i64>> {
        Ok(self.row.try_get(self.index(name)?)?)
    }
}

/// A statement's column names, taken once per statement (`super::direct::rows`): rusqlite finds
/// a column by name by asking SQLite for each column's name in turn (a C string, its length
/// measured) until one matches, for every field of every row, which was about a tenth of the
/// server's CPU for a list page of 100 (BENCHMARKS.md, closing note).
pub(super) struct ColumnNames {
    names: Vec<String>,
    /// Whether no two columns share a name (ASCII case-insensitively); else a name means the
    /// first column of that name, as in rusqlite, and [`SqliteRow`] takes no shortcut.
    distinct: bool,
}

impl ColumnNames {
    pub(super) fn of(statement: &rusqlite::Statement<'_>) -> ColumnNames {
        let names: Vec<String> = statement
            .column_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let distinct = names.iter().enumerate().all(|(i, name)| {
            !names[..i]
                .iter()
                .any(|earlier| earlier.eq_ignore_ascii_case(name))
        });
        ColumnNames { names, distinct }
    }
}

/// A row of rusqlite read through its statement's [`ColumnNames`].
pub(super) struct SqliteRow<'a> {
    row: &'a rusqlite::Row<'a>,
    columns: &'a ColumnNames,
    /// The column after the last one asked for: a row type reads its fields in the order its
    /// statement selects them, so this is usually the next one asked for.
    next: std::cell::Cell<usize>,
}

impl<'a> SqliteRow<'a> {
    pub(super) fn new(row: &'a rusqlite::Row<'a>, columns: &'a ColumnNames) -> SqliteRow<'a> {
        SqliteRow {
            row,
            columns,
            next: std::cell::Cell::new(0),
        }
    }

    /// The index of the column `name`, as rusqlite finds it: the first column of that name,
    /// ASCII case-insensitively.
    fn index(&self, name: &str) -> Result<usize> {
        let names = &self.columns.names;
        // Byte for byte first: the row types ask with the statement's own spelling, and that
        // comparison is a `memcmp`, where the case-insensitive one goes a byte at a time.
        let matches = |i: usize| {
            names
                .get(i)
                .is_some_and(|n| n == name || n.eq_ignore_ascii_case(name))
        };
        let next = self.next.get();
        let index = if self.columns.distinct && matches(next) {
            next
        } else {
            (0..names.len())
                .find(|&i| matches(i))
                .ok_or_else(|| rusqlite::Error::InvalidColumnName(name.to_owned()))?
        };
        self.next.set(index + 1);
        Ok(index)
    }
}

impl Fields for SqliteRow<'_> {
    fn text(&self, name: &str) -> Result<Option<String>> {
        Ok(self.row.get(self.index(name)?)?)
    }

    fn integer(&self, name: &str) -> Result<Option<i64>> {
        Ok(self.row.get(self.index(name)?)?)
    }
}

/// A value a statement binds (`super::exec`): what an `INSERT` or `UPDATE` writes, or a
/// parameter of a read.
#[derive(Debug, Clone)]
pub enum Value {
    Text(String),
    Blob(Vec<u8>),
    Integer(i64),
    Null,
}

impl From<&str> for Value {
    fn from(text: &str) -> Value {
        Value::Text(text.to_owned())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Value {
        Value::Text(text)
    }
}

impl From<Option<&str>> for Value {
    fn from(text: Option<&str>) -> Value {
        text.map_or(Value::Null, Value::from)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Integer(n)
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Text(text) => ValueRef::Text(text.as_bytes()),
            Value::Blob(bytes) => ValueRef::Blob(bytes),
            Value::Integer(n) => ValueRef::Integer(*n),
            Value::Null => ValueRef::Null,
        }))
    }
}

/// The columns a [`Column`] reads, so a statement selects those and no others (a `SELECT *`
/// copied every column of every row out of the database, secret hashes included).
#[derive(Debug, Clone, Copy)]
pub enum Reads {
    /// The column named like the field.
    Field,
    /// These columns, whatever the field's name.
    Columns(&'static [&'static str]),
    /// None: the value comes from another table.
    Nothing,
}

/// How a field of a row type (declared with [`record!`]) is read from its column and written to
/// it.
pub(super) trait Column<T> {
    /// The columns [`Column::decode`] reads.
    const READS: Reads = Reads::Field;
    fn decode(row: &dyn Fields, name: &str) -> Result<T>;
    /// What the row's `INSERT` writes; `None` for what is set later or lives in another table.
    fn encode(value: &T) -> Option<Value>;
}

/// A text column.
#[derive(Debug)]
pub(super) struct Text;

impl Column<String> for Text {
    fn decode(row: &dyn Fields, name: &str) -> Result<String> {
        row.required_text(name)
    }

    fn encode(value: &String) -> Option<Value> {
        Some(Value::Text(value.clone()))
    }
}

/// Data of another table, which the row type's `complete` fills in after decoding.
#[derive(Debug)]
pub(super) struct Joined;

impl<T: Default> Column<T> for Joined {
    const READS: Reads = Reads::Nothing;
    fn decode(_: &dyn Fields, _: &str) -> Result<T> {
        Ok(T::default())
    }

    fn encode(_: &T) -> Option<Value> {
        None
    }
}

/// A JSON column (arrays, objects).
#[derive(Debug)]
pub(super) struct Json;

impl<T: serde::Serialize + serde::de::DeserializeOwned> Column<T> for Json {
    fn decode(row: &dyn Fields, name: &str) -> Result<T> {
        let text = row.required_text(name)?;
        serde_json::from_str(&text).map_err(|e| sqlx::Error::Decode(Box::new(e)).into())
    }

    fn encode(value: &T) -> Option<Value> {
        Some(Value::Text(to_json(value)))
    }
}

/// Declares the row type of a resource table and its [`Record`]: the fields every resource row
/// has (`id`, `created_at`, `description`, `metadata`), then the table's own, each with the
/// [`Column`] that reads and writes it, and a `new` from the `(id, created_at)` of
/// `Store::mint`: an area's module writes neither its decoding nor its `INSERT`.
macro_rules! record {
    (
        $(#[$attr:meta])*
        pub struct $name:ident {
            table: $table:literal,
            kind: $kind:expr,
            $(used_by: $used:expr,)?
            $(owner: $owner:literal,)?
            search: [$($search:literal),* $(,)?],
            $(complete: $complete:path,)?
            columns: {
                $($(#[$field_attr:meta])* $field:ident: $ty:ty = $column:ty,)*
            }
        }
    ) => {
        $(#[$attr])*
        pub struct $name {
            pub id: String,
            pub created_at: String,
            pub description: String,
            pub metadata: String,
            $($(#[$field_attr])* pub $field: $ty,)*
        }

        impl $name {
            /// A new row: `minted` is the `(id, created_at)` of `Store::mint`.
            pub fn new(
                minted: (String, String),
                description: &str,
                metadata: &str,
                $($field: $ty,)*
            ) -> $name {
                $name {
                    id: minted.0,
                    created_at: minted.1,
                    description: description.to_owned(),
                    metadata: metadata.to_owned(),
                    $($field,)*
                }
            }
        }

        impl $crate::store::records::Record for $name {
            const TABLE: &'static str = $table;
            const KIND: tunnel_core::ids::IdKind = $kind;
            $(const USED_BY: Option<$crate::store::records::UsedBy> = Some($used);)?
            $(const OWNER: Option<&'static str> = Some($owner);)?
            const SEARCH: &'static [&'static str] = &[$($search),*];

            fn decode(row: &dyn $crate::store::columns::Fields) -> $crate::store::Result<$name> {
                use $crate::store::columns::{Column, Text};
                Ok($name {
                    id: Text::decode(row, "id")?,
                    created_at: Text::decode(row, "created_at")?,
                    description: Text::decode(row, "description")?,
                    metadata: Text::decode(row, "metadata")?,
                    $($field: <$column as Column<$ty>>::decode(row, stringify!($field))?,)*
                })
            }

            fn id(&self) -> &str {
                &self.id
            }

            fn select() -> String {
                use $crate::store::columns::{Column, Reads};
                let mut read = vec!["id", "created_at", "description", "metadata"];
                $(match <$column as Column<$ty>>::READS {
                    Reads::Field => read.push(stringify!($field)),
                    Reads::Columns(columns) => read.extend_from_slice(columns),
                    Reads::Nothing => {}
                })*
                read.join(", ")
            }

            fn columns(&self) -> Vec<(&'static str, $crate::store::columns::Value)> {
                use $crate::store::columns::{Column, Value};
                let mut columns = vec![
                    ("id", Value::Text(self.id.clone())),
                    ("created_at", Value::Text(self.created_at.clone())),
                    ("description", Value::Text(self.description.clone())),
                    ("metadata", Value::Text(self.metadata.clone())),
                ];
                $(if let Some(value) = <$column as Column<$ty>>::encode(&self.$field) {
                    columns.push((stringify!($field), value));
                })*
                columns
            }

            // (`stringify!` only to repeat on `$complete`: a table with one completes.)
            $(const COMPLETES: bool = !stringify!($complete).is_empty();)?

            $(fn complete(
                conn: &mut sqlx::AnyConnection,
                rows: Vec<$name>,
            ) -> impl std::future::Future<Output = $crate::store::Result<Vec<$name>>> + Send {
                $complete(conn, rows)
            })?
        }
    };
}
pub(super) use record;

/// The text of a JSON column.
pub(super) fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}
