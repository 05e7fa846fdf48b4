//! The tunnel sessions as the API sees them, on one node or many (docs/cluster.md): listed from
//! the directory in the database, so every node shows every live session of the account; acted
//! on where the agent is connected: on this node through its registry, on another through that
//! node ([`super::cluster`]). Whichever node a request reaches, the answer is the one the node
//! holding the agent gives.
//!
//! The closings a credential's deletion or narrowed ACL causes are decided from the directory
//! (every session of the credential, on every node, with what it bound), then carried out by
//! the node holding each session, which removes it from the directory before answering: once
//! the API has answered, no list shows it.

use super::access::acl_refusal;
use super::cluster::{CloseOrder, CommandOrder, Node};
use super::commands::{Undelivered, deliver};
use super::journal;
use super::registry::{LiveSession, Registry};
use super::updates::UpdateProgress;
use crate::config::Config;
use crate::store::{Cause, LocatedSession, PageQuery, Result, SessionRow, Store, unix_ms};
use std::collections::BTreeMap;
use std::sync::Arc;
use tunnel_core::acl::Bind;
use tunnel_core::errors::ErrorCode;
use tunnel_core::resources::tunnel_session::{AgentCommand, TunnelSession};

/// What the agent channel and the sessions API need of the server: the directory (in the
/// store), this node's connections, the node itself and the configuration. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Sessions {
    pub registry: Registry,
    pub store: Store,
    pub config: Arc<Config>,
    pub node: Arc<Node>,
}

fn now_ms() -> i64 {
    unix_ms(time::OffsetDateTime::now_utc())
}

impl Sessions {
    /// A directory row as the API shows it, with its update state at this moment.
    fn shown(&self, row: SessionRow) -> TunnelSession {
        let mut session = row.session;
        let wait = self.registry.timings().update_restart_wait;
        session.agent_update_state = row
            .update_state
            .and_then(|json| serde_json::from_str::<UpdateProgress>(&json).ok())
            .map(|progress| progress.shown(wait, now_ms()));
        session
    }

    /// Registers a session without a connection on this node, in the directory and the
    /// registry (tests of the listing routes and of backends): commands to it find no one to
    /// answer them and end as if the session had just ended.
    pub async fn register(&self, live: LiveSession) -> Result<()> {
        let row = SessionRow {
            session: live.session.clone(),
            account_id: live.account_id.clone(),
            credential_id: live.credential_id.clone(),
            node_id: self.node.id.clone(),
            binds: live.binds.iter().map(ToString::to_string).collect(),
            update_state: None,
        };
        let started = journal::started(&row.session, Cause::system());
        self.registry.insert(live);
        self.store.open_session(&row, started).await
    }

    /// One page of the account's live sessions (those holding the page's search, if any),
    /// newest first, and whether more follow.
    pub async fn list(
        &self,
        account_id: &str,
        page: &PageQuery,
    ) -> Result<(Vec<TunnelSession>, bool)> {
        let mut rows = self.store.live_sessions_page(account_id, page).await?;
        let limit = page.limit as usize;
        let more = rows.len() > limit;
        rows.truncate(limit);
        Ok((rows.into_iter().map(|s| self.shown(s.row)).collect(), more))
    }

    /// The live session `id` of the account.
    pub async fn get(&self, account_id: &str, id: &str) -> Result<Option<TunnelSession>> {
        Ok(self
            .store
            .live_session(account_id, id)
            .await?
            .map(|s| self.shown(s.row)))
    }

