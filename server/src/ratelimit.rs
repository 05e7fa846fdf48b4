//! Rate limits (docs/rate-limits.md): token buckets (GCRA, from the `governor` crate) per API
//! key, per client IP, for failed authentications per IP, and for agent connections per IP.
//!
//! This module only decides; the HTTP side (`auth::throttle`, the `Caller` extractor, the agent
//! channel's upgrade) turns a refusal into the 429 with its headers. Buckets live in the memory
//! of each node: a cluster of N nodes lets a client through up to N times the rate, which is
//! what a limit against runaway scripts and guessers needs (docs/cluster.md).

use governor::clock::{Clock as _, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::{Quota, RateLimiter};
use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One limit: a bucket of `burst` requests, refilled by one every `period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub period: Duration,
    pub burst: NonZeroU32,
}

impl Rate {
    /// `<n>/<s|m|h>[,<burst>]` (e.g. `25/s,250`, `10/m,20`), or `off`. Without a burst the
    /// bucket holds one unit's worth: `25/s` holds 25.
    pub fn parse(text: &str) -> Result<Option<Rate>, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("off") {
            return Ok(None);
        }
        let shape = || format!("`{text}` is not a rate such as 25/s,250 or 10/m (or off)");
        let (rate, burst) = match text.split_once(',') {
            Some((rate, burst)) => (rate, Some(burst.trim())),
            None => (text, None),
        };
        let (count, unit) = rate.trim().split_once('/').ok_or_else(shape)?;
        let count: u32 = whole(count).map_err(|too_large| {
            if too_large {
                format!("`{text}`: the count before the `/` is at most {}", u32::MAX)
            } else {
                shape()
            }
        })?;
        let unit = match unit.trim() {
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            _ => return Err(shape()),
        };
        let count =
            NonZeroU32::new(count).ok_or_else(|| format!("`{text}`: a rate of zero; use off"))?;
        let burst = match burst {
            Some(b) => whole(b).ok().and_then(NonZeroU32::new).ok_or_else(|| {
                format!(
                    "`{text}`: the burst after the comma is a whole number from 1 to {}",
                    u32::MAX
                )
            })?,
            None => count,
        };
        Ok(Some(Rate {
            period: unit / count.get(),
            burst,
        }))
    }

    fn quota(self) -> Quota {
        // `period` is never zero: at most u32::MAX requests per second still leave a nanosecond.
        Quota::with_period(self.period.max(Duration::from_nanos(1)))
            .expect("a non-zero period")
            .allow_burst(self.burst)
    }
}

/// A `--rate-limit-*` flag's value: a rate, or `None` for `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateFlag(pub Option<Rate>);

impl RateFlag {
    pub fn parse(text: &str) -> Result<RateFlag, String> {
        Rate::parse(text).map(RateFlag)
    }
}

/// A whole number of a rate; `Err(true)` for digits too many for a `u32`, `Err(false)` for no
/// number at all.
fn whole(text: &str) -> Result<u32, bool> {
    let text = text.trim();
    text.parse()
        .map_err(|_| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
}

/// The limits of a server (`--rate-limit-*`); `None` turns one off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub per_key: Option<Rate>,
    pub per_ip: Option<Rate>,
    pub auth_failures: Option<Rate>,
    pub agent_connects: Option<Rate>,
}

/// The flags' defaults, sized for people and scripts: a console page makes a handful of
/// requests and an export or a bulk run a few hundred one after the other, which the per-key
/// burst takes whole; an office behind one address shares the per-IP bucket; a guesser gets 20
/// tries and then one every 6 s; a host restarting its 200 agents at once gets them all in.
pub const DEFAULT_PER_KEY: &str = "25/s,250";
pub const DEFAULT_PER_IP: &str = "100/s,1000";
pub const DEFAULT_AUTH_FAILURES: &str = "10/m,20";
pub const DEFAULT_AGENT_CONNECTS: &str = "20/s,200";

impl Settings {
    /// No limit at all (in-process tests, and the benchmark's API rows).
    pub fn off() -> Settings {
        Settings {
            per_key: None,
            per_ip: None,
            auth_failures: None,
            agent_connects: None,
        }
    }

    /// The defaults of the flags.
    pub fn defaults() -> Settings {
        let parse = |text| Rate::parse(text).expect("a valid default");
        Settings {
            per_key: parse(DEFAULT_PER_KEY),
            per_ip: parse(DEFAULT_PER_IP),
            auth_failures: parse(DEFAULT_AUTH_FAILURES),
            agent_connects: parse(DEFAULT_AGENT_CONNECTS),
        }
    }
}

/// Which limit refused a request (the 429's `details.limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    ApiKey,
    Ip,
    AuthFailures,
    AgentConnects,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::ApiKey => "api_key",
            Scope::Ip => "ip",
            Scope::AuthFailures => "auth_failures",
            Scope::AgentConnects => "agent_connects",
        }
    }
}

