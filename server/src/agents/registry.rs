//! The registry of this node's connected tunnel sessions: in memory, because a connection is
//! held by one process. Every node of an installation lists every session from the directory in
//! the database (`store::sessions`, docs/cluster.md); this registry is what a node needs to act
//! on the sessions whose agents it holds.
//!
//! Next to each session the registry keeps the sending half of its connection's control queue:
//! commands (from this node's API or from another node's, `agents::cluster`) and "close"
//! (credential deleted, ACL narrowed) reach the connection task through it, and the task answers
//! a command through the one-shot reply it carries.
//!
//! The registry also holds the slots of connections still waiting for their hello, so a flood
//! of upgrades that never say hello cannot pin an unbounded number of tasks and sockets.
//!
//! And each session's update progress ([`super::updates`]), as its agent reported it over the
//! channel: a restart is refused while an update is being applied and for
//! `Timings::update_restart_wait` after it finished ([`Registry::restart_wait`]).

use super::updates::{RestartWait, UpdateProgress};
use crate::store::Cause;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tokio_util::task::TaskTracker;
use tokio_util::task::task_tracker::TrackedFuture;
use tunnel_core::acl::Bind;
use tunnel_core::agent_protocol::Refusal;
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

/// Shared, cheap to clone. Locks are never held across an `.await`.
#[derive(Debug, Clone)]
pub struct Registry {
    /// This node's sessions by id.
    sessions: Arc<RwLock<HashMap<String, Entry>>>,
    hello_slots: Arc<Semaphore>,
    timings: Timings,
    /// Every agent connection's task, from upgrade to close: shutdown waits for them before the
    /// database pool closes, so no session's end is written to a closed pool.
    connections: TaskTracker,
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
            connections: TaskTracker::new(),
        }
    }

    pub fn timings(&self) -> Timings {
        self.timings
    }

    /// `connection` (an agent's WebSocket, served from upgrade to close) counted among this
    /// node's connections, which [`Registry::connections_done`] waits for.
    pub fn track<F: Future>(&self, connection: F) -> TrackedFuture<F> {
        self.connections.track_future(connection)
    }

    /// Waits until every connection task has finished, for at most `within`; `false` if some
    /// are still running then. No connection is counted after this is called.
    pub async fn connections_done(&self, within: Duration) -> bool {
        self.connections.close();
        tokio::time::timeout(within, self.connections.wait())
            .await
            .is_ok()
    }

    /// A slot for one connection waiting for its hello, or `None` when all are taken.
    pub fn hello_slot(&self) -> Option<OwnedSemaphorePermit> {
        self.hello_slots.clone().try_acquire_owned().ok()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Entry>> {
        self.sessions.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Entry>> {
        self.sessions.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a connected session and returns the queue its connection task serves.
    pub fn open(&self, live: LiveSession) -> mpsc::UnboundedReceiver<Control> {
        let (link, rx) = mpsc::unbounded_channel();
        self.put(live, link);
        rx
    }

    /// Registers a session without a connection (tests): commands to it find no one to answer
    /// them and end as if the session had just ended.
    pub fn insert(&self, live: LiveSession) {
        let (link, _) = mpsc::unbounded_channel();
        self.put(live, link);
    }

    fn put(&self, live: LiveSession, link: mpsc::UnboundedSender<Control>) {
        let entry = Entry {
            live,
            link,
            update: None,
        };
        self.write().insert(entry.live.session.id.clone(), entry);
    }

    /// Records the update progress the agent of session `id` reported.
    pub fn report_update(&self, id: &str, progress: UpdateProgress) {
        if let Some(entry) = self.write().get_mut(id) {
            entry.update = Some(progress);
        }
    }

    /// Whether a restart of session `id` must wait at `now_ms` (an update being applied, or
    /// finished less than `update_restart_wait` ago), and for how long.
    pub fn restart_wait(&self, account_id: &str, id: &str, now_ms: i64) -> Option<RestartWait> {
        self.read()
            .get(id)
            .filter(|e| e.live.account_id == account_id)
            .and_then(|e| e.update.as_ref())
            .and_then(|u| u.restart_wait(self.timings.update_restart_wait, now_ms))
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
            .get(id)
            .filter(|e| e.live.account_id == account_id)
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
        self.write().remove(id).map(|e| e.live)
    }

    /// The session `id` if this node holds it for `account_id`, as it opened.
    pub fn get(&self, account_id: &str, id: &str) -> Option<LiveSession> {
        self.read()
            .get(id)
            .filter(|e| e.live.account_id == account_id)
            .map(|e| e.live.clone())
    }

    /// Forgets the session `id` of `account_id` and tells its connection to close with `code`
    /// and `msg`, on behalf of `cause`; the session, if this node held it.
    pub fn close(
        &self,
        account_id: &str,
        id: &str,
        code: ErrorCode,
        msg: String,
        cause: &Cause,
    ) -> Option<LiveSession> {
        let entry = {
            let mut sessions = self.write();
            if sessions.get(id)?.live.account_id != account_id {
                return None;
            }
            sessions.remove(id)?
        };
        // A task that already ended has nothing left to close.
        let cause = cause.clone();
        let _ = entry.link.send(Control::Close { code, msg, cause });
        Some(entry.live)
    }

    /// Forgets every session, ending their connections as lost links: this node is no longer
    /// a member of the cluster (`agents::cluster`), so its agents must reconnect and register
    /// again. The number of sessions dropped.
    pub fn drop_all(&self) -> usize {
        let dropped = std::mem::take(&mut *self.write());
        dropped.len()
    }

    /// How many sessions this node holds.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether this node holds no session.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }
}

#[cfg(test)]
mod tests;
