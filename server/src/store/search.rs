//! Searching a list (`q`, docs/api/README.md, lists and paging): the condition a list statement
//! adds for a search, on each database. What a table's search looks in is its `SEARCH` columns
//! ([`super::Record::SEARCH`], the sessions' [`super::sessions`], the users' [`super::users`]),
//! all listed in [`super::search_index::INDEXED`]:
//! - SQLite: an FTS5 table `<table>_search` with the trigram tokenizer (case-insensitive,
//!   Unicode case folding) in the search file beside the database, kept by the search indexer
//!   off the write's path (`search_index.rs`); a search of 3 characters or more is a phrase
//!   `MATCH` of it, which finds every row whose text holds the search as a substring, plus the
//!   rows changed since the indexer's last pass (`search_changes`, migration 8), which are
//!   checked with `LIKE` instead (ASCII case folding, as a short search).
//! - PostgreSQL: a `pg_trgm` GIN index on `lower(<columns joined by spaces>)`; a search is a
//!   `LIKE '%…%'` of the same expression (ASCII case folding: the columns use the "C" collation).
//!
//! Searches of 1 or 2 characters have no trigram to look up: they are a `LIKE` over the
//! account's rows on both databases, which costs what the account holds.
//!
//! On SQLite a list with a search has two plans, and SQLite cannot tell which is cheaper because
//! it knows nothing of how many rows a `MATCH` finds. Left alone it walks the account's
//! `(account_id, id)` index in the page's order and checks each row against the matches: right
//! for a broad search (the page fills after a few rows), but a search matching one row in a
//! million walked the whole account (220 ms at 1 M credentials). So [`narrow`] first counts the
//! matches, up to [`NARROW`]: fewer, and the list reads them by rowid and sorts them (`NOT
//! INDEXED` keeps SQLite off the account index), which costs what they are, not what the account
//! holds.

use super::Dialect;
use sqlx::AnyConnection;

/// The shortest search the trigram indexes answer.
const TRIGRAM: usize = 3;

/// Below this many matches a SQLite search reads its matches rather than the account's rows.
/// Reading (and sorting) `n` matches costs about what walking the index costs when one row in
/// `n` matches and the page needs 101 of them: the two meet near the square root of 100 × the
/// rows held, about 10 000 at 1 M.
const NARROW: i64 = 10_000;

/// The condition (to `AND` into a statement on `table`, whose columns are qualified with
/// `qualifier`, e.g. `s.`) finding the rows whose `columns` hold `q`, with its parameters
/// numbered from `param` in order of appearance, and the values to bind to them.
pub(super) fn condition(
    dialect: Dialect,
    table: &str,
    qualifier: &str,
    columns: &[&str],
    param: usize,
    q: &str,
) -> (String, Vec<String>) {
    match dialect {
        // The index's matches and the rows changed since its last pass are the candidates; a
        // changed row must hold the search as it is now (its indexed text may be older).
        Dialect::Sqlite if q.chars().count() >= TRIGRAM => {
            let pending = pending(table);
            let (like, pattern) = like(qualifier, columns, param + 1, q);
            (
                format!(
                    "{qualifier}rowid IN (SELECT rowid FROM search.{table}_search WHERE \
                     {table}_search MATCH ${param} UNION ALL {pending}) \
                     AND ({qualifier}rowid NOT IN ({pending}) OR ({like}))"
                ),
                vec![phrase(q), pattern],
            )
        }
        Dialect::Sqlite | Dialect::Postgres => {
            let (like, pattern) = like(qualifier, columns, param, q);
            (like, vec![pattern])
        }
    }
}

/// The rowids of `table`'s rows changed since the search indexer's last pass, on SQLite.
fn pending(table: &str) -> String {
    format!(
        "SELECT row FROM main.search_changes WHERE tbl = '{table}' \
         AND seq > (SELECT done FROM search.search_progress)"
    )
}

/// The `LIKE` condition finding the rows whose `columns` hold `q`, with its one parameter
/// numbered `param`, and the pattern to bind to it. SQLite's `lower` folds ASCII only; the index's
/// folding covers the rest for longer searches. The joined text is what PostgreSQL's index
/// holds; a search found there may span two fields (an id ending in "a", the space, a name), so
/// one field must hold it.
fn like(qualifier: &str, columns: &[&str], param: usize, q: &str) -> (String, String) {
    let text = expression(qualifier, columns);
    let like = |text: &str| format!("lower({text}) LIKE ${param} ESCAPE '\\'");
    let fields: Vec<String> = columns
        .iter()
        .map(|c| like(&format!("{qualifier}{c}")))
        .collect();
    (
        format!("{} AND ({})", like(&text), fields.join(" OR ")),
        format!("%{}%", escape_like(&q.to_ascii_lowercase())),
    )
}

/// Whether a list of `table` with the search `q` should read the search's matches instead of the
/// account's rows: on SQLite, a search the trigram index answers with fewer than [`NARROW`]
/// candidates (of every account: the index is shared), counting the rows changed since its last
/// pass. Never on PostgreSQL, whose planner estimates a
/// trigram search's rows itself.
pub(super) async fn narrow(
    conn: &mut AnyConnection,
    dialect: Dialect,
    table: &str,
    q: &str,
) -> sqlx::Result<bool> {
    if dialect != Dialect::Sqlite || q.chars().count() < TRIGRAM {
        return Ok(false);
    }
    let sql = format!(
        "SELECT count(*) FROM (SELECT rowid FROM search.{table}_search WHERE {table}_search \
         MATCH $1 UNION ALL {} LIMIT {NARROW})",
        pending(table)
    );
    let found: i64 = sqlx::query_scalar(&sql)
        .bind(phrase(q))
        .fetch_one(conn)
        .await?;
    Ok(found < NARROW)
}

/// `q` as one FTS5 phrase: its trigrams in order, so the whole text as a substring.
fn phrase(q: &str) -> String {
    format!("\"{}\"", q.replace('"', "\"\""))
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

    #[test]
    fn searches_are_literal_text() {
        let (sql, values) = condition(Dialect::Sqlite, "t", "", &["id"], 3, r#"a"b c"#);
        assert!(sql.contains("t_search MATCH $3"), "{sql}");
        assert!(sql.contains("lower(id) LIKE $4"), "{sql}");
        assert_eq!(values, [r#""a""b c""#, r#"%a"b c%"#]);
        let (sql, values) = condition(Dialect::Sqlite, "t", "s.", &["id", "x"], 2, "5%");
        assert_eq!(
            sql,
            r"lower(s.id || ' ' || s.x) LIKE $2 ESCAPE '\' AND (lower(s.id) LIKE $2 ESCAPE '\' OR lower(s.x) LIKE $2 ESCAPE '\')"
        );
        assert_eq!(values, [r"%5\%%"]);
        let (_, values) = condition(Dialect::Postgres, "t", "", &["id"], 1, r"A_b\");
        assert_eq!(values, [r"%a\_b\\%"]);
    }
}
