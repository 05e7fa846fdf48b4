//! Webhook deliveries (docs/api/event_destinations.md, deliveries): `events::emit` queues one per
//! event and subscribed destination; the delivery workers (`crate::webhooks`) claim the due ones
//! with a lease, and record each attempt with the delivery's new state in one transaction.
//!
//! The lease is what makes delivery at-least-once across crashes: a claimed delivery is only
//! hidden from other claims until its lease ends, so one whose worker died (the server was
//! killed mid-send) is claimed again once the lease expires, or as soon as its node is removed
//! from the cluster (`store::sessions`), which frees the leases the node held.

use super::PageQuery;
use super::database::placeholders;
use super::event_destinations::DestinationRow;
use super::records::not_found;
use super::{Result, Store};
use sqlx::AnyConnection;
use sqlx::Row as _;
use tunnel_core::resources::event_destination::{DeliveryAttempt, DeliveryState, EventTarget};

/// A delivery claimed for one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    pub id: String,
    pub account_id: String,
    pub event_id: String,
    pub destination_id: String,
    /// The attempts made before this one.
    pub attempt_count: u32,
}

/// What an attempt did to its delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    Succeeded,
    /// Failed; the next attempt is due then (Unix ms).
    RetryAt(i64),
    /// Failed, and no attempt is left.
    Failed,
}

/// A delivery as listed, with its attempts, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryRow {
    pub id: String,
    pub event_id: String,
    pub event_type: String,
    pub created_at: String,
    pub state: DeliveryState,
    /// Unix ms, while pending.
    pub next_attempt_at: Option<i64>,
    pub attempts: Vec<DeliveryAttempt>,
}

/// The destinations and accounts a claim leaves aside: those whose sends in flight on this node
/// already fill their share of the senders (`webhooks`), so that one slow receiver, or one
/// account's, cannot hold every sender while others' deliveries wait.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BusyTargets {
    pub destinations: Vec<String>,
    pub accounts: Vec<String>,
}

impl BusyTargets {
    /// Whether nothing is left aside.
    pub fn is_empty(&self) -> bool {
        self.destinations.is_empty() && self.accounts.is_empty()
    }

    /// `AND destination_id NOT IN (…) AND account_id NOT IN (…)` with placeholders numbered
    /// from `$first`, and the values to bind in their order.
    fn condition(&self, first: usize) -> (String, Vec<&str>) {
        let mut sql = String::new();
        let mut values = Vec::new();
        for (column, ids) in [
            ("destination_id", &self.destinations),
            ("account_id", &self.accounts),
        ] {
            if ids.is_empty() {
                continue;
            }
            let marks = placeholders(first + values.len(), ids.len());
            sql.push_str(&format!(" AND {column} NOT IN ({marks})"));
            values.extend(ids.iter().map(String::as_str));
        }
        (sql, values)
    }
}