    /// Sends `command` to the session `id` of `account_id`, wherever its agent is connected,
    /// and waits for the answer.
    pub async fn command(
        &self,
        account_id: &str,
        id: &str,
        command: AgentCommand,
        cause: &Cause,
    ) -> std::result::Result<(), Undelivered> {
        let located = match self.store.live_session(account_id, id).await {
            Ok(Some(located)) => located,
            Ok(None) => return Err(Undelivered::NotFound),
            Err(e) => {
                tracing::error!(error = %e, "cannot look a session up");
                return Err(Undelivered::NotSent);
            }
        };
        if located.row.node_id == self.node.id {
            return self.command_here(account_id, id, command, cause).await;
        }
        let order = CommandOrder {
            account_id: account_id.to_owned(),
            command,
            cause: cause.clone(),
        };
        let timeout = self.registry.timings().command_timeout;
        self.node
            .send_command(&located.node_url, id, &order, timeout)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(node_id = %located.row.node_id, "{e}");
                Err(if e.maybe_sent {
                    Undelivered::Unreachable
                } else {
                    Undelivered::NotSent
                })
            })
    }

    /// Delivers `command` to a session whose agent this node holds. An accepted stop or
    /// restart has left the directory by the time this returns: the connection task ends the
    /// session there before it passes the acknowledgement on.
    pub async fn command_here(
        &self,
        account_id: &str,
        id: &str,
        command: AgentCommand,
        cause: &Cause,
    ) -> std::result::Result<(), Undelivered> {
        deliver(&self.registry, account_id, id, command, cause).await
    }

    /// Closes every live session of `credential_id` (deleted), on every node.
    pub async fn close_credential(
        &self,
        account_id: &str,
        credential_id: &str,
        cause: &Cause,
    ) -> usize {
        let msg = format!("The credential {credential_id} of this session was deleted.");
        self.close_where(account_id, credential_id, cause, |_| {
            Some((ErrorCode::CredentialDeleted, msg.clone()))
        })
        .await
    }

    /// Closes every live session of `credential_id` whose binds the credential's ACL `acl`
    /// (as stored now) refuses, on every node; the others stay (docs/acl.md).
    pub async fn close_refused(
        &self,
        account_id: &str,
        credential_id: &str,
        cause: &Cause,
        acl: &[String],
    ) -> usize {
        self.close_where(account_id, credential_id, cause, |binds| {
            acl_refusal(acl, binds)
        })
        .await
    }

    /// Closes the sessions of the credential to which `verdict` gives a code and sentence;
    /// how many were closed.
    async fn close_where(
        &self,
        account_id: &str,
        credential_id: &str,
        cause: &Cause,
        verdict: impl Fn(&[Bind]) -> Option<(ErrorCode, String)>,
    ) -> usize {
        let sessions = match self
            .store
            .credential_sessions(account_id, credential_id)
            .await
        {
            Ok(sessions) => sessions,
            Err(e) => {
                tracing::error!(error = %e, credential_id, "cannot look up the credential's sessions");
                return 0;
            }
        };
        let mut closed = 0;
        for located in sessions {
            let binds = parsed_binds(&located.row.binds);
            let Some((code, msg)) = verdict(&binds) else {
                continue;
            };
            if self.close(&located, code, msg, cause).await {
                closed += 1;
            }
        }
        closed
    }

    /// Has the node holding `located` close it.
    async fn close(
        &self,
        located: &LocatedSession,
        code: ErrorCode,
        msg: String,
        cause: &Cause,
    ) -> bool {
        let (account_id, id) = (&located.row.account_id, &located.row.session.id);
        if located.row.node_id == self.node.id {
            return self.close_here(account_id, id, code, msg, cause).await;
        }
        let order = CloseOrder {
            account_id: account_id.clone(),
            code: code.as_str().to_owned(),
            msg,
            cause: cause.clone(),
        };
        self.node
            .send_close(&located.node_url, id, &order)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(node_id = %located.row.node_id, session_id = %id, "cannot close a session: {e}");
                false
            })
    }

    /// Closes a session whose agent this node holds: the agent is told why, and the session
    /// leaves the directory with its `ended` event before this returns.
    pub async fn close_here(
        &self,
        account_id: &str,
        id: &str,
        code: ErrorCode,
        msg: String,
        cause: &Cause,
    ) -> bool {
        let Some(live) = self.registry.close(account_id, id, code, msg, cause) else {
            return false;
        };
        let reason = ended_reason(code);
        let event = journal::ended(&live.session, reason, cause.clone());
        if let Err(e) = self.store.end_session(account_id, id, vec![event]).await {
            tracing::error!(error = %e, session_id = %id, "cannot record a session's end");
        }
        true
    }

    /// The account's live sessions with what each bound, to select them by label.
    pub async fn labelled(&self, account_id: &str) -> Result<Labelled> {
        let sessions = self.store.account_sessions(account_id).await?;
        Ok(Labelled(
            sessions
                .into_iter()
                .map(|s| (s.row.session.id, parsed_binds(&s.row.binds)))
                .collect(),
        ))
    }
}

/// An account's live sessions, newest first, with their binds.
#[derive(Debug)]
pub struct Labelled(Vec<(String, Vec<Bind>)>);

impl Labelled {
    /// The ids of the sessions whose agent bound every one of `labels` (`key=value` binds,
    /// compared exactly), newest first: the tunnels of a tunnel-group backend
    /// (docs/api/backends.md). No labels select no session.
    pub fn with_labels(&self, labels: &BTreeMap<String, String>) -> Vec<String> {
        if labels.is_empty() {
            return Vec::new();
        }
        self.0
            .iter()
            .filter(|(_, binds)| {
                labels.iter().all(|(key, value)| {
                    binds.iter().any(|bind| {
                        matches!(bind, Bind::Label { key: k, value: v } if k == key && v == value)
                    })
                })
            })
            .map(|(id, _)| id.clone())
            .collect()
    }
}

/// The binds of a directory row; a bind that no longer parses is left out (it was checked when
/// the agent said hello).
fn parsed_binds(binds: &[String]) -> Vec<Bind> {
    binds.iter().filter_map(|b| Bind::parse(b).ok()).collect()
}

/// The `ended` reason of a session the server closed with `code`.
pub fn ended_reason(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::CredentialDeleted => "credential_deleted",
        _ => "acl_changed",
    }
}
