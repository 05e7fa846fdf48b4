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

/// The pending-list limit (kB) of PostgreSQL's trigram indexes, set by migration 9: an insert
/// that finds the list full moves it into the index while the writes queued behind it wait, so
/// the list is kept small (docs/database.md, search).
pub(super) const PENDING_LIST_KB: u32 = 256;

/// The limit during a bulk load (PostgreSQL's default): a load waits on nobody, and fewer,
/// larger moves cost less in all (each does work per trigram).
const BULK_PENDING_LIST_KB: u32 = 4096;

/// On PostgreSQL, inside the bulk load's transaction `conn`, the pending-list limit of the
/// trigram indexes of `tables` (those of [`super::search_index::INDEXED`]; others are skipped):
/// raised for the load when `loading`, else set back. The load sets it back before it commits,
/// so no other transaction ever sees it raised; one rolled back undoes both. Nothing on SQLite.
pub(super) async fn bulk_pending_lists(
    conn: &mut AnyConnection,
    dialect: Dialect,
    tables: &[&str],
    loading: bool,
) -> sqlx::Result<()> {
    use sqlx::Executor as _;
    if dialect != Dialect::Postgres {
        return Ok(());
    }
    let kb = if loading {
        BULK_PENDING_LIST_KB
    } else {
        PENDING_LIST_KB
    };
    let statements: Vec<String> = tables
        .iter()
        .filter(|t| super::search_index::INDEXED.iter().any(|(i, _)| i == *t))
        .map(|t| format!("ALTER INDEX {t}_search SET (gin_pending_list_limit = {kb})"))
        .collect();
    if !statements.is_empty() {
        conn.execute(statements.join("; ").as_str()).await?;
    }
    Ok(())
}

/// Below this many matches a SQLite search reads its matches rather than the account's rows.
/// Reading (and sorting) `n` matches costs about what walking the index costs when one row in
/// `n` matches and the page needs 101 of them: the two meet near the square root of 100 × the
/// rows held, about 10 000 at 1 M.
const NARROW: i64 = 10_000;

/// The column of labels: a JSON object of strings, which the API and the console show as
/// `key=value`.
const LABELS: &str = "labels";

/// A text a search looks for, in every column it searches or in one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Form {
    pub(super) text: String,
    pub(super) column: Option<&'static str>,
}

/// The texts a search of `columns` for `q` looks for, any of them a match: `q` in every
/// column, and when the columns hold [`LABELS`] and `q` has one `=`, also `q` as the stored
/// JSON holds a label, `key":"value`, in that column alone: `env=prod` finds the backend
/// labelled `{"env": "prod"}` (a label has no `=` of its own).
pub(super) fn forms(q: &str, columns: &[&str]) -> Vec<Form> {
    let mut forms = vec![Form {
        text: q.to_owned(),
        column: None,
    }];
    if columns.contains(&LABELS)
        && let Some((key, value)) = q.split_once('=')
        && !value.contains('=')
    {
        // The inside of each JSON string: what serde writes between the quotes.
        let inner = |text: &str| {
            let quoted = serde_json::to_string(text).unwrap_or_default();
            quoted[1..quoted.len() - 1].to_owned()
        };
        forms.push(Form {
            text: format!("{}\":\"{}", inner(key), inner(value)),
            column: Some(LABELS),
        });
    }
    forms
}

/// The condition (to `AND` into a statement on `table`, whose columns are qualified with
/// `qualifier`, e.g. `s.`) finding the rows whose `columns` hold one of `forms` (see
/// [`forms`]), with its parameters numbered from `param` in order of appearance, and the values
/// to bind to them.
pub(super) fn condition(
    dialect: Dialect,
    table: &str,
    qualifier: &str,
    columns: &[&str],
    param: usize,
    forms: &[Form],
) -> (String, Vec<String>) {
    match dialect {
        // The index's matches and the rows changed since its last pass are the candidates; a
        // changed row must hold the search as it is now (its indexed text may be older).
        Dialect::Sqlite if trigrams(forms) => {
            let pending = pending(table);
            let (like, patterns) = likes(qualifier, columns, param + 1, forms);
            (
                format!(
                    "{qualifier}rowid IN (SELECT rowid FROM search.{table}_search WHERE \
                     {table}_search MATCH ${param} UNION ALL {pending}) \
                     AND ({qualifier}rowid NOT IN ({pending}) OR ({like}))"
                ),
                std::iter::once(phrases(forms)).chain(patterns).collect(),
            )
        }
        Dialect::Sqlite | Dialect::Postgres => likes(qualifier, columns, param, forms),
    }
}

/// Whether the trigram index answers every one of `forms`.
fn trigrams(forms: &[Form]) -> bool {
    forms
        .iter()
        .all(|form| form.text.chars().count() >= TRIGRAM)
}

/// [`like`] for each of `forms`, any of them a match, parameters numbered from `param`.
fn likes(qualifier: &str, columns: &[&str], param: usize, forms: &[Form]) -> (String, Vec<String>) {
    let (likes, patterns): (Vec<String>, Vec<String>) = forms
        .iter()
        .enumerate()
        .map(|(i, form)| {
            let within = form.column.as_slice();
            let within = if within.is_empty() { columns } else { within };
            like(qualifier, columns, within, param + i, &form.text)
        })
        .unzip();
    match likes.as_slice() {
        [one] => (one.clone(), patterns),
        _ => (format!("(({}))", likes.join(") OR (")), patterns),
    }
}