/// Where a client stands in a bucket: the `RateLimit-Limit`, `-Remaining` and `-Reset` headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    pub limit: u32,
    pub remaining: u32,
    /// Whole seconds until the bucket is full again.
    pub reset_secs: u64,
}

/// A request a limit refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub scope: Scope,
    /// Whole seconds until a request would pass (at least 1): the `Retry-After`.
    pub retry_after_secs: u64,
    pub standing: Standing,
}

type Keyed<K> = RateLimiter<
    K,
    governor::state::keyed::DefaultKeyedStateStore<K>,
    DefaultClock,
    StateInformationMiddleware,
>;

/// One keyed bucket set, pruned now and then so keys that went quiet do not stay in memory.
struct Bucket<K: Hash + Eq + Clone> {
    limiter: Keyed<K>,
    rate: Rate,
    checks: AtomicU32,
}

/// How many checks go between two prunings of a bucket set.
const PRUNE_EVERY: u32 = 4096;

impl<K: Hash + Eq + Clone> Bucket<K> {
    fn new(rate: Rate) -> Bucket<K> {
        Bucket {
            limiter: RateLimiter::dashmap(rate.quota())
                .with_middleware::<StateInformationMiddleware>(),
            rate,
            checks: AtomicU32::new(0),
        }
    }

    fn check(&self, key: &K, scope: Scope) -> Result<Standing, Refusal> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            // Drops the keys whose bucket is full again: they hold nothing worth keeping.
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        match self.limiter.check_key(key) {
            Ok(snapshot) => Ok(self.standing(snapshot.remaining_burst_capacity())),
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.limiter.clock().now());
                Err(Refusal {
                    scope,
                    retry_after_secs: whole_secs(wait).max(1),
                    standing: self.standing(0),
                })
            }
        }
    }

    fn standing(&self, remaining: u32) -> Standing {
        let limit = self.rate.burst.get();
        let empty = limit.saturating_sub(remaining);
        Standing {
            limit,
            remaining,
            reset_secs: whole_secs(self.rate.period.saturating_mul(empty)),
        }
    }
}

/// Seconds, rounded up.
fn whole_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// Every bucket of a server.
pub struct Limits {
    per_key: Option<Bucket<String>>,
    per_ip: Option<Bucket<IpAddr>>,
    auth_failures: Option<Bucket<IpAddr>>,
    agent_connects: Option<Bucket<IpAddr>>,
    /// Addresses whose failed authentications emptied their bucket, until when: every request
    /// with an API key from them is refused before the key is looked at, or a guesser would go
    /// on guessing (each guess is a check).
    locked: Mutex<HashMap<IpAddr, Instant>>,
    /// How many addresses `locked` holds, read without the lock: almost always none, and then
    /// no request takes the mutex.
    locked_count: AtomicUsize,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits").finish_non_exhaustive()
    }
}

impl Limits {
    pub fn new(settings: Settings) -> Limits {
        Limits {
            per_key: settings.per_key.map(Bucket::new),
            per_ip: settings.per_ip.map(Bucket::new),
            auth_failures: settings.auth_failures.map(Bucket::new),
            agent_connects: settings.agent_connects.map(Bucket::new),
            locked: Mutex::default(),
            locked_count: AtomicUsize::new(0),
        }
    }

    /// One request of an API key (`ak_…` id). `None`: no per-key limit.
    pub fn api_key(&self, api_key_id: &str) -> Option<Result<Standing, Refusal>> {
        let bucket = self.per_key.as_ref()?;
        Some(bucket.check(&api_key_id.to_owned(), Scope::ApiKey))
    }

    /// One API request from `ip`.
    pub fn ip(&self, ip: IpAddr) -> Result<(), Refusal> {
        match &self.per_ip {
            Some(bucket) => bucket.check(&ip, Scope::Ip).map(drop),
            None => Ok(()),
        }
    }

    /// One agent connection from `ip`.
    pub fn agent_connect(&self, ip: IpAddr) -> Result<(), Refusal> {
        match &self.agent_connects {
            Some(bucket) => bucket.check(&ip, Scope::AgentConnects).map(drop),
            None => Ok(()),
        }
    }

