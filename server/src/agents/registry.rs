//! The registry of live tunnel sessions: in memory, because only connected sessions exist
//! (DESIGN §7) and a restart of the server disconnects every agent anyway.
//!
//! Sessions are kept in a map ordered by id; ids sort by creation time, so "newest first" is
//! a reverse walk and `before_id` a range bound, like the store's keyset pagination.
//!
//! Next to each session the registry keeps the sending half of its connection's control queue:
//! commands from the API and "close" (credential deleted) reach the connection task through it,
//! and the task answers a command through the one-shot reply it carries.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tunnel_core::agent_protocol::Refusal;
use tunnel_core::errors::ErrorCode;
use tunnel_core::resources::tunnel_session::{AgentCommand, TunnelSession};

/// One connected session with what the API does not show: its account and credential.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveSession {
    pub session: TunnelSession,
    pub account_id: String,
    pub credential_id: String,
}

/// What the API asks of a session's connection task.
#[derive(Debug)]
pub enum Control {
    /// Deliver a command; the reply says how the agent acknowledged it.
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
    /// No such session in the account (or it disconnected).
    NotFound,
    /// The agent refused.
    Refused(Refusal),
    /// No acknowledgement in time, or the connection dropped before one came.
    Timeout,
}

/// Timings of the agent channel. Tests shorten them; the defaults suit real networks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timings {
    /// How long an API call waits for the agent's acknowledgement before answering 504.
    pub command_timeout: Duration,
    /// Interval of the server's WebSocket pings; three silent intervals end the session.
    pub heartbeat: Duration,
    /// How long an agent has to send its hello after the WebSocket opened.
    pub hello_timeout: Duration,
}

impl Default for Timings {
    fn default() -> Timings {
        Timings {
            command_timeout: Duration::from_secs(10),
            heartbeat: Duration::from_secs(15),
            hello_timeout: Duration::from_secs(10),
        }
    }
}

/// Shared, cheap to clone. Locks are never held across an `.await`.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    sessions: Arc<RwLock<BTreeMap<String, LiveSession>>>,
    links: Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Control>>>>,
    timings: Timings,
}

impl Registry {
    /// A registry with other timings than the defaults (tests).
    pub fn with_timings(timings: Timings) -> Registry {
        Registry {
            timings,
            ..Registry::default()
        }
    }

    pub fn timings(&self) -> Timings {
        self.timings
    }

    fn links(&self) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::UnboundedSender<Control>>> {
        self.links.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a connected session and returns the queue its connection task serves.
    pub fn open(&self, live: LiveSession) -> mpsc::UnboundedReceiver<Control> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.links().insert(live.session.id.clone(), tx);
        self.insert(live);
        rx
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
        if self.get(account_id, id).is_none() {
            return Err(CommandError::NotFound);
        }
        let link = self
            .links()
            .get(id)
            .cloned()
            .ok_or(CommandError::NotFound)?;
        let (reply, answer) = oneshot::channel();
        link.send(Control::Command {
            command,
            target_version,
            reply,
        })
        .map_err(|_| CommandError::NotFound)?;
        match tokio::time::timeout(self.timings.command_timeout, answer).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(refusal))) => Err(CommandError::Refused(refusal)),
            // The connection task dropped the reply: the link went away before an answer.
            Ok(Err(_)) | Err(_) => Err(CommandError::Timeout),
        }
    }
    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, LiveSession>> {
        self.sessions.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, LiveSession>> {
        self.sessions.write().unwrap_or_else(|e| e.into_inner())
    }

    pub fn insert(&self, live: LiveSession) {
        self.write().insert(live.session.id.clone(), live);
    }

    pub fn remove(&self, id: &str) -> Option<LiveSession> {
        self.links().remove(id);
        self.write().remove(id)
    }

    /// The session `id` if it belongs to `account_id`.
    pub fn get(&self, account_id: &str, id: &str) -> Option<TunnelSession> {
        self.read()
            .get(id)
            .filter(|l| l.account_id == account_id)
            .map(|l| l.session.clone())
    }

    /// The whole entry of a session of `account_id` (credential id included).
    pub fn get_live(&self, account_id: &str, id: &str) -> Option<LiveSession> {
        self.read()
            .get(id)
            .filter(|l| l.account_id == account_id)
            .cloned()
    }

    /// One page of the account's sessions, newest first, and whether more follow.
    pub fn list(
        &self,
        account_id: &str,
        limit: usize,
        before_id: Option<&str>,
    ) -> (Vec<TunnelSession>, bool) {
        let sessions = self.read();
        use std::ops::Bound;
        let upper = before_id.map_or(Bound::Unbounded, Bound::Excluded);
        let range = sessions.range::<str, _>((Bound::Unbounded, upper));
        let mut page: Vec<TunnelSession> = range
            .rev()
            .filter(|(_, l)| l.account_id == account_id)
            .take(limit + 1)
            .map(|(_, l)| l.session.clone())
            .collect();
        let more = page.len() > limit;
        page.truncate(limit);
        (page, more)
    }

    /// Removes (and returns) every session opened with `credential_id` and tells their
    /// connections to close: deleting a credential disconnects its sessions (DESIGN §7).
    pub fn close_credential(&self, credential_id: &str) -> Vec<LiveSession> {
        let removed: Vec<LiveSession> = {
            let mut sessions = self.write();
            let ids: Vec<String> = sessions
                .values()
                .filter(|l| l.credential_id == credential_id)
                .map(|l| l.session.id.clone())
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        let mut links = self.links();
        for live in &removed {
            if let Some(link) = links.remove(&live.session.id) {
                // A task that already ended has nothing left to close.
                let _ = link.send(Control::Close {
                    code: ErrorCode::CredentialDeleted,
                    msg: format!("The credential {credential_id} of this session was deleted."),
                });
            }
        }
        removed
    }
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
            },
            account_id: account.into(),
            credential_id: credential.into(),
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
}
