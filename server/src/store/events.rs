//! Event destinations and event subscriptions. Subscription destinations live in a join table
//! so that a destination in use cannot be deleted.

use super::{Deleted, PageQuery, ReferenceError, Result, Store, fetch_page, json_col, to_json};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row as _, SqliteConnection};
use tunnel_core::ids::IdKind;
use tunnel_core::resources::event_destination::EventTarget;

#[derive(Debug, Clone, PartialEq)]
pub struct DestinationRow {
    pub id: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    pub format: String,
    pub target: EventTarget,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionRow {
    pub id: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    /// Event types, in the order given.
    pub sources: Vec<String>,
    /// Destination ids, in the order given.
    pub destination_ids: Vec<String>,
}

/// The fields a PATCH may change; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct SubscriptionChanges {
    pub description: Option<String>,
    pub metadata: Option<String>,
    pub sources: Option<Vec<String>>,
    pub destination_ids: Option<Vec<String>>,
}

fn destination_row(r: &SqliteRow) -> Result<DestinationRow> {
    Ok(DestinationRow {
        id: r.try_get("id")?,
        created_at: r.try_get("created_at")?,
        description: r.try_get("description")?,
        metadata: r.try_get("metadata")?,
        format: r.try_get("format")?,
        target: json_col(r, "target")?,
    })
}

