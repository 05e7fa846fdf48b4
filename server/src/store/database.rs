//! Where the database is and which SQL it speaks: [`DatabaseUrl`] (as `--database` gives it,
//! never showing a password) and [`Dialect`], the one place naming what differs between SQLite
//! and PostgreSQL in the store's statements.

use std::path::{Path, PathBuf};

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
    /// The statement that begins a write transaction: SQLite's `BEGIN IMMEDIATE` takes the
    /// write lock at once; PostgreSQL's lock is taken next ([`super::lock_writes`]).
    pub(super) fn begin_write(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }

    /// The database's clock, in Unix ms, as an SQL expression: cluster leases are written and
    /// compared on it, so nodes whose clocks differ still agree on when a lease ends.
    pub(super) fn now_ms(self) -> &'static str {
        match self {
            Dialect::Sqlite => "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
            Dialect::Postgres => "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
        }
    }

    /// The aggregate joining the text `expression` of a group's rows with `,`: NULL for none.
    pub(super) fn join_texts(self, expression: &str) -> String {
        match self {
            Dialect::Sqlite => format!("group_concat({expression}, ',')"),
            Dialect::Postgres => format!("string_agg({expression}, ',')"),
        }
    }

    /// A table of the elements of the JSON array (of strings) in `column`, as a column `value`.
    pub(super) fn json_array_elements(self, column: &str) -> String {
        match self {
            Dialect::Sqlite => format!("json_each({column})"),
            Dialect::Postgres => {
                format!("jsonb_array_elements_text({column}::jsonb) AS elements(value)")
            }
        }
    }
}

/// `$first, $first+1, …`: `n` numbered parameters (the one placeholder style both databases
/// read).
pub(super) fn placeholders(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl DatabaseUrl {
    pub fn parse(url: &str) -> anyhow::Result<DatabaseUrl> {
        // An empty `TUNNEL_DATABASE=` in an environment file, most likely.
        anyhow::ensure!(
            !url.trim().is_empty(),
            "the database URL is empty (--database or TUNNEL_DATABASE); use sqlite://data/tunnel.db, \
             sqlite::memory: or postgres://user:password@host:port/database"
        );
        if url == "sqlite::memory:" || url == "sqlite://:memory:" {
            return Ok(DatabaseUrl::SqliteMemory);
        }
        if let Some(path) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            let path = path.split('?').next().unwrap_or_default();
            anyhow::ensure!(!path.is_empty(), "the database URL `{url}` names no file");
            // `sqlite::memory:?…` is the in-memory one too, not a file named `:memory:`.
            if path == ":memory:" {
                return Ok(DatabaseUrl::SqliteMemory);
            }
            anyhow::ensure!(
                !Path::new(path).is_dir(),
                "the database URL `{url}` names a directory, not a database file"
            );
            return Ok(DatabaseUrl::SqliteFile(PathBuf::from(path)));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            // The usual cause: a password holding a character that ends its part of the URL,
            // which the parser then reads as a port or a path.
            let parsed = url::Url::parse(url).map_err(|e| {
                anyhow::anyhow!(
                    "the database URL `{}` is not a URL: {e} (a user name or password holding \
                     `/`, `?` or `#` must be percent-encoded: `/` as `%2F`, `?` as `%3F`, `#` as \
                     `%23`)",
                    redact(url)
                )
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

    /// A database URL as given (parsed or not) as it may be shown: a password replaced by `***`,
    /// and of text that is not a URL only its scheme.
    pub fn redact_text(url: &str) -> String {
        redact(url)
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            DatabaseUrl::Postgres(_) => Dialect::Postgres,
            _ => Dialect::Sqlite,
        }
    }

    /// Creates [`DatabaseUrl::data_dir`] if it is missing, and the database file and its search
    /// file, empty, if they are missing (nothing to do without a file). Created here rather
    /// than by SQLite so that they are readable by the server's user only (0700, 0600): SQLite
    /// would make them 0644 under the usual umask, and they hold the audit log and hashes of
    /// every secret. SQLite gives its WAL and shared-memory files the mode of the database
    /// file. What exists is left as it is: its mode is the operator's choice.
    pub(super) fn create_data_dir(&self) -> anyhow::Result<()> {
        use anyhow::Context as _;
        let DatabaseUrl::SqliteFile(path) = self else {
            return Ok(());
        };
        if let Some(dir) = self.data_dir() {
            private_dir(&dir)
                .with_context(|| format!("cannot create the data directory {}", dir.display()))?;
        }
        for file in [path.clone(), super::search_index::file_of(path)] {
            match private_file(&file) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    return Err(e).with_context(|| format!("cannot create {}", file.display()));
                }
                _ => {}
            }
        }
        Ok(())
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

/// Creates the directory `dir` (and its missing parents) readable by its owner only.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Creates the file `path`, which must not exist, readable and writable by its owner only: the
/// database's files, the lock file and the server key (`keys.rs`).
pub fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// A SQLite database file claimed by the server process serving it ([`DatabaseUrl::claim`]):
/// a lock on `<file>-server.lock`, held until this is dropped and released by the system when
/// the process ends, however it ends.
#[derive(Debug)]
pub struct ServingClaim {
    _lock: std::fs::File,
}

impl DatabaseUrl {
    /// Claims a SQLite file for this server process, or says which file another running server
    /// holds. A SQLite database is served by one process (docs/cluster.md): a server starting
    /// on one ends every session of the nodes listed there, as those of its own previous run,
    /// so a second server on the same file would take the sessions of the first away (and the
    /// first would log that its lease ran out). PostgreSQL and in-memory databases need no
    /// claim. The operator commands do not claim: they may run beside the server.
    pub fn claim(&self) -> anyhow::Result<Option<ServingClaim>> {
        use anyhow::Context as _;
        let DatabaseUrl::SqliteFile(path) = self else {
            return Ok(None);
        };
        self.create_data_dir()?;
        let mut name = path.as_os_str().to_owned();
        name.push("-server.lock");
        let lock_path = PathBuf::from(name);
        let lock = private_file(&lock_path)
            .or_else(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => {
                    std::fs::OpenOptions::new().write(true).open(&lock_path)
                }
                _ => Err(e),
            })
            .with_context(|| format!("cannot open the lock file {}", lock_path.display()))?;
        match lock.try_lock() {
            Ok(()) => Ok(Some(ServingClaim { _lock: lock })),
            Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
                "the database {} is served by another tunnel-server process already (it holds \
                 {}): a SQLite database is served by one process at a time. Stop that server \
                 first; for several servers on one database, use PostgreSQL",
                path.display(),
                lock_path.display()
            ),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("cannot lock the lock file {}", lock_path.display()))
            }
        }
    }
}