/// The rowids of `table`'s rows changed since the search indexer's last pass, on SQLite.
fn pending(table: &str) -> String {
    format!(
        "SELECT row FROM main.search_changes WHERE tbl = '{table}' \
         AND seq > (SELECT done FROM search.search_progress)"
    )
}

/// The `LIKE` condition finding the rows one of whose `within` (some of `columns`) holds `q`,
/// with its one parameter numbered `param`, and the pattern to bind to it. SQLite's `lower`
/// folds ASCII only; the index's folding covers the rest for longer searches. The text of all
/// `columns` joined is what PostgreSQL's index holds; a search found there may span two fields
/// (an id ending in "a", the space, a name), so one field must hold it.
fn like(
    qualifier: &str,
    columns: &[&str],
    within: &[&str],
    param: usize,
    q: &str,
) -> (String, String) {
    let text = expression(qualifier, columns);
    let like = |text: &str| format!("lower({text}) LIKE ${param} ESCAPE '\\'");
    let fields: Vec<String> = within
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
    forms: &[Form],
) -> sqlx::Result<bool> {
    if dialect != Dialect::Sqlite || !trigrams(forms) {
        return Ok(false);
    }
    let sql = format!(
        "SELECT count(*) FROM (SELECT rowid FROM search.{table}_search WHERE {table}_search \
         MATCH $1 UNION ALL {} LIMIT {NARROW})",
        pending(table)
    );
    let found: i64 = sqlx::query_scalar(&sql)
        .bind(phrases(forms))
        .fetch_one(conn)
        .await?;
    Ok(found < NARROW)
}

/// `q` as one FTS5 phrase: its trigrams in order, so the whole text as a substring.
fn phrase(q: &str) -> String {
    format!("\"{}\"", q.replace('"', "\"\""))
}

/// Each of `forms` as a phrase (in its one column, if it has one), any of them a match.
fn phrases(forms: &[Form]) -> String {
    forms
        .iter()
        .map(|form| match form.column {
            Some(column) => format!("{column} : {}", phrase(&form.text)),
            None => phrase(&form.text),
        })
        .collect::<Vec<_>>()
        .join(" OR ")
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
        let one = |q: &str| forms(q, &[]);
        let (sql, values) = condition(Dialect::Sqlite, "t", "", &["id"], 3, &one(r#"a"b c"#));
        assert!(sql.contains("t_search MATCH $3"), "{sql}");
        assert!(sql.contains("lower(id) LIKE $4"), "{sql}");
        assert_eq!(values, [r#""a""b c""#, r#"%a"b c%"#]);
        let (sql, values) = condition(Dialect::Sqlite, "t", "s.", &["id", "x"], 2, &one("5%"));
        assert_eq!(
            sql,
            r"lower(s.id || ' ' || s.x) LIKE $2 ESCAPE '\' AND (lower(s.id) LIKE $2 ESCAPE '\' OR lower(s.x) LIKE $2 ESCAPE '\')"
        );
        assert_eq!(values, [r"%5\%%"]);
        let (_, values) = condition(Dialect::Postgres, "t", "", &["id"], 1, &one(r"A_b\"));
        assert_eq!(values, [r"%a\_b\\%"]);
    }

    #[test]
    fn a_label_is_searched_as_shown_and_as_stored() {
        let labels = ["id", "labels"];
        let texts = |q: &str, columns: &[&str]| {
            let forms = forms(q, columns);
            assert!(forms.iter().skip(1).all(|f| f.column == Some("labels")));
            forms.into_iter().map(|f| f.text).collect::<Vec<_>>()
        };
        assert_eq!(texts("env=prod", &labels), ["env=prod", r#"env":"prod"#]);
        assert_eq!(texts("=", &labels), ["=", r#"":""#]);
        assert_eq!(texts(r#"a"=b"#, &labels), [r#"a"=b"#, r#"a\"":"b"#]);
        // Never two `=` in one label; other lists only as typed.
        assert_eq!(texts("a=b=c", &labels), ["a=b=c"]);
        assert_eq!(texts("env=prod", &["id", "metadata"]), ["env=prod"]);
        let both = forms("env=prod", &labels);
        let (sql, values) = condition(Dialect::Sqlite, "t", "", &labels, 1, &both);
        assert!(sql.contains("t_search MATCH $1"), "{sql}");
        assert!(sql.contains("LIKE $2") && sql.contains("LIKE $3"), "{sql}");
        // The stored form in the labels alone.
        assert!(sql.contains("(lower(labels) LIKE $3 ESCAPE"), "{sql}");
        assert!(!sql.contains("lower(id) LIKE $3"), "{sql}");
        assert_eq!(values[0], r#""env=prod" OR labels : "env"":""prod""#);
        assert_eq!(&values[1..], [r"%env=prod%", r#"%env":"prod%"#]);
        let (sql, values) = condition(Dialect::Postgres, "t", "", &labels, 4, &both);
        assert!(sql.starts_with("((") && sql.contains(") OR ("), "{sql}");
        assert!(sql.contains("LIKE $4") && sql.contains("LIKE $5"), "{sql}");
        assert_eq!(values.len(), 2);
    }
}