async fn subscription_row(conn: &mut SqliteConnection, r: &SqliteRow) -> Result<SubscriptionRow> {
    let id: String = r.try_get("id")?;
    let destination_ids = sqlx::query_scalar(
        "SELECT destination_id FROM event_subscription_destinations WHERE subscription_id = ? ORDER BY position",
    )
    .bind(&id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(SubscriptionRow {
        id,
        created_at: r.try_get("created_at")?,
        description: r.try_get("description")?,
        metadata: r.try_get("metadata")?,
        sources: json_col(r, "sources")?,
        destination_ids,
    })
}

/// Replaces the destinations of a subscription, inside the caller's write transaction. Each id
/// must be a destination of the account, checked here rather than before the transaction, so a
/// destination deleted concurrently is a [`ReferenceError::Missing`] (400), not a foreign-key
/// failure (500).
async fn set_destinations(
    conn: &mut SqliteConnection,
    account_id: &str,
    subscription_id: &str,
    ids: &[String],
) -> std::result::Result<(), ReferenceError> {
    sqlx::query("DELETE FROM event_subscription_destinations WHERE subscription_id = ?")
        .bind(subscription_id)
        .execute(&mut *conn)
        .await?;
    for (position, id) in ids.iter().enumerate() {
        let found: Option<String> =
            sqlx::query_scalar("SELECT id FROM event_destinations WHERE account_id = ? AND id = ?")
                .bind(account_id)
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
        if found.is_none() {
            return Err(ReferenceError::Missing {
                field: format!("destination_ids[{position}]"),
                kind: IdKind::EventDestination,
                id: id.clone(),
            });
        }
        sqlx::query("INSERT INTO event_subscription_destinations (subscription_id, position, destination_id) VALUES (?, ?, ?)")
            .bind(subscription_id)
            .bind(i64::try_from(position).unwrap_or(i64::MAX))
            .bind(id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

impl Store {
    pub async fn create_destination(
        &self,
        account_id: &str,
        description: &str,
        metadata: &str,
        format: &str,
        target: &EventTarget,
    ) -> Result<DestinationRow> {
        let (id, created_at) = self.mint(IdKind::EventDestination);
        sqlx::query(
            "INSERT INTO event_destinations (id, account_id, created_at, description, metadata, format, target)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(account_id)
        .bind(&created_at)
        .bind(description)
        .bind(metadata)
        .bind(format)
        .bind(to_json(target))
        .execute(&self.pool)
        .await?;
        Ok(DestinationRow {
            id,
            created_at,
            description: description.to_owned(),
            metadata: metadata.to_owned(),
            format: format.to_owned(),
            target: target.clone(),
        })
    }

    pub async fn get_destination(
        &self,
        account_id: &str,
        id: &str,
    ) -> Result<Option<DestinationRow>> {
        super::fetch_one(&self.pool, "event_destinations", account_id, id)
            .await?
            .as_ref()
            .map(destination_row)
            .transpose()
    }

    pub async fn list_destinations(
        &self,
        account_id: &str,
        page: &PageQuery,
    ) -> Result<Vec<DestinationRow>> {
        fetch_page(&self.pool, "event_destinations", account_id, page)
            .await?
            .iter()
            .map(destination_row)
            .collect()
    }

    /// Refuses while a subscription sends to the destination.
    pub async fn delete_destination(&self, account_id: &str, id: &str) -> Result<Deleted> {
        self.delete_unless_used(
            "event_destinations",
            "SELECT COUNT(*) FROM event_subscription_destinations WHERE destination_id = ?",
            account_id,
            id,
        )
        .await
    }

    /// The ids among `ids` that are not destinations of the account.
    pub async fn missing_destinations(
        &self,
        account_id: &str,
        ids: &[String],
    ) -> Result<Vec<String>> {
        let mut missing = Vec::new();
        for id in ids {
            let found: Option<String> = sqlx::query_scalar(
                "SELECT id FROM event_destinations WHERE account_id = ? AND id = ?",
            )
            .bind(account_id)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
            if found.is_none() {
                missing.push(id.clone());
            }
        }
        Ok(missing)
    }

    pub async fn create_subscription(
        &self,
        account_id: &str,
        description: &str,
        metadata: &str,
        sources: &[String],
        destination_ids: &[String],
    ) -> std::result::Result<SubscriptionRow, ReferenceError> {
        let (id, created_at) = self.mint(IdKind::EventSubscription);
        let mut tx = self.write_tx().await?;
        sqlx::query(
            "INSERT INTO event_subscriptions (id, account_id, created_at, description, metadata, sources)
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(account_id)
        .bind(&created_at)
        .bind(description)
        .bind(metadata)
        .bind(to_json(&sources))
        .execute(&mut *tx)
        .await?;
        set_destinations(&mut tx, account_id, &id, destination_ids).await?;
        tx.commit().await?;
        Ok(SubscriptionRow {
            id,
            created_at,
            description: description.to_owned(),
            metadata: metadata.to_owned(),
            sources: sources.to_vec(),
            destination_ids: destination_ids.to_vec(),
        })
    }

    pub async fn get_subscription(
        &self,
        account_id: &str,
        id: &str,
    ) -> Result<Option<SubscriptionRow>> {
        let mut conn = self.pool.acquire().await?;
        let found =
            sqlx::query("SELECT * FROM event_subscriptions WHERE account_id = ? AND id = ?")
                .bind(account_id)
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
        match found {
            Some(r) => Ok(Some(subscription_row(&mut conn, &r).await?)),
            None => Ok(None),
        }
    }

    pub async fn list_subscriptions(
        &self,
        account_id: &str,
        page: &PageQuery,
    ) -> Result<Vec<SubscriptionRow>> {
        let rows = fetch_page(&self.pool, "event_subscriptions", account_id, page).await?;
        let mut conn = self.pool.acquire().await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            out.push(subscription_row(&mut conn, r).await?);
        }
        Ok(out)
    }

    pub async fn update_subscription(
        &self,
        account_id: &str,
        id: &str,
        changes: SubscriptionChanges,
    ) -> std::result::Result<Option<SubscriptionRow>, ReferenceError> {
        let mut tx = self.write_tx().await?;
        let done = sqlx::query(
            "UPDATE event_subscriptions SET description = COALESCE(?, description), metadata = COALESCE(?, metadata),
             sources = COALESCE(?, sources) WHERE account_id = ? AND id = ?",
        )
        .bind(changes.description)
        .bind(changes.metadata)
        .bind(changes.sources.as_ref().map(to_json))
        .bind(account_id)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(None);
        }
        if let Some(ids) = &changes.destination_ids {
            set_destinations(&mut tx, account_id, id, ids).await?;
        }
        tx.commit().await?;
        Ok(self.get_subscription(account_id, id).await?)
    }

    pub async fn delete_subscription(&self, account_id: &str, id: &str) -> Result<bool> {
        super::delete_row(&self.pool, "event_subscriptions", account_id, id).await
    }
}
