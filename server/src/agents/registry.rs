//! The registry of live tunnel sessions: in memory, because only connected sessions exist
//! (docs/agent-channel.md) and a restart of the server disconnects every agent anyway.
//!
//! Sessions are kept in a map ordered by `(account id, session id)`: ids sort by creation time,
//! so one account's sessions are one contiguous range, "newest first" is a reverse walk of it
//! and `before_id` a bound of it, like the store's keyset pagination. Listing one account thus
//! costs in proportion to that account's sessions, however many other accounts have.
//!
//! Next to each session the registry keeps the sending half of its connection's control queue:
//! commands from the API and "close" (credential deleted, ACL narrowed) reach the connection
//! task through it,
//! and the task answers a command through the one-shot reply it carries.
//!
//! The registry also holds the slots of connections still waiting for their hello, so a flood
//! of upgrades that never say hello cannot pin an unbounded number of tasks and sockets.
//!
//! And each session's update progress, as its agent reported it over the channel (`UpdateState`),
//! anchored to the server's own clock on receipt: a restart is refused while an update is being
//! applied and for `Timings::update_restart_wait` after it finished ([`Registry::restart_wait`]),
//! and sessions are served with it as `agent_update_state`.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tunnel_core::acl::Bind;
use tunnel_core::agent_protocol::{Refusal, UpdateReport};
use tunnel_core::errors::ErrorCode;
use tunnel_core::limits::UPDATE_RESTART_WAIT_SECS;
use tunnel_core::resources::tunnel_session::{AgentCommand, AgentUpdateState, TunnelSession};
use tunnel_core::version::Version;

/// One connected session with what the API does not show: its account and credential.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveSession {
    pub session: TunnelSession,
    pub account_id: String,
    pub credential_id: String,
    /// What the agent asked to bind in its hello (domains, addresses, `key=value` labels), kept
    /// so a changed ACL can be checked against live sessions and backends can select them by
    /// label.
    pub binds: Vec<Bind>,
}

/// What the API asks of a session's connection task.
#[derive(Debug)]
pub enum Control {
    /// Deliver a command; the reply says how the agent acknowledged it. A reply dropped
    /// unanswered means the session ended first.
    Command {
        command: AgentCommand,
        target_version: Option<String>,
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    /// Tell the agent why and close the connection.
    Close { code: ErrorCode, msg: String },
}

/// Why a command was not acknowledged as accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandError {
    /// No such session in the account (or it disconnected, or it is leaving after an accepted
    /// stop or restart).
    NotFound,
    /// The session ended while the command was in flight (the agent left, e.g. after another
    /// caller's stop, or the link broke): there is no session to answer for any more.
    Ended,
    /// The agent refused.
    Refused(Refusal),
    /// The link is up but no acknowledgement came in time.
    Timeout,
}

/// Timings and bounds of the agent channel. Tests shorten them; the defaults suit real networks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timings {
    /// How long an API call waits for the agent's acknowledgement before answering 504.
    pub command_timeout: Duration,
    /// Interval of the server's WebSocket pings; three silent intervals end the session.
    pub heartbeat: Duration,
    /// How long an agent has to send its hello after the WebSocket opened.
    pub hello_timeout: Duration,
    /// How long one write to an agent may take: a peer that stops reading would otherwise
    /// block its connection task for good, heartbeats included. The session is dropped then.
    pub send_timeout: Duration,
    /// Most connections waiting for their hello at once; further upgrades get a 503.
    pub max_pending_hellos: usize,
    /// How long after an agent finished an update a restart is still refused (the spec's
    /// `UPDATE_RESTART_WAIT_SECS`). Tests in process may shorten it; the server binary has no
    /// flag for it.
    pub update_restart_wait: Duration,
}

impl Default for Timings {
    fn default() -> Timings {
        Timings {
            command_timeout: Duration::from_secs(10),
            heartbeat: Duration::from_secs(15),
            hello_timeout: Duration::from_secs(10),
            send_timeout: Duration::from_secs(10),
            max_pending_hellos: 1024,
            update_restart_wait: Duration::from_secs(UPDATE_RESTART_WAIT_SECS),
        }
    }
}

