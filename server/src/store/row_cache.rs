//! Rows of the resource tables this process has read from its SQLite file, so the `GET` of one
//! resource read again is answered without the database (docs/database.md, the row cache).
//!
//! Why it is safe on a SQLite file and used nowhere else: one server at a time uses a SQLite
//! file (`serve` holds `<file>-server.lock`), and of the other processes that write it, the
//! operator commands write only accounts, users and their API keys, never the tables cached
//! here (API keys, whose reads are scoped to an owner, are not cached: [`super::Record::OWNER`];
//! the benchmarks' `dev seed-credentials` only adds rows, and no "not found" is kept).
//! So every change of a cached table is a commit of this process, and every commit of this
//! process, whatever it writes, goes through the write turn (`writer.rs`, `direct_writes.rs`),
//! which counts commits begun and ended ([`super::writer::Writer::settled`]); the migrations at
//! start are the one exception, and they run before anything is read. On PostgreSQL,
//! other nodes write the same tables, so nothing is cached there.
//!
//! An entry is stamped with that count as it was before its row was read, and is served only
//! while no commit has begun since and none is running: a commit begun invalidates every entry
//! at once, before its changes become visible, so an answer from here is never older than what
//! the database would answer, and a writer's own answer (sent after its commit ended) is never
//! followed by an older row. While a commit runs, reads go to the database and nothing is kept.
//! Only rows found are kept: a row created later is never hidden by an earlier "not found".
//! The rows kept weigh at most [`BUDGET`] together, by the text they were decoded from.

use super::Result;
use super::columns::Fields;
use std::any::Any;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Mutex;

/// What the kept rows weigh at most together ([`Weighed`]: the text they were decoded from):
/// when a row would take the cache over, it starts again empty. Rows read often come back at
/// once.
const BUDGET: usize = 8 << 20;

/// What a row weighs beside its text (its entry, its id, the map's slot), roughly.
const OVERHEAD: usize = 256;

/// A row heavier than this is not kept (a backend's labels or an edge's hostports can make a
/// row of hundreds of KiB): reading such a row from the file costs more than the hand-over the
/// cache saves, and a few of them would empty it.
const LARGEST: usize = 64 << 10;

#[derive(Default)]
pub(super) struct RowCache {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// By id: ids are unique across tables (their prefix names the kind).
    entries: HashMap<String, Entry>,
    /// The sum of the entries' weights.
    weight: usize,
}

struct Entry {
    /// The commit count ([`super::writer::Writer::settled`]) before the row was read.
    stamp: u64,
    table: &'static str,
    account_id: String,
    weight: usize,
    row: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for RowCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("RowCache")
            .field("entries", &inner.entries.len())
            .field("weight", &inner.weight)
            .finish()
    }
}

