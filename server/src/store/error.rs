//! The store's one error type. Callers learn what went wrong in the terms of the API's resources
//! (not found, a missing reference, still in use) and never which database is behind the store:
//! its failures are wrapped in the opaque [`DatabaseError`]. `crate::error` maps it to the wire,
//! in one place.

use tunnel_core::ids::IdKind;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No row with this id in the account (another account's row does not exist for the caller).
    #[error("{} `{id}` not found", kind.noun())]
    NotFound { kind: IdKind, id: String },
    /// A write names, by a body id, a resource that does not exist in the account. Checked inside
    /// the write transaction, so a concurrent delete cannot slip between the check and the write.
    #[error("{} `{id}` (field {field}) does not exist", kind.noun())]
    Missing {
        /// The request field naming it, e.g. `backend_id`, `destination_ids[2]`.
        field: String,
        kind: IdKind,
        id: String,
    },
    /// A delete refused because other rows still reference the row; `by` says by what and what
    /// to do, e.g. "used by an event subscription; remove it from the subscription first".
    #[error("{} `{id}` is {by}", kind.noun())]
    InUse {
        kind: IdKind,
        id: String,
        by: &'static str,
        /// What references it (the first ten ids).
        users: Vec<String>,
        /// How many reference it in all.
        total: u64,
    },
    /// The database failed, or holds a row that does not decode: an internal error.
    #[error(transparent)]
    Database(#[from] DatabaseError),
}

/// A failure of the database itself. Opaque on purpose: nothing outside the store needs (or
/// should come to rely on) the database libraries' error types (sqlx's, and rusqlite's for the
/// reads of `store::direct`).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct DatabaseError(Box<dyn std::error::Error + Send + Sync>);

impl DatabaseError {
    /// Whether a row was read but does not decode (a value this build cannot read): the same
    /// at every try, unlike the database being out of reach.
    pub fn is_unreadable_row(&self) -> bool {
        matches!(
            self.0.downcast_ref::<sqlx::Error>(),
            Some(sqlx::Error::Decode(_) | sqlx::Error::ColumnDecode { .. })
        )
    }

    /// Whether the database refused a row naming one that is not there (a foreign key): the
    /// owner of a new credential or API key, removed by `user remove` after the request's
    /// checks (which a running server's key cache lets through for up to 10 s).
    pub fn is_foreign_key_violation(&self) -> bool {
        if let Some(sqlx::Error::Database(e)) = self.0.downcast_ref::<sqlx::Error>() {
            return e.is_foreign_key_violation();
        }
        matches!(
            self.0.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(e, _))
                if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY
        )
    }
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Error {
        Error::Database(DatabaseError(Box::new(e)))
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Error {
        Error::Database(DatabaseError(Box::new(e)))
    }
}

/// The result of store operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The name the reference failures ([`Error::Missing`]) had before the store had one error type;
/// kept so code matching `ReferenceError::Missing { .. }` reads as before.
pub type ReferenceError = Error;