/// A session's update as the server knows it, on the server's clock.
#[derive(Debug, Clone, PartialEq, Eq)]
enum UpdateProgress {
    /// Being applied; expected to finish at `until` (the agent's estimate, from receipt).
    Updating { target: String, until: Instant },
    /// Finished at `finished_at` (receipt time, less what the agent said had elapsed).
    Updated {
        version: String,
        finished_at: Instant,
    },
}

/// Why a restart must wait, and for how long (whole seconds, rounded up, at least 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestartWait {
    /// The agent is applying an update to `target`.
    Updating { target: String, secs: u64 },
    /// The agent finished updating to `version` less than the wait ago.
    TooSoon { version: String, secs: u64 },
}

/// Whole seconds in `d`, rounded up.
pub fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// Longest update an agent may announce, and longest it may say has elapsed: bounds on what a
/// peer can make the server believe (an hour is far beyond any real update).
const MAX_REPORTED: Duration = Duration::from_secs(3600);

impl UpdateProgress {
    /// The progress an agent's report means, received `now`; `None` for a report whose version
    /// is not a version (ignored, like any malformed message).
    fn from_report(report: UpdateReport, now: Instant) -> Option<UpdateProgress> {
        let ms = |ms: u64| Duration::from_millis(ms).min(MAX_REPORTED);
        match report {
            UpdateReport::Updating {
                target,
                remaining_ms,
            } => Version::parse(&target).map(|v| UpdateProgress::Updating {
                target: v.to_string(),
                until: now + ms(remaining_ms),
            }),
            UpdateReport::Updated {
                version,
                elapsed_ms,
            } => Version::parse(&version).map(|v| UpdateProgress::Updated {
                version: v.to_string(),
                finished_at: now.checked_sub(ms(elapsed_ms)).unwrap_or(now),
            }),
        }
    }

    /// Whether (and how long) a restart must wait at `now`.
    fn restart_wait(&self, wait: Duration, now: Instant) -> Option<RestartWait> {
        match self {
            // An update past its estimate still counts as running until the agent says it
            // finished: restarting then could still lose it. Retry soon rather than never.
            UpdateProgress::Updating { target, until } => Some(RestartWait::Updating {
                target: target.clone(),
                secs: ceil_secs(until.saturating_duration_since(now)).max(1),
            }),
            UpdateProgress::Updated {
                version,
                finished_at,
            } => {
                let left = (*finished_at + wait).saturating_duration_since(now);
                (!left.is_zero()).then(|| RestartWait::TooSoon {
                    version: version.clone(),
                    secs: ceil_secs(left),
                })
            }
        }
    }

    /// The wire form (`agent_update_state`) at `now`.
    fn shown(&self, wait: Duration, now: Instant) -> AgentUpdateState {
        match self {
            UpdateProgress::Updating { target, .. } => AgentUpdateState::Updating {
                target: target.clone(),
            },
            UpdateProgress::Updated { version, .. } => AgentUpdateState::Updated {
                version: version.clone(),
                restart_available_in_secs: match self.restart_wait(wait, now) {
                    Some(RestartWait::TooSoon { secs, .. }) => secs,
                    _ => 0,
                },
            },
        }
    }
}

/// A session and the queue of its connection task.
#[derive(Debug)]
struct Entry {
    live: LiveSession,
    link: mpsc::UnboundedSender<Control>,
    update: Option<UpdateProgress>,
}

impl Entry {
    /// The session as the API shows it at `now`, with its update state.
    fn shown(&self, wait: Duration, now: Instant) -> TunnelSession {
        let mut session = self.live.session.clone();
        session.agent_update_state = self.update.as_ref().map(|u| u.shown(wait, now));
        session
    }
}

#[derive(Debug, Default)]
struct Sessions {
    /// Keyed by `(account id, session id)`: see the module comment.
    by_account: BTreeMap<(String, String), Entry>,
    /// Session id → account id, for the connection task and credential deletion, which know
    /// the session but not (cheaply) its account.
    accounts: HashMap<String, String>,
}

