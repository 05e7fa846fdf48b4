//! This server as a node of a cluster (docs/cluster.md): its identity (`--node-id`, the
//! `--advertise-url` other nodes reach it on), its membership in the database, kept by a
//! heartbeat, and its calls to other nodes.
//!
//! Membership: the node joins at start with a lease ([`Node::join`]) and renews it every third
//! of the lease ([`Node::spawn_heartbeat`]). The same heartbeat removes nodes whose lease ended,
//! with their sessions (`store::sessions`). A node that finds it was removed itself (it could not
//! renew in time) ends every session it holds, as lost links, and joins again: its agents
//! reconnect and register anew, so the directory never lists a session twice or one nobody holds.
//!
//! Calls: a command for, or the closing of, a session held by another node is sent to that node
//! over HTTP (`POST {advertise_url}/cluster/v1/tunnel_sessions/{id}/command|close`), with the
//! cluster secret as a Bearer token, and answered there exactly as the local path would answer
//! (`api::cluster` serves these routes). The answer is synchronous, like the local path's, so the
//! API's answers are the same wherever the agent is connected. The deletion of an API key is
//! sent to every other live node too (`POST …/cluster/v1/api_keys/forget`), which empties its
//! cache of authenticated keys before the deletion is answered.
//!
//! Rows: a node keeps the rows it reads (`store::row_cache`) only while it finds no other live
//! node, looking at join and at every heartbeat. A node joining tells every other to stop
//! keeping theirs (`POST …/cluster/v1/rows/forget`) before it answers anything; a node
//! stopping cleanly removes its row only once it has answered its last request.

use super::journal;
use crate::secret::Secret;
use crate::store::{Cause, SessionRow, Store};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::watch;
use tunnel_core::resources::tunnel_session::AgentCommand;

/// The prefix of the routes nodes call on each other.
pub const CLUSTER_PREFIX: &str = "/cluster/v1";
/// How long a call to another node may take beyond the command's own time limit.
const CALL_MARGIN: Duration = Duration::from_secs(5);

/// A command for a session, as sent to the node holding it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommandOrder {
    pub account_id: String,
    pub command: AgentCommand,
    pub cause: Cause,
}

/// The closing of a session, as sent to the node holding it: the error code and sentence its
/// agent receives, and who made it so.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CloseOrder {
    pub account_id: String,
    pub code: String,
    pub msg: String,
    pub cause: Cause,
}

/// Why a call to another node got no answer it could use.
#[derive(Debug, thiserror::Error)]
#[error("the node at {url} {why}")]
pub struct Unanswered {
    url: String,
    why: String,
    /// Whether the request may have reached the node: `false` when no connection to it could
    /// be made (refused, no route), so it surely did not.
    pub maybe_sent: bool,
}

/// This server as a node; shared (`Arc`) by the state, the channel and the heartbeat.
pub struct Node {
    pub id: String,
    /// Random, per process: a second process started with the same `--node-id` takes the
    /// membership over, and this one notices at its next heartbeat.
    incarnation: String,
    pub advertise_url: String,
    secret: Secret,
    lease: Duration,
    peers: reqwest::Client,
    /// Bumped when the node lost its membership, or left: every connection task watches it and
    /// ends.
    membership: watch::Sender<u64>,
    /// Set once the node left (shutting down): the heartbeat must not join it again.
    left: AtomicBool,
    /// Set, and notified, when another process took this node's id over: this server stops
    /// (`cli`).
    displaced: AtomicBool,
    displaced_notice: tokio::sync::Notify,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("id", &self.id)
            .field("advertise_url", &self.advertise_url)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl Node {
    pub fn new(
        id: String,
        advertise_url: String,
        secret: Secret,
        lease: Duration,
    ) -> anyhow::Result<Node> {
        let peers = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(3))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .user_agent(concat!(
                "tunnel-server/",
                env!("CARGO_PKG_VERSION"),
                " node"
            ))
            .build()?;
        let incarnation: [u8; 8] = rand::random();
        Ok(Node {
            id,
            incarnation: incarnation.iter().map(|b| format!("{b:02x}")).collect(),
            advertise_url: advertise_url.trim_end_matches('/').to_owned(),
            secret,
            lease,
            peers,
            membership: watch::Sender::new(0),
            left: AtomicBool::new(false),
            displaced: AtomicBool::new(false),
            displaced_notice: tokio::sync::Notify::new(),
        })
    }

    /// Whether an `Authorization` header carries the cluster secret (compared in constant time).
    pub fn authorised(&self, authorization: Option<&[u8]>) -> bool {
        use subtle::ConstantTimeEq as _;
        let expected = format!("Bearer {}", self.secret.expose());
        authorization.is_some_and(|given| bool::from(given.ct_eq(expected.as_bytes())))
    }

    /// Changes when this node loses its membership (see the module comment).
    pub fn membership(&self) -> watch::Receiver<u64> {
        self.membership.subscribe()
    }

