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
//! which counts commits begun and ended ([`super::writer::Writer::settled`]). On PostgreSQL,
//! other nodes write the same tables, so nothing is cached there.
//!
//! An entry is stamped with that count as it was before its row was read, and is served only
//! while no commit has begun since and none is running: a commit begun invalidates every entry
//! at once, before its changes become visible, so an answer from here is never older than what
//! the database would answer, and a writer's own answer (sent after its commit ended) is never
//! followed by an older row. While a commit runs, reads go to the database and nothing is kept.
//! Only rows found are kept: a row created later is never hidden by an earlier "not found".

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Rows kept at most: when full, the cache starts again empty. A row of the largest kind is a
/// few KiB at most (the metadata and description limits), so this bounds the cache to a few
/// MiB; rows read often come back at once.
const CAPACITY: usize = 4096;

#[derive(Default)]
pub(super) struct RowCache {
    /// By id: ids are unique across tables (their prefix names the kind).
    entries: Mutex<HashMap<String, Entry>>,
}

struct Entry {
    /// The commit count ([`super::writer::Writer::settled`]) before the row was read.
    stamp: u64,
    table: &'static str,
    account_id: String,
    row: Arc<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for RowCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowCache")
            .field("entries", &self.lock().len())
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
        let entries = self.lock();
        let entry = entries.get(id)?;
        if entry.stamp != stamp || entry.table != table || entry.account_id != account_id {
            return None;
        }
        entry.row.downcast_ref::<R>().cloned()
    }

    /// Keeps `row`, the row `id` of `table` in the account, read after the commit count was
    /// `stamp`.
    pub(super) fn put<R: Send + Sync + 'static>(
        &self,
        table: &'static str,
        account_id: &str,
        id: &str,
        stamp: u64,
        row: R,
    ) {
        let mut entries = self.lock();
        if entries.len() >= CAPACITY && !entries.contains_key(id) {
            entries.clear();
        }
        entries.insert(
            id.to_owned(),
            Entry {
                stamp,
                table,
                account_id: account_id.to_owned(),
                row: Arc::new(row),
            },
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_served_only_at_its_stamp_in_its_table_and_account() {
        let cache = RowCache::default();
        cache.put("credentials", "acct_a", "cr_1", 4, "row".to_owned());
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
        cache.put("credentials", "acct_a", "cr_1", 5, "new".to_owned());
        assert_eq!(
            cache.get::<String>("credentials", "acct_a", "cr_1", 5),
            Some("new".to_owned())
        );
    }

    #[test]
    fn a_full_cache_starts_again_empty() {
        let cache = RowCache::default();
        for i in 0..CAPACITY {
            cache.put("credentials", "acct", &format!("cr_{i}"), 0, i);
        }
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_0", 0),
            Some(0)
        );
        // Replacing a kept row does not empty it.
        cache.put("credentials", "acct", "cr_0", 0, 7usize);
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_1", 0),
            Some(1)
        );
        cache.put("credentials", "acct", "cr_new", 0, 9usize);
        assert_eq!(cache.get::<usize>("credentials", "acct", "cr_1", 0), None);
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_new", 0),
            Some(9)
        );
    }
}