/// Shared, cheap to clone. Locks are never held across an `.await`.
#[derive(Debug, Clone)]
pub struct Registry {
    sessions: Arc<RwLock<Sessions>>,
    hello_slots: Arc<Semaphore>,
    timings: Timings,
}

impl Default for Registry {
    fn default() -> Registry {
        Registry::with_timings(Timings::default())
    }
}

impl Registry {
    /// A registry with other timings than the defaults (tests).
    pub fn with_timings(timings: Timings) -> Registry {
        Registry {
            sessions: Arc::default(),
            hello_slots: Arc::new(Semaphore::new(timings.max_pending_hellos)),
            timings,
        }
    }

    pub fn timings(&self) -> Timings {
        self.timings
    }

    /// A slot for one connection waiting for its hello, or `None` when all are taken.
    pub fn hello_slot(&self) -> Option<OwnedSemaphorePermit> {
        self.hello_slots.clone().try_acquire_owned().ok()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Sessions> {
        self.sessions.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Sessions> {
        self.sessions.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a connected session and returns the queue its connection task serves.
    pub fn open(&self, live: LiveSession) -> mpsc::UnboundedReceiver<Control> {
        let (link, rx) = mpsc::unbounded_channel();
        self.put(live, link);
        rx
    }

    /// Registers a session without a connection (tests of the listing routes): commands to it
    /// find no one to answer them and end as if the session had just ended.
    pub fn insert(&self, live: LiveSession) {
        let (link, _) = mpsc::unbounded_channel();
        self.put(live, link);
    }

    fn put(&self, live: LiveSession, link: mpsc::UnboundedSender<Control>) {
        let mut sessions = self.write();
        let key = (live.account_id.clone(), live.session.id.clone());
        sessions
            .accounts
            .insert(live.session.id.clone(), live.account_id.clone());
        sessions.by_account.insert(
            key,
            Entry {
                live,
                link,
                update: None,
            },
        );
    }

    /// Records the update progress the agent of session `id` reported, received at `now`.
    pub fn report_update(&self, id: &str, report: UpdateReport, now: Instant) {
        let Some(progress) = UpdateProgress::from_report(report, now) else {
            return;
        };
        let mut sessions = self.write();
        let Some(account_id) = sessions.accounts.get(id).cloned() else {
            return;
        };
        if let Some(entry) = sessions.by_account.get_mut(&(account_id, id.to_owned())) {
            entry.update = Some(progress);
        }
    }

    /// Whether a restart of session `id` must wait at `now` (an update being applied, or
    /// finished less than `update_restart_wait` ago), and for how long.
    pub fn restart_wait(&self, account_id: &str, id: &str, now: Instant) -> Option<RestartWait> {
        self.read()
            .by_account
            .get(&(account_id.to_owned(), id.to_owned()))
            .and_then(|e| e.update.as_ref())
            .and_then(|u| u.restart_wait(self.timings.update_restart_wait, now))
    }

    /// Delivers `command` to the session `id` of `account_id` and waits for the agent's
    /// acknowledgement, at most `command_timeout`.
    pub async fn command(
        &self,
        account_id: &str,
        id: &str,
        command: AgentCommand,
        target_version: Option<String>,
    ) -> Result<(), CommandError> {
        let link = self
            .read()
            .by_account
            .get(&(account_id.to_owned(), id.to_owned()))
            .map(|e| e.link.clone())
            .ok_or(CommandError::NotFound)?;
        let (reply, answer) = oneshot::channel();
        link.send(Control::Command {
            command,
            target_version,
            reply,
        })
        .map_err(|_| CommandError::Ended)?;
        match tokio::time::timeout(self.timings.command_timeout, answer).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(refusal))) => Err(CommandError::Refused(refusal)),
            // The connection task dropped the reply: the session ended (or is leaving) before
            // an answer. That is not slowness, and no retry can reach this session any more.
            Ok(Err(_)) => Err(CommandError::Ended),
            Err(_) => Err(CommandError::Timeout),
        }
    }

