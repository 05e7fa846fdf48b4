//! The API keys this process has recently authenticated (docs/api/api_keys.md, revocation), so
//! a request does not read its key from the database every time: the authentication query was
//! one of the two statements of every `GET` of one resource.
//!
//! A revocation empties it at once: deleting a key empties this process's cache after the
//! delete commits ([`super::Store::delete`]), and the node that deleted it tells every other
//! live node of the cluster to empty theirs before it answers (`agents::cluster`). An entry also
//! ends [`TTL`] after it was read from the database, which bounds how long a node that missed
//! that call (unreachable at that moment) can still accept a deleted key.
//!
//! Entries are keyed by the SHA-256 of the presented key (what the database stores too), never by
//! the key itself. Only keys that authenticated are kept; unknown keys always reach the database,
//! behind the failed-authentication rate limit.

use super::ApiKeyOwner;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an entry is trusted without reading the database again.
pub(super) const TTL: Duration = Duration::from_secs(10);

/// Entries kept at most: when full, the cache starts again empty (a cost only for installations
/// with that many keys in use within [`TTL`]).
const CAPACITY: usize = 10_000;

#[derive(Debug, Default)]
pub(super) struct KeyCache {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Bumped by every [`KeyCache::clear`]: a lookup that read the database before a
    /// revocation and finishes after it must not put back what the revocation removed.
    generation: u64,
    entries: HashMap<Vec<u8>, (ApiKeyOwner, Instant)>,
}

impl KeyCache {
    /// The owner of the key whose hash is `hash`, if it authenticated less than [`TTL`] ago
    /// and no revocation came since; else the generation to pass to [`KeyCache::put`] after
    /// reading the database.
    pub(super) fn get(&self, hash: &[u8]) -> Result<ApiKeyOwner, u64> {
        let inner = self.lock();
        match inner.entries.get(hash) {
            Some((owner, at)) if at.elapsed() < TTL => Ok(owner.clone()),
            _ => Err(inner.generation),
        }
    }

    /// Keeps `owner` for the key whose hash is `hash`, read from the database in `generation`:
    /// dropped when a revocation came since.
    pub(super) fn put(&self, generation: u64, hash: Vec<u8>, owner: ApiKeyOwner) {
        let mut inner = self.lock();
        if inner.generation != generation {
            return;
        }
        if inner.entries.len() >= CAPACITY {
            inner.entries.clear();
        }
        inner.entries.insert(hash, (owner, Instant::now()));
    }

    /// Forgets every key: a key was revoked (here or on another node).
    pub(super) fn clear(&self) {
        let mut inner = self.lock();
        inner.generation += 1;
        inner.entries.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Nothing under the lock can panic half-way; a poisoned lock still holds whole entries.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(id: &str) -> ApiKeyOwner {
        ApiKeyOwner {
            account_id: "acct_1".into(),
            principal_id: "usr_1".into(),
            is_admin: true,
            api_key_id: id.into(),
        }
    }

    #[test]
    fn a_key_is_kept_until_a_revocation() {
        let cache = KeyCache::default();
        let generation = cache.get(b"k").unwrap_err();
        cache.put(generation, b"k".to_vec(), owner("ak_1"));
        assert_eq!(cache.get(b"k"), Ok(owner("ak_1")));
        assert!(cache.get(b"other").is_err());
        cache.clear();
        assert!(cache.get(b"k").is_err());
    }

    #[test]
    fn a_lookup_older_than_a_revocation_is_not_kept() {
        let cache = KeyCache::default();
        let generation = cache.get(b"k").unwrap_err();
        // The key is revoked while its lookup reads the database.
        cache.clear();
        cache.put(generation, b"k".to_vec(), owner("ak_1"));
        assert!(cache.get(b"k").is_err());
        let generation = cache.get(b"k").unwrap_err();
        cache.put(generation, b"k".to_vec(), owner("ak_1"));
        assert!(cache.get(b"k").is_ok());
    }

    #[test]
    fn an_entry_expires_and_the_cache_stays_bounded() {
        let cache = KeyCache::default();
        let generation = cache.get(b"k").unwrap_err();
        cache.lock().entries.insert(
            b"k".to_vec(),
            (
                owner("ak_1"),
                Instant::now() - TTL - Duration::from_millis(1),
            ),
        );
        assert!(cache.get(b"k").is_err());
        for i in 0..CAPACITY + 1 {
            cache.put(generation, i.to_string().into_bytes(), owner("ak_1"));
        }
        assert!(cache.lock().entries.len() <= CAPACITY);
    }
}
