//! The live tunnel sessions and the nodes holding them (docs/cluster.md): the directory every
//! node of an installation reads, while the connections themselves stay in the memory of the
//! node that accepted them (`agents::Registry`).
//!
//! A node joins with a lease that its heartbeat renews; a session row names its node. Reads
//! show only the sessions of nodes whose lease has not ended, so the sessions of a node that
//! died leave every list when its lease does. The first node to notice then removes the dead
//! node ([`Store::reap_expired_nodes`]): its sessions, each with its `ended` event, and the
//! webhook delivery leases it held, in one write transaction, so exactly one node records each
//! end. Lease times are read on the database's clock ([`Dialect::now_ms`]), so nodes need not
//! agree on the time.

use super::events::NewEvent;
use super::records::page_filter;
use super::{PageQuery, Result, Store, WriteTx, now_rfc3339};
use sqlx::Row as _;
use sqlx::any::AnyRow;
use tunnel_core::resources::tunnel_session::TunnelSession;

/// The columns a search of the sessions (`q`) looks in (`super::search`): copies of the wire
/// form's values a user searches by (migration 10), not the wire form itself, whose field names,
/// `uri`s and region would match every session.
pub(super) const SEARCH: &[&str] = &[
    "id",
    "credential_id",
    "ip",
    "os",
    "agent_version",
    "metadata",
];

/// A session as the directory holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    /// The wire form as the session opened (its `agent_update_state` is not kept here).
    pub session: TunnelSession,
    pub account_id: String,
    pub credential_id: String,
    /// The node whose connection holds the agent.
    pub node_id: String,
    /// What the agent bound, as text (`tunnel_core::acl::Bind`'s form).
    pub binds: Vec<String>,
    /// The agent's last update report as the owning node recorded it (JSON), if any.
    pub update_state: Option<String>,
}

/// A live session and where its node is reached.
#[derive(Debug, Clone, PartialEq)]
pub struct LocatedSession {
    pub row: SessionRow,
    /// The owning node's `--advertise-url`.
    pub node_url: String,
}

/// The `ended` event of a session removed with its node; built by the agent service.
pub type EndedEvent<'a> = &'a (dyn Fn(&SessionRow) -> NewEvent + Send + Sync);

const COLUMNS: &str = "s.id, s.account_id, s.credential_id, s.node_id, s.session, s.binds, \
                       s.update_state, n.advertise_url";

fn session_row(row: &AnyRow) -> Result<LocatedSession> {
    let json = |column: &str| -> Result<String> { Ok(row.try_get(column)?) };
    let session: TunnelSession =
        serde_json::from_str(&json("session")?).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    let binds: Vec<String> =
        serde_json::from_str(&json("binds")?).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    Ok(LocatedSession {
        row: SessionRow {
            session,
            account_id: row.try_get("account_id")?,
            credential_id: row.try_get("credential_id")?,
            node_id: row.try_get("node_id")?,
            binds,
            update_state: row.try_get("update_state")?,
        },
        node_url: row.try_get("advertise_url")?,
    })
}

/// What [`Store::reap_expired_nodes`] removed.
#[derive(Debug, Default)]
pub struct Reaped {
    /// The ids of the nodes whose lease had ended.
    pub nodes: Vec<String>,
    /// Their sessions.
    pub sessions: Vec<SessionRow>,
}

