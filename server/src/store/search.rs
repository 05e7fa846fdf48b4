//! Searching a list (`q`, docs/api/README.md, lists and paging): the condition a list statement
//! adds for a search, on each database. What a table's search looks in is its `SEARCH` columns
//! ([`super::Record::SEARCH`], the sessions' [`super::sessions`]); migration 6 indexes exactly
//! those (a test below checks that the two agree):
//! - SQLite: an FTS5 table `<table>_search` with the trigram tokenizer (case-insensitive,
//!   Unicode case folding), kept by triggers; a search of 3 characters or more is a phrase
//!   `MATCH` of it, which finds every row whose text holds the search as a substring.
//! - PostgreSQL: a `pg_trgm` GIN index on `lower(<columns joined by spaces>)`; a search is a
//!   `LIKE '%…%'` of the same expression (ASCII case folding: the columns use the "C" collation).
//!
//! Searches of 1 or 2 characters have no trigram to look up: they are a `LIKE` over the
//! account's rows on both databases, which costs what the account holds.

use super::Dialect;

/// The shortest search the trigram indexes answer.
const TRIGRAM: usize = 3;

/// The condition (to `AND` into a statement on `table`, whose columns are qualified with
/// `qualifier`, e.g. `s.`) finding the rows whose `columns` hold `q`, with its one parameter
/// numbered `param`, and the value to bind to it.
pub(super) fn condition(
    dialect: Dialect,
    table: &str,
    qualifier: &str,
    columns: &[&str],
    param: usize,
    q: &str,
) -> (String, String) {
    let text = expression(qualifier, columns);
    match dialect {
        Dialect::Sqlite if q.chars().count() >= TRIGRAM => (
            format!(
                "{qualifier}rowid IN (SELECT rowid FROM {table}_search WHERE {table}_search MATCH ${param})"
            ),
            // One phrase: its trigrams in order, so the whole text as a substring.
            format!("\"{}\"", q.replace('"', "\"\"")),
        ),
        // SQLite's `lower` folds ASCII only; the index's folding covers the rest for longer
        // searches.
        Dialect::Sqlite | Dialect::Postgres => (
            format!("lower({text}) LIKE ${param} ESCAPE '\\'"),
            format!("%{}%", escape_like(&q.to_ascii_lowercase())),
        ),
    }
}

/// `c1 || ' ' || c2 || …`: the text a search looks in, as migration 6 indexes it.
pub(super) fn expression(qualifier: &str, columns: &[&str]) -> String {
    columns
        .iter()
        .map(|c| format!("{qualifier}{c}"))
        .collect::<Vec<_>>()
        .join(" || ' ' || ")
}

/// `q` as a literal inside a `LIKE` pattern: `%`, `_` and the escape character escaped.
fn escape_like(q: &str) -> String {
    let mut out = String::with_capacity(q.len());
    for c in q.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Record;
    use crate::store::{
        ApiKeyRow, BackendRow, CredentialRow, DestinationRow, SshCaRow, SubscriptionRow, TlsEdgeRow,
    };

    const SQLITE: &str = include_str!("../../migrations/sqlite/0006_search.sql");
    const POSTGRES: &str = include_str!("../../migrations/postgres/0006_search.sql");

    fn indexed(table: &str, columns: &[&str]) {
        let list = columns.join(", ");
        assert!(
            SQLITE.contains(&format!(
                "CREATE VIRTUAL TABLE {table}_search USING fts5({list}, content='{table}'"
            )),
            "the SQLite index of {table} is on {list}"
        );
        assert!(
            POSTGRES.contains(&format!(
                "ON {table} USING gin (lower({}) gin_trgm_ops)",
                expression("", columns)
            )),
            "the PostgreSQL index of {table} is on its expression"
        );
    }

    #[test]
    fn every_searchable_table_is_indexed_on_what_its_search_reads() {
        fn of<R: Record>() {
            indexed(R::TABLE, R::SEARCH);
        }
        of::<CredentialRow>();
        of::<ApiKeyRow>();
        of::<SshCaRow>();
        of::<BackendRow>();
        of::<TlsEdgeRow>();
        of::<DestinationRow>();
        of::<SubscriptionRow>();
        indexed("tunnel_sessions", crate::store::sessions::SEARCH);
    }

    #[test]
    fn searches_are_literal_text() {
        let (sql, value) = condition(Dialect::Sqlite, "t", "", &["id"], 3, r#"a"b c"#);
        assert!(sql.contains("t_search MATCH $3"), "{sql}");
        assert_eq!(value, r#""a""b c""#);
        let (sql, value) = condition(Dialect::Sqlite, "t", "s.", &["id", "x"], 2, "5%");
        assert_eq!(sql, r"lower(s.id || ' ' || s.x) LIKE $2 ESCAPE '\'");
        assert_eq!(value, r"%5\%%");
        let (_, value) = condition(Dialect::Postgres, "t", "", &["id"], 1, r"A_b\");
        assert_eq!(value, r"%a\_b\\%");
    }
}