    /// Forgets the session `id`; its connection task sees its queue close and ends.
    pub fn remove(&self, id: &str) -> Option<LiveSession> {
        let mut sessions = self.write();
        let account_id = sessions.accounts.remove(id)?;
        sessions
            .by_account
            .remove(&(account_id, id.to_owned()))
            .map(|e| e.live)
    }

    /// The session `id` if it belongs to `account_id`.
    pub fn get(&self, account_id: &str, id: &str) -> Option<TunnelSession> {
        let now = Instant::now();
        self.read()
            .by_account
            .get(&(account_id.to_owned(), id.to_owned()))
            .map(|e| e.shown(self.timings.update_restart_wait, now))
    }

    /// One page of the account's sessions, newest first, and whether more follow.
    pub fn list(
        &self,
        account_id: &str,
        limit: usize,
        before_id: Option<&str>,
    ) -> (Vec<TunnelSession>, bool) {
        let now = Instant::now();
        let wait = self.timings.update_restart_wait;
        let sessions = self.read();
        let account = account_id.to_owned();
        // The account's range: from its smallest possible key (empty id) up to `before_id`
        // (excluded) or to the first key of the next possible account (`account` + NUL is the
        // smallest string after `account`), so no other account's session is ever visited.
        let lower = Bound::Included((account.clone(), String::new()));
        let upper = match before_id {
            Some(before) => Bound::Excluded((account.clone(), before.to_owned())),
            None => Bound::Excluded((format!("{account}\0"), String::new())),
        };
        let mut page: Vec<TunnelSession> = sessions
            .by_account
            .range((lower, upper))
            .rev()
            .take(limit + 1)
            .map(|(_, e)| e.shown(wait, now))
            .collect();
        let more = page.len() > limit;
        page.truncate(limit);
        (page, more)
    }

    /// Removes (and returns) every session opened with `credential_id` and tells their connections
    /// to close: deleting a credential disconnects its sessions (docs/agent-channel.md). Credential
    /// deletion is rare, so a scan of every session is acceptable here.
    pub fn close_credential(&self, credential_id: &str) -> Vec<LiveSession> {
        let removed: Vec<Entry> = {
            let mut sessions = self.write();
            let keys: Vec<(String, String)> = sessions
                .by_account
                .iter()
                .filter(|(_, e)| e.live.credential_id == credential_id)
                .map(|(k, _)| k.clone())
                .collect();
            keys.into_iter()
                .filter_map(|key| {
                    sessions.accounts.remove(&key.1);
                    sessions.by_account.remove(&key)
                })
                .collect()
        };
        removed
            .into_iter()
            .map(|entry| {
                // A task that already ended has nothing left to close.
                let _ = entry.link.send(Control::Close {
                    code: ErrorCode::CredentialDeleted,
                    msg: format!("The credential {credential_id} of this session was deleted."),
                });
                entry.live
            })
            .collect()
    }

    /// Removes (and returns) every session of `account_id` opened with `credential_id` for which
    /// `refusal` gives a code and message, and tells their connections to close with them: a
    /// changed ACL ends the sessions it no longer admits (docs/acl.md). Only the account's range
    /// of the map is walked; ACL changes are rare.
    pub fn close_refused(
        &self,
        account_id: &str,
        credential_id: &str,
        refusal: impl Fn(&[Bind]) -> Option<(ErrorCode, String)>,
    ) -> Vec<LiveSession> {
        let removed: Vec<(Entry, ErrorCode, String)> = {
            let mut sessions = self.write();
            let refused: Vec<((String, String), ErrorCode, String)> = sessions
                .by_account
                .range(account_range(account_id))
                .filter(|(_, e)| e.live.credential_id == credential_id)
                .filter_map(|(k, e)| refusal(&e.live.binds).map(|(c, m)| (k.clone(), c, m)))
                .collect();
            refused
                .into_iter()
                .filter_map(|(key, code, msg)| {
                    sessions.accounts.remove(&key.1);
                    sessions.by_account.remove(&key).map(|e| (e, code, msg))
                })
                .collect()
        };
        removed
            .into_iter()
            .map(|(entry, code, msg)| {
                // A task that already ended has nothing left to close.
                let _ = entry.link.send(Control::Close { code, msg });
                entry.live
            })
            .collect()
    }

