//! Rows of the resource tables this process has read, so the `GET` of one resource read again
//! is answered without the database (docs/database.md, the row cache).
//!
//! Why it is safe: the rows cached change only through commits of the servers of the
//! installation. Of the other processes that write the database, the operator commands write
//! only accounts, users and their API keys (API keys, whose reads are scoped to an owner, are
//! not cached: [`super::Record::OWNER`]), with one exception: `user remove --to` hands a
//! removed user's credentials over, and a running server shows their new owner from its next
//! commit (its heartbeat commits every few seconds), as documented; the benchmarks' `dev
//! seed-credentials` only adds rows, and no "not found" is kept. Rows are kept only while this
//! process is the one server ([`RowCache::stop`], [`RowCache::resume`]): always on a SQLite
//! file, which one server at a time uses (`serve` holds `<file>-server.lock`); on PostgreSQL
//! while its node finds no other live node in the cluster (`agents::cluster`): a node that
//! joins has every other stop keeping rows before it answers anything, and a node that stops
//! stays listed until it has answered its last request.
//!
//! Then every change of a cached table is a commit of this process, and every commit of this
//! process, whatever it writes, goes through the write turn (`writer.rs`, `direct_writes.rs`),
//! which counts commits begun and ended ([`super::writer::Writer::settled`]); the migrations at
//! start are the one exception, and they run before anything is read. (A newer server, or an
//! operator command of a newer version, migrates the database at its start, before it joins:
//! the nodes of a cluster run one version, docs/cluster.md.)
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

pub(super) struct RowCache {
    inner: Mutex<Inner>,
}

struct Inner {
    /// By id: ids are unique across tables (their prefix names the kind).
    entries: HashMap<String, Entry>,
    /// The sum of the entries' weights.
    weight: usize,
    /// Whether rows are kept now: this process is the one server of the installation.
    keeping: bool,
    /// Bumped by every [`RowCache::stop`]: a row read before it must not be put after it, and
    /// a look for other nodes begun before it must not resume keeping after it.
    epoch: u64,
}

/// When a row was read: the commit count ([`super::writer::Writer::settled`]) and the
/// [`Inner::epoch`] before the read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    commits: u64,
    epoch: u64,
}

struct Entry {
    stamp: Stamp,
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
            .field("keeping", &inner.keeping)
            .finish()
    }
}

impl RowCache {
    /// An empty cache, keeping rows from the start or only once [`RowCache::resume`]d.
    pub(super) fn new(keeping: bool) -> RowCache {
        RowCache {
            inner: Mutex::new(Inner {
                entries: HashMap::new(),
                weight: 0,
                keeping,
                epoch: 0,
            }),
        }
    }