impl RowCache {
    /// The row `id` of `table` in the account, if it was read at `stamp`, the commit count now.
    pub(super) fn get<R: Clone + 'static>(
        &self,
        table: &'static str,
        account_id: &str,
        id: &str,
        stamp: u64,
    ) -> Option<R> {
        let inner = self.lock();
        let entry = inner.entries.get(id)?;
        if entry.stamp != stamp || entry.table != table || entry.account_id != account_id {
            return None;
        }
        entry.row.downcast_ref::<R>().cloned()
    }

    /// Keeps `row`, the row `id` of `table` in the account, read after the commit count was
    /// `stamp`, decoded from `text` bytes of text ([`Weighed::text_bytes`]).
    pub(super) fn put<R: Send + Sync + 'static>(
        &self,
        table: &'static str,
        account_id: &str,
        id: &str,
        stamp: u64,
        text: usize,
        row: R,
    ) {
        let weight = text + account_id.len() + OVERHEAD;
        if weight > LARGEST {
            return;
        }
        let mut inner = self.lock();
        if let Some(old) = inner.entries.remove(id) {
            inner.weight -= old.weight;
        }
        if inner.weight + weight > BUDGET {
            inner.entries.clear();
            inner.weight = 0;
        }
        inner.weight += weight;
        inner.entries.insert(
            id.to_owned(),
            Entry {
                stamp,
                table,
                account_id: account_id.to_owned(),
                weight,
                row: Box::new(row),
            },
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A row's fields as a row type decodes them, counting the bytes of the text it reads: what
/// the decoded row weighs in the cache, near enough (its strings, and what its JSON columns
/// become).
pub(super) struct Weighed<'a> {
    row: &'a dyn Fields,
    text: Cell<usize>,
}

impl<'a> Weighed<'a> {
    pub(super) fn new(row: &'a dyn Fields) -> Weighed<'a> {
        Weighed {
            row,
            text: Cell::new(0),
        }
    }

    /// The bytes of text read through it so far.
    pub(super) fn text_bytes(&self) -> usize {
        self.text.get()
    }
}

impl Fields for Weighed<'_> {
    fn text(&self, name: &str) -> Result<Option<String>> {
        let text = self.row.text(name)?;
        self.text
            .set(self.text.get() + text.as_ref().map_or(0, String::len));
        Ok(text)
    }

    fn integer(&self, name: &str) -> Result<Option<i64>> {
        self.row.integer(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_served_only_at_its_stamp_in_its_table_and_account() {
        let cache = RowCache::default();
        cache.put("credentials", "acct_a", "cr_1", 4, 3, "row".to_owned());
        assert_eq!(
            cache.get::<String>("credentials", "acct_a", "cr_1", 4),
            Some("row".to_owned())
        );
        // A commit began since: stale.
        assert_eq!(
            cache.get::<String>("credentials", "acct_a", "cr_1", 5),
            None
        );
        // Another account, another table, another id, another type: never.
        assert_eq!(
            cache.get::<String>("credentials", "acct_b", "cr_1", 4),
            None
        );
        assert_eq!(cache.get::<String>("tls_edges", "acct_a", "cr_1", 4), None);
        assert_eq!(
            cache.get::<String>("credentials", "acct_a", "cr_2", 4),
            None
        );
        assert_eq!(cache.get::<u32>("credentials", "acct_a", "cr_1", 4), None);
        // Read again at the new count, it is served again.
        cache.put("credentials", "acct_a", "cr_1", 5, 3, "new".to_owned());
        assert_eq!(
            cache.get::<String>("credentials", "acct_a", "cr_1", 5),
            Some("new".to_owned())
        );
    }

    #[test]
    fn the_rows_kept_weigh_at_most_the_budget_and_a_heavy_row_is_not_kept() {
        let cache = RowCache::default();
        let text = 1024;
        let each = text + "acct".len() + OVERHEAD;
        let fit = BUDGET / each;
        for i in 0..fit {
            cache.put("credentials", "acct", &format!("cr_{i}"), 0, text, i);
        }
        assert_eq!(cache.lock().weight, fit * each);
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_0", 0),
            Some(0)
        );
        // Replacing a kept row counts it once.
        cache.put("credentials", "acct", "cr_0", 0, text, 7usize);
        assert_eq!(cache.lock().weight, fit * each);
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_1", 0),
            Some(1)
        );
        // One more does not fit: the cache starts again with it alone.
        cache.put("credentials", "acct", "cr_new", 0, text, 9usize);
        assert_eq!(cache.get::<usize>("credentials", "acct", "cr_1", 0), None);
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_new", 0),
            Some(9)
        );
        assert_eq!(cache.lock().weight, each);
        // A row over the largest weight is never kept, and empties nothing.
        cache.put("credentials", "acct", "cr_big", 0, LARGEST, 1usize);
        assert_eq!(cache.get::<usize>("credentials", "acct", "cr_big", 0), None);
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_new", 0),
            Some(9)
        );
    }

    #[test]
    fn a_weighed_row_counts_the_text_its_decoder_read() {
        struct Row;
        impl Fields for Row {
            fn text(&self, name: &str) -> Result<Option<String>> {
                Ok((name != "null").then(|| name.repeat(2)))
            }
            fn integer(&self, _: &str) -> Result<Option<i64>> {
                Ok(Some(1))
            }
        }
        let weighed = Weighed::new(&Row);
        weighed.text("description").unwrap();
        weighed.text("null").unwrap();
        weighed.integer("created").unwrap();
        weighed.required_text("id").unwrap();
        assert_eq!(
            weighed.text_bytes(),
            "description".len() * 2 + "id".len() * 2
        );
    }
}