    /// The ids of the account's sessions whose agent bound every one of `labels` (`key=value`
    /// binds, compared exactly), newest first: the tunnels of a tunnel-group backend
    /// (docs/api/backends.md). No labels select no session. Walks only the account's range.
    pub fn with_labels(&self, account_id: &str, labels: &BTreeMap<String, String>) -> Vec<String> {
        if labels.is_empty() {
            return Vec::new();
        }
        let sessions = self.read();
        sessions
            .by_account
            .range(account_range(account_id))
            .rev()
            .filter(|(_, e)| {
                labels.iter().all(|(key, value)| {
                    e.live.binds.iter().any(|bind| {
                        matches!(bind, Bind::Label { key: k, value: v } if k == key && v == value)
                    })
                })
            })
            .map(|((_, id), _)| id.clone())
            .collect()
    }
}

/// A range of keys of the `(account id, session id)` map.
type KeyRange = (Bound<(String, String)>, Bound<(String, String)>);

/// The keys of every session of `account_id` in the `(account id, session id)` map.
fn account_range(account_id: &str) -> KeyRange {
    (
        Bound::Included((account_id.to_owned(), String::new())),
        Bound::Excluded((format!("{account_id}\0"), String::new())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunnel_core::ids::{IdKind, make_id};
    use tunnel_core::resources::Ref;

    fn live(n: u64, account: &str, credential: &str) -> LiveSession {
        let id = make_id(IdKind::TunnelSession, n, [0; 14]);
        LiveSession {
            session: TunnelSession {
                id: id.clone(),
                uri: format!("http://x/api/tunnel_sessions/{id}"),
                agent_version: "3.4.0".into(),
                credential: Ref {
                    id: credential.into(),
                    uri: String::new(),
                },
                ip: "127.0.0.1".into(),
                metadata: String::new(),
                os: "linux".into(),
                region: "local".into(),
                started_at: "2026-01-01T00:00:00Z".into(),
                transport: "tunnel/v2".into(),
                agent_update_target: Some("3.4.1".into()),
                agent_update_checks: true,
                agent_update_state: None,
            },
            account_id: account.into(),
            credential_id: credential.into(),
            binds: Vec::new(),
        }
    }

    #[test]
    fn lists_newest_first_per_account_with_pages() {
        let registry = Registry::default();
        for n in 1..=5 {
            registry.insert(live(n, "a", "cr_1"));
        }
        registry.insert(live(6, "b", "cr_2"));
        let (first, more) = registry.list("a", 2, None);
        assert!(more);
        assert_eq!(first.len(), 2);
        assert!(first[0].id > first[1].id);
        let (second, _) = registry.list("a", 10, Some(&first[1].id));
        assert_eq!(second.len(), 3);
        assert!(second.iter().all(|s| s.id < first[1].id));
        assert!(registry.get("b", &first[0].id).is_none());
        assert_eq!(registry.close_credential("cr_1").len(), 5);
        assert_eq!(registry.list("a", 10, None).0.len(), 0);
        assert_eq!(registry.list("b", 10, None).0.len(), 1);
    }

    #[test]
    fn listing_stays_inside_the_account_even_next_to_similar_ids() {
        let registry = Registry::default();
        // "a" < "a\0…" < "ab": neighbours in key order that must never leak into "a"'s list.
        registry.insert(live(1, "a", "cr_1"));
        registry.insert(live(2, "ab", "cr_2"));
        registry.insert(live(3, "a", "cr_1"));
        registry.insert(live(4, "", "cr_3"));
        let (page, more) = registry.list("a", 10, None);
        assert!(!more);
        assert_eq!(page.len(), 2);
        assert!(page[0].id > page[1].id);
        assert_eq!(registry.list("ab", 10, None).0.len(), 1);
        assert_eq!(registry.list("", 10, None).0.len(), 1);
        let id = page[0].id.clone();
        assert!(registry.remove(&id).is_some());
        assert!(registry.remove(&id).is_none());
        assert_eq!(registry.list("a", 10, None).0.len(), 1);
    }

    #[test]
    fn restart_waits_while_updating_and_for_the_wait_after_it() {
        let registry = Registry::default();
        let l = live(1, "a", "cr_1");
        let id = l.session.id.clone();
        registry.insert(l);
        // 3 s ago, so that the finish at `t1` below is about now for `get`, which reads the clock.
        let t0 = Instant::now() - Duration::from_secs(3);
        let wait = |now| registry.restart_wait("a", &id, now);
        let state = || registry.get("a", &id).unwrap().agent_update_state;
        assert_eq!(wait(t0), None);
        assert_eq!(state(), None);

        let updating = |target: &str, remaining_ms| UpdateReport::Updating {
            target: target.into(),
            remaining_ms,
        };
        registry.report_update(&id, updating("3.4.1", 2500), t0);
        let ms = Duration::from_millis;
        let updating_for = |secs| {
            Some(RestartWait::Updating {
                target: "3.4.1".into(),
                secs,
            })
        };
        assert_eq!(wait(t0), updating_for(3));
        assert_eq!(wait(t0 + ms(2000)), updating_for(1));
        // Past its estimate but not reported finished: still updating, retry in a second.
        assert_eq!(wait(t0 + ms(9000)), updating_for(1));
        assert_eq!(
            state(),
            Some(AgentUpdateState::Updating {
                target: "3.4.1".into()
            })
        );
        // Another account does not see it; a malformed report changes nothing.
        assert_eq!(registry.restart_wait("b", &id, t0), None);
        registry.report_update(&id, updating("not a version", 1), t0);
        assert_eq!(wait(t0), updating_for(3));

        // Finished 400 ms before the report arrived at t1: the default 10 s count from then.
        let t1 = t0 + ms(3000);
        let updated = UpdateReport::Updated {
            version: "3.4.1".into(),
            elapsed_ms: 400,
        };
        registry.report_update(&id, updated, t1);
        let too_soon = |secs| {
            Some(RestartWait::TooSoon {
                version: "3.4.1".into(),
                secs,
            })
        };
        assert_eq!(UPDATE_RESTART_WAIT_SECS, 10);
        assert_eq!(wait(t1), too_soon(10)); // 9.6 s left
        assert_eq!(wait(t1 + ms(599)), too_soon(10));
        assert_eq!(wait(t1 + ms(600)), too_soon(9));
        assert_eq!(wait(t1 + ms(9599)), too_soon(1));
        assert_eq!(wait(t1 + ms(9600)), None);
        match state() {
            Some(AgentUpdateState::Updated {
                version,
                restart_available_in_secs,
            }) => {
                assert_eq!(version, "3.4.1");
                assert!((9..=10).contains(&restart_available_in_secs));
            }
            other => panic!("{other:?}"),
        }
        // An agent cannot push the finish time arbitrarily far back (nor the wait forward).
        let t2 = t1 + ms(20_000);
        let long_ago = UpdateReport::Updated {
            version: "3.4.1".into(),
            elapsed_ms: u64::MAX,
        };
        registry.report_update(&id, long_ago, t2);
        assert_eq!(wait(t2), None);
    }

    #[tokio::test]
    async fn a_command_to_a_session_without_a_connection_reports_it_ended() {
        let registry = Registry::default();
        let l = live(1, "a", "cr_1");
        let id = l.session.id.clone();
        registry.insert(l);
        assert_eq!(
            registry.command("a", &id, AgentCommand::Stop, None).await,
            Err(CommandError::Ended)
        );
        assert_eq!(
            registry.command("b", &id, AgentCommand::Stop, None).await,
            Err(CommandError::NotFound)
        );
    }
}