/// `url` with its password, if any, replaced by `***` (for errors and logs).
fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            // The PostgreSQL driver also reads a password from the query (`?password=`).
            if parsed.query_pairs().any(|(name, _)| name == "password") {
                let pairs: Vec<(String, String)> = parsed
                    .query_pairs()
                    .map(|(name, value)| {
                        let value = if name == "password" {
                            "***".into()
                        } else {
                            value
                        };
                        (name.into_owned(), value.into_owned())
                    })
                    .collect();
                parsed.query_pairs_mut().clear().extend_pairs(pairs);
            }
            parsed.to_string()
        }
        // Not a URL: show only its scheme, it may be a password typed in the wrong place.
        Err(_) => format!("{}…", url.split(':').next().unwrap_or_default()),
    }
}

/// `path` as the path of a `file:` URI (what sqlx's SQLite driver and `ATTACH` read): `%`, `?`
/// and `#` percent-encoded, the rest as it is.
pub(super) fn uri_path(path: &Path) -> String {
    path.display()
        .to_string()
        .chars()
        .map(|c| match c {
            '%' | '?' | '#' => format!("%{:02X}", c as u32),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_name_a_file_or_memory() {
        for memory in [
            "sqlite::memory:",
            "sqlite://:memory:",
            "sqlite::memory:?cache=shared",
        ] {
            assert_eq!(
                DatabaseUrl::parse(memory).unwrap(),
                DatabaseUrl::SqliteMemory
            );
        }
        let dir = std::env::temp_dir();
        let said = DatabaseUrl::parse(&format!("sqlite://{}", dir.display()))
            .unwrap_err()
            .to_string();
        assert!(said.contains("names a directory"), "{said}");
        for empty in ["", "  "] {
            let said = DatabaseUrl::parse(empty).unwrap_err().to_string();
            assert!(said.contains("the database URL is empty"), "{said}");
        }
    }

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
        let query = DatabaseUrl::parse("postgres://tunnel@db/t?sslmode=require&password=s3cret")
            .unwrap()
            .redacted();
        assert!(
            !query.contains("s3cret") && query.contains("sslmode=require"),
            "{query}"
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