    /// Whether `ip` may try an API key now.
    pub fn may_authenticate(&self, ip: IpAddr) -> Result<(), Refusal> {
        let Some(bucket) = &self.auth_failures else {
            return Ok(());
        };
        if self.locked_count.load(Ordering::Acquire) == 0 {
            return Ok(());
        }
        let locked = self.locked.lock().unwrap_or_else(|e| e.into_inner());
        match locked.get(&ip) {
            Some(until) if *until > Instant::now() => Err(Refusal {
                scope: Scope::AuthFailures,
                retry_after_secs: whole_secs(*until - Instant::now()).max(1),
                standing: bucket.standing(0),
            }),
            _ => Ok(()),
        }
    }

    /// An API key from `ip` was unknown: one failure taken from its bucket, and the address
    /// locked out by the failure that empties it, so a guesser gets exactly the burst's tries
    /// (the next key is not looked up) until the bucket has room again.
    pub fn authentication_failed(&self, ip: IpAddr) {
        let Some(bucket) = &self.auth_failures else {
            return;
        };
        let wait = match bucket.check(&ip, Scope::AuthFailures) {
            Ok(standing) if standing.remaining == 0 => bucket.rate.period,
            Ok(_) => return,
            // Failures racing the one that emptied it.
            Err(refusal) => Duration::from_secs(refusal.retry_after_secs),
        };
        let mut locked = self.locked.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        locked.retain(|_, until| *until > now);
        locked.insert(ip, now + wait);
        self.locked_count.store(locked.len(), Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_with_and_without_a_burst() {
        let rate = Rate::parse("25/s,250").unwrap().unwrap();
        assert_eq!(rate.period, Duration::from_millis(40));
        assert_eq!(rate.burst.get(), 250);
        let rate = Rate::parse(" 10/m ").unwrap().unwrap();
        assert_eq!(rate.period, Duration::from_secs(6));
        assert_eq!(rate.burst.get(), 10);
        assert_eq!(Rate::parse("OFF").unwrap(), None);
        for bad in ["", "25", "25/d", "0/s", "x/s", "5/s,0", "5/s,-1", "5/s,x"] {
            assert!(Rate::parse(bad).is_err(), "{bad:?}");
        }
        // Too large is said as too large, not as no rate at all.
        let said = Rate::parse("1000000000000/s").unwrap_err();
        assert!(said.contains("is at most 4294967295"), "{said}");
        let said = Rate::parse("5/s,99999999999999").unwrap_err();
        assert!(said.contains("from 1 to 4294967295"), "{said}");
        // The defaults are valid rates.
        let defaults = Settings::defaults();
        assert!(defaults.per_key.is_some() && defaults.agent_connects.is_some());
    }

    #[test]
    fn a_bucket_lets_its_burst_through_then_refuses_with_the_wait() {
        let limits = Limits::new(Settings {
            per_key: Rate::parse("1/m,3").unwrap(),
            ..Settings::off()
        });
        let remaining: Vec<u32> = (0..3)
            .map(|_| limits.api_key("ak_1").unwrap().unwrap().remaining)
            .collect();
        assert_eq!(remaining, [2, 1, 0]);
        let refusal = limits.api_key("ak_1").unwrap().unwrap_err();
        assert_eq!(refusal.scope, Scope::ApiKey);
        assert!((55..=60).contains(&refusal.retry_after_secs), "{refusal:?}");
        assert_eq!(refusal.standing.remaining, 0);
        assert_eq!(refusal.standing.limit, 3);
        // Another key has a bucket of its own.
        assert_eq!(limits.api_key("ak_2").unwrap().unwrap().remaining, 2);
    }

    #[test]
    fn failed_authentications_lock_the_address_once_the_bucket_is_empty() {
        let limits = Limits::new(Settings {
            auth_failures: Rate::parse("1/m,2").unwrap(),
            ..Settings::off()
        });
        let ip: IpAddr = [192, 0, 2, 1].into();
        let other: IpAddr = [192, 0, 2, 2].into();
        assert!(limits.may_authenticate(ip).is_ok());
        limits.authentication_failed(ip);
        // The second failure empties the bucket: a third key is not tried.
        assert!(limits.may_authenticate(ip).is_ok());
        limits.authentication_failed(ip);
        let refusal = limits.may_authenticate(ip).unwrap_err();
        assert_eq!(refusal.scope, Scope::AuthFailures);
        assert!(refusal.retry_after_secs >= 1);
        assert!(limits.may_authenticate(other).is_ok());
    }

    #[test]
    fn limits_that_are_off_never_refuse() {
        let limits = Limits::new(Settings::off());
        let ip: IpAddr = [192, 0, 2, 1].into();
        for _ in 0..1000 {
            assert!(limits.api_key("ak_1").is_none());
            assert!(limits.ip(ip).is_ok());
            assert!(limits.agent_connect(ip).is_ok());
            limits.authentication_failed(ip);
            assert!(limits.may_authenticate(ip).is_ok());
        }
    }
}