    fn lease_ms(&self) -> i64 {
        i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)
    }

    /// Joins the cluster at start (see the module comment).
    pub async fn join(&self, store: &Store) -> crate::store::Result<()> {
        self.join_as(store, true).await.map(drop)
    }

    /// Resolves when another process took this node's id over (the heartbeat found its
    /// membership ended and the id held): the server must stop, or it would keep taking agents
    /// it cannot keep.
    pub async fn displaced(&self) {
        self.displaced_notice.notified().await;
    }

    /// Whether another process took this node's id over ([`Node::displaced`] has resolved).
    pub fn was_displaced(&self) -> bool {
        self.displaced.load(Ordering::SeqCst)
    }

    /// Joins; `false` when the id is held by another process (only when not `starting`: a
    /// start takes the id over).
    async fn join_as(&self, store: &Store, starting: bool) -> crate::store::Result<bool> {
        let Some(reaped) = store
            .join_cluster(
                &self.id,
                &self.incarnation,
                &self.advertise_url,
                self.lease_ms(),
                starting,
                &ended_with_node,
            )
            .await?
        else {
            return Ok(false);
        };
        if !reaped.is_empty() {
            tracing::info!(
                sessions = reaped.len(),
                "ended the sessions of a previous run"
            );
        }
        tracing::info!(node_id = %self.id, advertise_url = %self.advertise_url, "joined the cluster");
        self.announce(store).await?;
        Ok(true)
    }

    /// Just joined: has every other live node stop keeping the rows it reads
    /// (`store::row_cache`) before this one answers anything, since this one may now change
    /// them; keeps rows itself only if it found no other ([`Store::look_for_peers`]). A node
    /// that does not answer is logged, and stops at its own next heartbeat (a third of the
    /// lease). Fails when the other nodes cannot be listed: they could not be told.
    async fn announce(&self, store: &Store) -> crate::store::Result<()> {
        let urls = store.look_for_peers(&self.id).await?;
        if !urls.is_empty() {
            let on_failure = "that node may answer rows changed here as they were, until its \
                              next heartbeat";
            self.tell_peers(&urls, "rows/forget", on_failure).await;
        }
        Ok(())
    }

    /// At a heartbeat: alone, this node keeps the rows it reads; with others, or when they
    /// cannot be listed, it does not ([`Store::look_for_peers`]).
    async fn look_around(&self, store: &Store) {
        if let Err(e) = store.look_for_peers(&self.id).await {
            tracing::warn!("cannot list the other nodes: {e}");
        }
    }

    /// Leaves the cluster (a clean shutdown begins): this node's sessions leave every list at
    /// once. Its row stays until [`Node::depart`].
    pub async fn leave(&self, store: &Store) {
        self.step_aside();
        match store.leave_cluster(&self.id, &ended_with_node).await {
            Ok(ended) => {
                tracing::info!(node_id = %self.id, sessions = ended.len(), "left the cluster")
            }
            Err(e) => tracing::warn!("cannot leave the cluster cleanly: {e}"),
        }
    }

    /// Stops this node from joining again, without touching the cluster's rows: what a node
    /// whose id another process took does (the sessions of that id are the other process's).
    pub fn step_aside(&self) {
        self.left.store(true, Ordering::SeqCst);
    }

    /// The last step of a clean shutdown, once this node has answered its last request:
    /// removes its row. Until then the other nodes list it, so none keeps rows this node may
    /// still change; the one left alone keeps rows again from its next heartbeat.
    pub async fn depart(&self, store: &Store) {
        if let Err(e) = store.remove_node_row(&self.id, &self.incarnation).await {
            tracing::warn!("cannot remove this node from the cluster (its lease ends it): {e}");
            return;
        }
        // The deliveries it held are free: the other nodes send them now.
        match store.peer_urls(&self.id).await {
            Ok(urls) => {
                self.tell_peers(
                    &urls,
                    "deliveries/wake",
                    "a node may send the deliveries this one held late",
                )
                .await;
            }
            Err(e) => tracing::warn!("cannot list the other nodes to hand deliveries to: {e}"),
        }
    }

    /// Ends every agent connection of this node, as when it loses its membership: called once
    /// it has left (at the shutdown signal), so the agents reconnect (to another node of a
    /// cluster) while the server still runs, rather than when the process exits.
    pub fn end_connections(&self) {
        self.membership.send_modify(|epoch| *epoch += 1);
    }

    /// Whether [`Node::leave`] was called: the server is shutting down.
    pub fn has_left(&self) -> bool {
        self.left.load(Ordering::SeqCst)
    }

    /// Renews the lease every third of it and removes the nodes whose lease ended; runs until
    /// the runtime stops.
    pub fn spawn_heartbeat(self: Arc<Node>, store: Store) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(self.lease / 3);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                self.beat(&store).await;
            }
        })
    }

    async fn beat(&self, store: &Store) {
        if self.has_left() {
            return;
        }
        match store
            .renew_node(&self.id, &self.incarnation, self.lease_ms())
            .await
        {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(
                    node_id = %self.id,
                    "this node's membership ended: its lease ran out before it could renew it, \
                     or another server started with the same --node-id. Its sessions were \
                     removed: closing them so their agents reconnect, and joining again"
                );
                self.membership.send_modify(|epoch| *epoch += 1);
                // Without removing the rows of this node's id: any there now were registered
                // after the removal, by connections that are live.
                match self.join_as(store, false).await {
                    Ok(true) => {}
                    Ok(false) => {
                        tracing::error!(
                            node_id = %self.id,
                            "another server joined the cluster as --node-id {}: this one stops \
                             (give each server its own --node-id)",
                            self.id
                        );
                        self.displaced.store(true, Ordering::SeqCst);
                        // Stored if the server is not waiting yet: `notified` then returns.
                        self.displaced_notice.notify_one();
                    }
                    Err(e) => tracing::warn!("cannot join the cluster again: {e}"),
                }
            }
            Err(e) => tracing::warn!("cannot renew this node's lease: {e}"),
        }
        match store.reap_expired_nodes(&ended_with_node).await {
            Ok(reaped) if !reaped.nodes.is_empty() => {
                tracing::info!(
                    nodes = ?reaped.nodes,
                    sessions = reaped.sessions.len(),
                    "removed nodes that stopped renewing their lease, with their sessions; what they were sending is sent again"
                );
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("cannot remove expired nodes: {e}"),
        }
        self.look_around(store).await;
    }

    /// Has every other live node forget the API keys it recently authenticated (a key was
    /// deleted here, and this node's own cache is already empty). A node that does not answer
    /// is logged; its entries end with their time to live (`store::key_cache`). Returns how
    /// many nodes confirmed.
    pub async fn forget_api_keys_everywhere(&self, store: &Store) -> usize {
        match store.peer_urls(&self.id).await {
            Ok(urls) => {
                self.tell_peers(
                    &urls,
                    "api_keys/forget",
                    "an API key revocation may be late there",
                )
                .await
            }
            Err(e) => {
                tracing::warn!("cannot list the other nodes to revoke an API key on: {e}");
                0
            }
        }
    }

    /// Calls `path` (no body, answered `true`) on every node of `urls`, all at once, each
    /// within [`CALL_MARGIN`]; a node that does not answer is logged with `on_failure`. Returns
    /// how many confirmed.
    async fn tell_peers(&self, urls: &[String], path: &str, on_failure: &str) -> usize {
        let calls = urls
            .iter()
            .map(|url| self.call::<_, bool>(url, path, &(), CALL_MARGIN));
        let mut confirmed = 0;
        for answer in futures_util::future::join_all(calls).await {
            match answer {
                Ok(_) => confirmed += 1,
                Err(e) => tracing::warn!("{on_failure}: {e}"),
            }
        }
        confirmed
    }

    /// Sends `order` for session `id` to the node at `url`; its answer.
    pub async fn send_command<R: DeserializeOwned>(
        &self,
        url: &str,
        id: &str,
        order: &CommandOrder,
        command_timeout: Duration,
    ) -> Result<R, Unanswered> {
        self.call(
            url,
            &format!("tunnel_sessions/{id}/command"),
            order,
            command_timeout + CALL_MARGIN,
        )
        .await
    }

    /// Sends `order` to close session `id` to the node at `url`; whether that node held it.
    pub async fn send_close(
        &self,
        url: &str,
        id: &str,
        order: &CloseOrder,
    ) -> Result<bool, Unanswered> {
        self.call(
            url,
            &format!("tunnel_sessions/{id}/close"),
            order,
            CALL_MARGIN * 2,
        )
        .await
    }

    async fn call<B: Serialize, R: DeserializeOwned>(
        &self,
        url: &str,
        path: &str,
        body: &B,
        timeout: Duration,
    ) -> Result<R, Unanswered> {
        let unanswered = |why: String| Unanswered {
            url: url.to_owned(),
            why: format!("did not answer: {why}"),
            maybe_sent: true,
        };
        let response = self
            .peers
            .post(format!("{url}{CLUSTER_PREFIX}/{path}"))
            .bearer_auth(self.secret.expose())
            .json(body)
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| Unanswered {
                maybe_sent: !e.is_connect(),
                ..unanswered(e.without_url().to_string())
            })?;
        let status = response.status();
        // Refused at the door, before any work: a configuration to fix, not a blip, and
        // nothing of the request was done.
        if status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(Unanswered {
                url: url.to_owned(),
                why: "refused this node's cluster secret (HTTP 401): every node needs the same \
                      --cluster-secret"
                    .to_owned(),
                maybe_sent: false,
            });
        }
        if !status.is_success() {
            return Err(unanswered(format!("HTTP {status}")));
        }
        response
            .json()
            .await
            .map_err(|e| unanswered(e.without_url().to_string()))
    }
}

/// The `ended` event of a session removed with its node (it died, or left, or this is its
/// next run): nobody decided it, the link is gone.
fn ended_with_node(row: &SessionRow) -> crate::store::NewEvent {
    journal::ended(&row.session, "disconnected", Cause::system())
}