impl Store {
    /// Joins node `id` (this process's `incarnation` of it), reachable at `advertise_url`, with a
    /// lease of `lease_ms`. At a process's start (`starting`), what a previous run of the same
    /// node left (sessions, delivery leases) is removed first; on SQLite, whose file one server
    /// alone uses, so is every other node's. A process joining again after it lost its
    /// membership removes nothing: the rows of its id are its live connections. `None` when the
    /// id is taken: another process started as the same node and holds it.
    pub async fn join_cluster(
        &self,
        id: &str,
        incarnation: &str,
        advertise_url: &str,
        lease_ms: i64,
        starting: bool,
        ended: EndedEvent<'_>,
    ) -> Result<Option<Vec<SessionRow>>> {
        let mut tx = self.write_tx().await?;
        let gone: Vec<String> = if !starting {
            Vec::new()
        } else if self.dialect == super::Dialect::Sqlite {
            sqlx::query_scalar("SELECT id FROM cluster_nodes")
                .fetch_all(&mut *tx)
                .await?
        } else {
            vec![id.to_owned()]
        };
        let mut reaped = Vec::new();
        for node in gone {
            reaped.extend(self.remove_node(&mut tx, &node, ended).await?);
        }
        // A row of this id still there (rejoining, not starting) belongs to another process
        // that started as the same node: `None`, and nothing is written.
        let sql = format!(
            "INSERT INTO cluster_nodes (id, advertise_url, incarnation, joined_at, lease_until)
             VALUES ($1, $2, $5, $3, {} + $4) ON CONFLICT (id) DO NOTHING",
            self.dialect.now_ms()
        );
        let inserted = sqlx::query(&sql)
            .bind(id)
            .bind(advertise_url)
            .bind(now_rfc3339())
            .bind(lease_ms)
            .bind(incarnation)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if inserted == 0 {
            return Ok(None);
        }
        if starting {
            // Leases of no node: taken by a run that left without freeing them (it stopped
            // before its worker had, or it predates the freeing at `remove_node_row`).
            sqlx::query(
                "UPDATE event_deliveries SET lease_until = NULL, lease_node = NULL
                 WHERE state = 'pending' AND lease_node IS NOT NULL
                   AND lease_node NOT IN (SELECT id FROM cluster_nodes)",
            )
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(Some(reaped))
    }

    /// Renews the lease of node `id` as `incarnation` joined it for `lease_ms`; `false` when
    /// that membership is over (its lease ended and another node removed it with its sessions,
    /// or another process joined as the same node).
    pub async fn renew_node(&self, id: &str, incarnation: &str, lease_ms: i64) -> Result<bool> {
        let mut tx = self.write_tx().await?;
        let sql = format!(
            "UPDATE cluster_nodes SET lease_until = {} + $1 WHERE id = $2 AND incarnation = $3",
            self.dialect.now_ms()
        );
        let done = sqlx::query(&sql)
            .bind(lease_ms)
            .bind(id)
            .bind(incarnation)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// Removes every node whose lease has ended, with its sessions (and their `ended` events)
    /// and its delivery leases; the nodes and the sessions removed. Reads first, without the
    /// write lock, so a healthy cluster's heartbeats cost one read. The deliveries those nodes
    /// held are free at once: this process's delivery worker is woken to send them.
    pub async fn reap_expired_nodes(&self, ended: EndedEvent<'_>) -> Result<Reaped> {
        let sql = format!(
            "SELECT id FROM cluster_nodes WHERE lease_until < {}",
            self.dialect.now_ms()
        );
        let mut reaped = Reaped::default();
        let expired: Vec<String> = sqlx::query_scalar(&sql).fetch_all(&self.pool).await?;
        if expired.is_empty() {
            return Ok(reaped);
        }
        let mut tx = self.write_tx().await?;
        // Looked at again under the lock: a node may have renewed, or been removed, meanwhile.
        reaped.nodes = sqlx::query_scalar(&sql).fetch_all(&mut *tx).await?;
        for node in &reaped.nodes {
            reaped
                .sessions
                .extend(self.remove_node(&mut tx, node, ended).await?);
        }
        tx.commit().await?;
        if !reaped.nodes.is_empty() {
            self.wake_deliveries();
        }
        Ok(reaped)
    }

    /// The advertise URLs of the nodes other than `id` whose lease runs.
    pub async fn peer_urls(&self, id: &str) -> Result<Vec<String>> {
        let sql = format!(
            "SELECT advertise_url FROM cluster_nodes WHERE id <> $1 AND lease_until >= {}",
            self.dialect.now_ms()
        );
        Ok(sqlx::query_scalar(&sql)
            .bind(id)
            .fetch_all(&self.pool)
            .await?)
    }

    /// The advertised URLs of the live nodes other than `id`. On PostgreSQL it also switches
    /// the row cache (`row_cache.rs`): while there is no other node, this process keeps the rows
    /// it reads; once there is one, or when they cannot be listed, it stops and forgets them
    /// (another server may change them). A SQLite file has one server: its cache is left as it
    /// is.
    pub async fn look_for_peers(&self, id: &str) -> Result<Vec<String>> {
        if self.dialect == super::Dialect::Sqlite {
            return self.peer_urls(id).await;
        }
        let epoch = self.rows.epoch();
        let peers = self.peer_urls(id).await;
        match &peers {
            Ok(urls) if urls.is_empty() => self.rows.resume(epoch),
            _ => self.rows.stop(),
        }
        peers
    }

    /// Forgets the rows read and stops keeping them: another node joined the cluster, and may
    /// change them.
    pub fn forget_rows(&self) {
        self.rows.stop();
    }

    /// Node `id` leaves (a clean shutdown begins): its sessions end at once, recorded with
    /// `ended`. Its row stays until [`Store::remove_node_row`], once it has answered its last
    /// request: until then the other nodes see it, and keep no rows it may still change.
    pub async fn leave_cluster(&self, id: &str, ended: EndedEvent<'_>) -> Result<Vec<SessionRow>> {
        let mut tx = self.write_tx().await?;
        let reaped = self.end_node_sessions(&mut tx, id, ended).await?;
        tx.commit().await?;
        Ok(reaped)
    }

    /// Removes the row of node `id` as `incarnation` joined it (not a later process's of the
    /// same id), and frees the webhook delivery leases it still holds: the last write of a
    /// clean shutdown, once its delivery worker has stopped (what it had in flight recorded).
    pub async fn remove_node_row(&self, id: &str, incarnation: &str) -> Result<()> {
        let mut tx = self.write_tx().await?;
        let removed = sqlx::query("DELETE FROM cluster_nodes WHERE id = $1 AND incarnation = $2")
            .bind(id)
            .bind(incarnation)
            .execute(&mut *tx)
            .await?;
        // A later process of the same id holds the leases of that id now.
        if removed.rows_affected() == 1 {
            Self::free_leases(&mut tx, id).await?;
        }
        tx.commit().await
    }

    /// Removes node `node` (its lease ended): its sessions ([`Store::end_node_sessions`]),
    /// its webhook delivery leases, then its row.
    async fn remove_node(
        &self,
        tx: &mut WriteTx,
        node: &str,
        ended: EndedEvent<'_>,
    ) -> Result<Vec<SessionRow>> {
        let sessions = self.end_node_sessions(tx, node, ended).await?;
        Self::free_leases(tx, node).await?;
        sqlx::query("DELETE FROM cluster_nodes WHERE id = $1")
            .bind(node)
            .execute(&mut **tx)
            .await?;
        Ok(sessions)
    }

    /// Frees the webhook delivery leases of node `node`: what it was sending is sent again, by
    /// any node.
    async fn free_leases(tx: &mut WriteTx, node: &str) -> Result<()> {
        sqlx::query(
            "UPDATE event_deliveries SET lease_until = NULL, lease_node = NULL
             WHERE lease_node = $1 AND state = 'pending'",
        )
        .bind(node)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Ends the sessions of node `node` (each with its `ended` event); the sessions ended. Its
    /// webhook delivery leases stay: a node leaving cleanly is still sending what it claimed.
    async fn end_node_sessions(
        &self,
        tx: &mut WriteTx,
        node: &str,
        ended: EndedEvent<'_>,
    ) -> Result<Vec<SessionRow>> {
        let rows = sqlx::query(
            "SELECT s.id, s.account_id, s.credential_id, s.node_id, s.session, s.binds,
                    s.update_state, '' AS advertise_url
             FROM tunnel_sessions s WHERE s.node_id = $1 ORDER BY s.id",
        )
        .bind(node)
        .fetch_all(&mut **tx)
        .await?;
        let sessions: Vec<SessionRow> = rows
            .iter()
            .map(|row| session_row(row).map(|s| s.row))
            .collect::<Result<_>>()?;
        for session in &sessions {
            self.emit(tx, &session.account_id, ended(session)).await?;
        }
        sqlx::query("DELETE FROM tunnel_sessions WHERE node_id = $1")
            .bind(node)
            .execute(&mut **tx)
            .await?;
        if !sessions.is_empty() {
            tracing::info!(node, sessions = sessions.len(), "removed a node's sessions");
        }
        Ok(sessions)
    }

    /// Registers `row`, with its `started` event.
    pub async fn open_session(&self, row: &SessionRow, started: NewEvent) -> Result<()> {
        let mut tx = self.write_tx().await?;
        sqlx::query(
            "INSERT INTO tunnel_sessions (id, account_id, credential_id, node_id, session, binds, update_state, ip, os, agent_version, metadata)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(&row.session.id)
        .bind(&row.account_id)
        .bind(&row.credential_id)
        .bind(&row.node_id)
        .bind(serde_json::to_string(&row.session).unwrap_or_default())
        .bind(serde_json::to_string(&row.binds).unwrap_or_default())
        .bind(&row.update_state)
        .bind(&row.session.ip)
        .bind(&row.session.os)
        .bind(&row.session.agent_version)
        .bind(&row.session.metadata)
        .execute(&mut *tx)
        .await?;
        self.emit(&mut tx, &row.account_id, started).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Removes session `id` with its `events` (its `ended` event, after the accepted command
    /// that ended it if any); `false` (and no event) when it was already gone (removed with its
    /// node).
    pub async fn end_session(
        &self,
        account_id: &str,
        id: &str,
        events: Vec<NewEvent>,
    ) -> Result<bool> {
        let mut tx = self.write_tx().await?;
        let done = sqlx::query("DELETE FROM tunnel_sessions WHERE account_id = $1 AND id = $2")
            .bind(account_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let removed = done.rows_affected() == 1;
        if removed {
            for event in events {
                self.emit(&mut tx, account_id, event).await?;
            }
        }
        tx.commit().await?;
        Ok(removed)
    }

    /// Records the agent's update report of session `id` (JSON).
    pub async fn set_session_update(&self, id: &str, update_state: &str) -> Result<()> {
        let mut tx = self.write_tx().await?;
        sqlx::query("UPDATE tunnel_sessions SET update_state = $1 WHERE id = $2")
            .bind(update_state)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The live sessions matching `filter` (a condition on `s`, with parameters from `$2`
    /// bound by `bind`), of the account `$1`, on nodes whose lease runs, newest first unless
    /// `direction` is `ASC`.
    async fn live_sessions(
        &self,
        account_id: &str,
        filter: &str,
        limit: Option<u32>,
        direction: &str,
        binds: &[&str],
    ) -> Result<Vec<LocatedSession>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM tunnel_sessions s JOIN cluster_nodes n ON n.id = s.node_id
             WHERE s.account_id = $1 AND n.lease_until >= {} {filter}
             ORDER BY s.id {direction}{}",
            self.dialect.now_ms(),
            limit.map_or(String::new(), |n| format!(" LIMIT {n}"))
        );
        let mut query = sqlx::query(&sql).bind(account_id);
        for value in binds {
            query = query.bind(*value);
        }
        let rows = self
            .reading(async |conn| Ok(query.fetch_all(conn).await?))
            .await?;
        rows.iter().map(session_row).collect()
    }

    /// The live session `id` of the account, and where its node is.
    pub async fn live_session(&self, account_id: &str, id: &str) -> Result<Option<LocatedSession>> {
        Ok(self
            .live_sessions(account_id, "AND s.id = $2", None, "DESC", &[id])
            .await?
            .pop())
    }

    /// One page of the account's live sessions (those holding the page's search, if any),
    /// newest first (or oldest, as the page asks): `limit + 1` of them at most, so the caller knows whether more follow.
    pub async fn live_sessions_page(
        &self,
        account_id: &str,
        page: &PageQuery,
    ) -> Result<Vec<LocatedSession>> {
        // `$1` is the account (`live_sessions`).
        let (filter, binds) = page_filter(self.dialect, "tunnel_sessions", "s.", SEARCH, page, 2);
        let binds: Vec<&str> = binds.iter().map(String::as_str).collect();
        let direction = page.direction();
        self.live_sessions(account_id, &filter, Some(page.limit + 1), direction, &binds)
            .await
    }

    /// The live sessions of the account opened with `credential_id`.
    pub async fn credential_sessions(
        &self,
        account_id: &str,
        credential_id: &str,
    ) -> Result<Vec<LocatedSession>> {
        self.live_sessions(
            account_id,
            "AND s.credential_id = $2",
            None,
            "DESC",
            &[credential_id],
        )
        .await
    }

    /// Every live session of the account (tunnel-group backends select among them by label).
    pub async fn account_sessions(&self, account_id: &str) -> Result<Vec<LocatedSession>> {
        self.live_sessions(account_id, "", None, "DESC", &[]).await
    }
}
