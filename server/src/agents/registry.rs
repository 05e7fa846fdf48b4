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
//! And each session's update progress ([`super::updates`]), as its agent reported it over the
//! channel: a restart is refused while an update is being applied and for
//! `Timings::update_restart_wait` after it finished ([`Registry::restart_wait`]), and sessions
//! are served with it as `agent_update_state`.

use super::updates::{RestartWait, UpdateProgress};
use crate::store::Cause;
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tunnel_core::acl::Bind;
use tunnel_core::agent_protocol::{Refusal, UpdateReport};
use tunnel_core::errors::ErrorCode;
use tunnel_core::limits::UPDATE_RESTART_WAIT_SECS;
use tunnel_core::resources::tunnel_session::{AgentCommand, TunnelSession};

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
        /// Who sent it: an accepted stop or restart ends the session on their behalf.
        cause: Cause,
    },
    /// Tell the agent why and close the connection; `cause` is who made it so.
    Close {
        code: ErrorCode,
        msg: String,
        cause: Cause,
    },
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
        cause: &Cause,
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
            cause: cause.clone(),
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
        // The account's range, cut at `before_id` (excluded) when given.
        let (lower, upper) = account_range(account_id);
        let upper = before_id.map_or(upper, |before| {
            Bound::Excluded((account_id.to_owned(), before.to_owned()))
        });
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
    pub fn close_credential(&self, credential_id: &str, cause: &Cause) -> Vec<LiveSession> {
        let everything = (Bound::Unbounded, Bound::Unbounded);
        self.close_where(everything, cause, |live| {
            (live.credential_id == credential_id).then(|| {
                let msg = format!("The credential {credential_id} of this session was deleted.");
                (ErrorCode::CredentialDeleted, msg)
            })
        })
    }

    /// Removes (and returns) every session of `account_id` opened with `credential_id` for which
    /// `refusal` gives a code and message, and tells their connections to close with them: a
    /// changed ACL ends the sessions it no longer admits (docs/acl.md). Only the account's range
    /// of the map is walked; ACL changes are rare.
    pub fn close_refused(
        &self,
        account_id: &str,
        credential_id: &str,
        cause: &Cause,
        refusal: impl Fn(&[Bind]) -> Option<(ErrorCode, String)>,
    ) -> Vec<LiveSession> {
        self.close_where(account_range(account_id), cause, |live| {
            if live.credential_id == credential_id {
                refusal(&live.binds)
            } else {
                None
            }
        })
    }

    /// Removes (and returns) the sessions of `range` to which `verdict` gives a code and message,
    /// and tells each connection to close with them, on behalf of `cause`. The connections are
    /// told after the lock is released.
    fn close_where(
        &self,
        range: KeyRange,
        cause: &Cause,
        verdict: impl Fn(&LiveSession) -> Option<(ErrorCode, String)>,
    ) -> Vec<LiveSession> {
        let removed: Vec<(Entry, ErrorCode, String)> = {
            let mut sessions = self.write();
            let condemned: Vec<((String, String), ErrorCode, String)> = sessions
                .by_account
                .range(range)
                .filter_map(|(k, e)| verdict(&e.live).map(|(c, m)| (k.clone(), c, m)))
                .collect();
            condemned
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
                let cause = cause.clone();
                let _ = entry.link.send(Control::Close { code, msg, cause });
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

/// The keys of every session of `account_id` in the `(account id, session id)` map: from its
/// smallest possible key (empty id) to the first key of the next possible account (`account` +
/// NUL is the smallest string after it), so no other account's session is ever visited.
fn account_range(account_id: &str) -> KeyRange {
    (
        Bound::Included((account_id.to_owned(), String::new())),
        Bound::Excluded((format!("{account_id}\0"), String::new())),
    )
}

#[cfg(test)]
mod tests;