    /// The row `id` of `table` in the account, if it was read with no commit begun since
    /// `commits`, the count now; else the stamp to [`RowCache::put`] the row read now with, or
    /// `None` while rows are not kept.
    pub(super) fn get<R: Clone + 'static>(
        &self,
        table: &'static str,
        account_id: &str,
        id: &str,
        commits: u64,
    ) -> Result<R, Option<Stamp>> {
        let inner = self.lock();
        if !inner.keeping {
            return Err(None);
        }
        let stamp = Stamp {
            commits,
            epoch: inner.epoch,
        };
        let entry = inner.entries.get(id).filter(|entry| {
            entry.stamp == stamp && entry.table == table && entry.account_id == account_id
        });
        entry
            .and_then(|entry| entry.row.downcast_ref::<R>().cloned())
            .ok_or(Some(stamp))
    }

    /// Keeps `row`, the row `id` of `table` in the account, read at `stamp`, decoded from
    /// `text` bytes of text ([`Weighed::text_bytes`]); not when keeping stopped since.
    pub(super) fn put<R: Send + Sync + 'static>(
        &self,
        table: &'static str,
        account_id: &str,
        id: &str,
        stamp: Stamp,
        text: usize,
        row: R,
    ) {
        let weight = text + account_id.len() + OVERHEAD;
        if weight > LARGEST {
            return;
        }
        let mut inner = self.lock();
        if !inner.keeping || inner.epoch != stamp.epoch {
            return;
        }
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

    /// Stops keeping rows, and forgets those kept: another server may now change them.
    pub(super) fn stop(&self) {
        let mut inner = self.lock();
        inner.keeping = false;
        inner.epoch += 1;
        inner.entries.clear();
        inner.weight = 0;
    }

    /// The epoch now: read before looking for other servers, and given to [`RowCache::resume`].
    pub(super) fn epoch(&self) -> u64 {
        self.lock().epoch
    }

    /// Keeps rows again, found the one server by a look begun at `epoch`: not when a
    /// [`RowCache::stop`] came since (another server joined meanwhile).
    pub(super) fn resume(&self, epoch: u64) {
        let mut inner = self.lock();
        if inner.epoch == epoch {
            inner.keeping = true;
        }
    }

    /// Whether rows are kept now, and how many are.
    pub(super) fn state(&self) -> (bool, usize) {
        let inner = self.lock();
        (inner.keeping, inner.entries.len())
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

    /// The stamp of a read after `commits` commits, in the first epoch.
    fn at(commits: u64) -> Stamp {
        Stamp { commits, epoch: 0 }
    }

    #[test]
    fn a_row_is_served_only_at_its_stamp_in_its_table_and_account() {
        let cache = RowCache::new(true);
        cache.put("credentials", "acct_a", "cr_1", at(4), 3, "row".to_owned());
        assert_eq!(
            cache.get::<String>("credentials", "acct_a", "cr_1", 4).ok(),
            Some("row".to_owned())
        );
        // A commit began since: stale.
        assert_eq!(
            cache.get::<String>("credentials", "acct_a", "cr_1", 5).ok(),
            None
        );
        // Another account, another table, another id, another type: never.
        assert_eq!(
            cache.get::<String>("credentials", "acct_b", "cr_1", 4).ok(),
            None
        );
        assert_eq!(
            cache.get::<String>("tls_edges", "acct_a", "cr_1", 4).ok(),
            None
        );
        assert_eq!(
            cache.get::<String>("credentials", "acct_a", "cr_2", 4).ok(),
            None
        );
        assert_eq!(
            cache.get::<u32>("credentials", "acct_a", "cr_1", 4).ok(),
            None
        );
        // Read again at the new count, it is served again.
        cache.put("credentials", "acct_a", "cr_1", at(5), 3, "new".to_owned());
        assert_eq!(
            cache.get::<String>("credentials", "acct_a", "cr_1", 5).ok(),
            Some("new".to_owned())
        );
    }

    #[test]
    fn the_rows_kept_weigh_at_most_the_budget_and_a_heavy_row_is_not_kept() {
        let cache = RowCache::new(true);
        let text = 1024;
        let each = text + "acct".len() + OVERHEAD;
        let fit = BUDGET / each;
        for i in 0..fit {
            cache.put("credentials", "acct", &format!("cr_{i}"), at(0), text, i);
        }
        assert_eq!(cache.lock().weight, fit * each);
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_0", 0).ok(),
            Some(0)
        );
        // Replacing a kept row counts it once.
        cache.put("credentials", "acct", "cr_0", at(0), text, 7usize);
        assert_eq!(cache.lock().weight, fit * each);
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_1", 0).ok(),
            Some(1)
        );
        // One more does not fit: the cache starts again with it alone.
        cache.put("credentials", "acct", "cr_new", at(0), text, 9usize);
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_1", 0).ok(),
            None
        );
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_new", 0).ok(),
            Some(9)
        );
        assert_eq!(cache.lock().weight, each);
        // A row over the largest weight is never kept, and empties nothing.
        cache.put("credentials", "acct", "cr_big", at(0), LARGEST, 1usize);
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_big", 0).ok(),
            None
        );
        assert_eq!(
            cache.get::<usize>("credentials", "acct", "cr_new", 0).ok(),
            Some(9)
        );
    }

    #[test]
    fn rows_are_kept_only_while_no_other_server_is_found() {
        // PostgreSQL's cache starts keeping nothing, until its node finds itself alone.
        let cache = RowCache::new(false);
        assert_eq!(
            cache.get::<String>("credentials", "a", "cr_1", 0),
            Err(None)
        );
        cache.put("credentials", "a", "cr_1", at(0), 3, "row".to_owned());
        assert_eq!(
            cache.get::<String>("credentials", "a", "cr_1", 0),
            Err(None)
        );
        let epoch = cache.epoch();
        cache.resume(epoch);
        assert_eq!(cache.state(), (true, 0));
        let Err(Some(stamp)) = cache.get::<String>("credentials", "a", "cr_1", 0) else {
            panic!("a stamp to keep the row read with");
        };
        cache.put("credentials", "a", "cr_1", stamp, 3, "row".to_owned());
        assert_eq!(
            cache.get::<String>("credentials", "a", "cr_1", 0),
            Ok("row".to_owned())
        );
        assert_eq!(cache.state(), (true, 1));
        // Another server joined: everything kept is forgotten, and a row read before is not
        // put back after.
        cache.stop();
        assert_eq!(cache.state(), (false, 0));
        assert_eq!(
            cache.get::<String>("credentials", "a", "cr_1", 0),
            Err(None)
        );
        cache.put("credentials", "a", "cr_1", stamp, 3, "row".to_owned());
        // A look for other servers begun before that stop does not resume keeping...
        cache.resume(epoch);
        assert_eq!(
            cache.get::<String>("credentials", "a", "cr_1", 0),
            Err(None)
        );
        // ...one begun after it does, and the row put before the stop is gone.
        cache.resume(cache.epoch());
        assert!(matches!(
            cache.get::<String>("credentials", "a", "cr_1", 0),
            Err(Some(_))
        ));
        // A row read at the epoch before is still not put.
        cache.put("credentials", "a", "cr_1", stamp, 3, "old".to_owned());
        assert!(cache.get::<String>("credentials", "a", "cr_1", 0).is_err());
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