impl Store {
    /// Claims up to `limit` due deliveries (pending, due at `now_ms`, not leased by a worker,
    /// not to a `busy` destination or account) for node `node_id` until `lease_until_ms`,
    /// oldest due first. One statement in one write transaction, which holds the database's
    /// write lock, so two workers never claim the same delivery, whichever nodes they run on.
    pub async fn claim_deliveries(
        &self,
        node_id: &str,
        now_ms: i64,
        lease_until_ms: i64,
        limit: u32,
        busy: &BusyTargets,
    ) -> Result<Vec<ClaimedDelivery>> {
        let (busy_sql, busy_values) = busy.condition(6);
        let sql = format!(
            "UPDATE event_deliveries SET lease_until = $1, lease_node = $5
             WHERE id IN (SELECT id FROM event_deliveries
                 WHERE state = 'pending' AND next_attempt_at <= $2
                   AND (lease_until IS NULL OR lease_until < $3){busy_sql}
                 ORDER BY next_attempt_at LIMIT $4)
             RETURNING id, account_id, event_id, destination_id, attempt_count"
        );
        let mut tx = self.write_tx().await?;
        let mut query = sqlx::query(&sql)
            .bind(lease_until_ms)
            .bind(now_ms)
            .bind(now_ms)
            .bind(i64::from(limit))
            .bind(node_id);
        for value in busy_values {
            query = query.bind(value);
        }
        let rows = query.fetch_all(&mut *tx).await?;
        tx.commit().await?;
        let mut claimed = rows
            .iter()
            .map(|row| {
                Ok(ClaimedDelivery {
                    id: row.try_get("id")?,
                    account_id: row.try_get("account_id")?,
                    event_id: row.try_get("event_id")?,
                    destination_id: row.try_get("destination_id")?,
                    attempt_count: row
                        .try_get::<i64, _>("attempt_count")?
                        .try_into()
                        .unwrap_or(0),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        // RETURNING gives no order; sending the oldest first is what a receiver expects.
        claimed.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(claimed)
    }

    /// When the next delivery may be claimed (Unix ms): the earliest due time of a pending
    /// delivery not to a `busy` destination or account, or the end of its lease when later.
    /// `None` when nothing is pending.
    pub async fn next_delivery_due(&self, busy: &BusyTargets) -> Result<Option<i64>> {
        let (busy_sql, busy_values) = busy.condition(1);
        let sql = format!(
            "SELECT MIN(CASE WHEN lease_until > next_attempt_at THEN lease_until ELSE next_attempt_at END)
             FROM event_deliveries
             WHERE state = 'pending'{busy_sql}"
        );
        let mut query = sqlx::query_scalar(&sql);
        for value in busy_values {
            query = query.bind(value);
        }
        Ok(query.fetch_one(&self.pool).await?)
    }

    /// Gives back deliveries node `node_id` claimed but will not send now (their destination
    /// or account filled its share meanwhile): claimable again at once, by any node.
    pub async fn release_deliveries(&self, node_id: &str, ids: &[String]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let sql = format!(
            "UPDATE event_deliveries SET lease_until = NULL, lease_node = NULL
             WHERE lease_node = $1 AND id IN ({})",
            placeholders(2, ids.len())
        );
        let mut tx = self.write_tx().await?;
        let mut query = sqlx::query(&sql).bind(node_id);
        for id in ids {
            query = query.bind(id.as_str());
        }
        query.execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Where a delivery goes: the destination's target.
    pub async fn destination_target(&self, account_id: &str, id: &str) -> Result<EventTarget> {
        let target: Option<String> = sqlx::query_scalar(
            "SELECT target FROM event_destinations WHERE account_id = $1 AND id = $2",
        )
        .bind(account_id)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        let target = target.ok_or_else(|| not_found::<DestinationRow>(id))?;
        serde_json::from_str(&target).map_err(|e| sqlx::Error::Decode(Box::new(e)).into())
    }

    /// Records attempt number `attempt` of the delivery and what it did to the delivery, in one
    /// transaction (the lease ends with it). A delivery no longer pending is left as it is.
    pub async fn record_attempt(
        &self,
        delivery_id: &str,
        attempt: u32,
        record: &DeliveryAttempt,
        outcome: AttemptOutcome,
    ) -> Result<()> {
        let mut tx = self.write_tx().await?;
        // A crash between sending and recording sends the same attempt again: the later record
        // of the same number replaces the earlier.
        sqlx::query(
            "INSERT INTO event_delivery_attempts
                (delivery_id, attempt, attempted_at, status_code, latency_ms, error, response_body)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (delivery_id, attempt) DO UPDATE SET attempted_at = excluded.attempted_at,
                status_code = excluded.status_code, latency_ms = excluded.latency_ms,
                error = excluded.error, response_body = excluded.response_body",
        )
        .bind(delivery_id)
        .bind(i64::from(attempt))
        .bind(&record.attempted_at)
        .bind(record.status_code.map(i64::from))
        .bind(i64::try_from(record.latency_ms).unwrap_or(i64::MAX))
        .bind(&record.error)
        .bind(&record.response_body)
        .execute(&mut *tx)
        .await?;
        let (state, next) = match outcome {
            AttemptOutcome::Succeeded => ("succeeded", None),
            AttemptOutcome::RetryAt(at) => ("pending", Some(at)),
            AttemptOutcome::Failed => ("failed", None),
        };
        sqlx::query(
            "UPDATE event_deliveries SET state = $1, attempt_count = $2, next_attempt_at = $3,
                lease_until = NULL, lease_node = NULL
             WHERE id = $4 AND state = 'pending'",
        )
        .bind(state)
        .bind(i64::from(attempt))
        .bind(next)
        .bind(delivery_id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await
    }

    /// One page of the deliveries to the destination `destination_id` of the account, newest
    /// first, `limit + 1` of them, each with its attempts (newest first). 404 for a destination
    /// not in the account.
    pub async fn list_deliveries(
        &self,
        account_id: &str,
        destination_id: &str,
        page: &PageQuery,
    ) -> Result<Vec<DeliveryRow>> {
        self.reading(async |conn| deliveries_page(conn, account_id, destination_id, page).await)
            .await
    }
}

/// [`Store::list_deliveries`]'s page, read on `conn` ([`Store::reading`]).
async fn deliveries_page(
    conn: &mut AnyConnection,
    account_id: &str,
    destination_id: &str,
    page: &PageQuery,
) -> Result<Vec<DeliveryRow>> {
    if !super::records::exists(conn, "event_destinations", account_id, destination_id).await? {
        return Err(not_found::<DestinationRow>(destination_id));
    }
    // `id < ?` with the largest id possible when no `before_id` is given: one statement
    // that always ranges on the (destination_id, id) index.
    let before = page.before_id.as_deref().unwrap_or("~");
    let rows = sqlx::query(
        "SELECT d.id, d.event_id, e.type, d.created_at, d.state, d.next_attempt_at
             FROM event_deliveries d JOIN events e ON e.id = d.event_id
             WHERE d.destination_id = $1 AND d.account_id = $2 AND d.id < $3
             ORDER BY d.id DESC LIMIT $4",
    )
    .bind(destination_id)
    .bind(account_id)
    .bind(before)
    .bind(i64::from(page.limit) + 1)
    .fetch_all(&mut *conn)
    .await?;
    let mut deliveries = Vec::with_capacity(rows.len());
    for row in &rows {
        let state: String = row.try_get("state")?;
        deliveries.push(DeliveryRow {
            id: row.try_get("id")?,
            event_id: row.try_get("event_id")?,
            event_type: row.try_get("type")?,
            created_at: row.try_get("created_at")?,
            state: match state.as_str() {
                "succeeded" => DeliveryState::Succeeded,
                "failed" => DeliveryState::Failed,
                _ => DeliveryState::Pending,
            },
            next_attempt_at: row.try_get("next_attempt_at")?,
            attempts: Vec::new(),
        });
    }
    let ids: Vec<&str> = deliveries.iter().map(|d| d.id.as_str()).collect();
    if ids.is_empty() {
        return Ok(deliveries);
    }
    let sql = format!(
        "SELECT * FROM event_delivery_attempts WHERE delivery_id IN ({})
             ORDER BY delivery_id, attempt DESC",
        super::database::placeholders(1, ids.len())
    );
    let mut query = sqlx::query(&sql);
    for id in ids {
        query = query.bind(id);
    }
    let attempts = query.fetch_all(&mut *conn).await?;
    for row in &attempts {
        let delivery_id: String = row.try_get("delivery_id")?;
        let attempt = DeliveryAttempt {
            attempted_at: row.try_get("attempted_at")?,
            status_code: row
                .try_get::<Option<i64>, _>("status_code")?
                .and_then(|c| u16::try_from(c).ok()),
            latency_ms: row.try_get::<i64, _>("latency_ms")?.try_into().unwrap_or(0),
            error: row.try_get("error")?,
            response_body: row.try_get("response_body")?,
        };
        if let Some(delivery) = deliveries.iter_mut().find(|d| d.id == delivery_id) {
            delivery.attempts.push(attempt);
        }
    }
    Ok(deliveries)
}
