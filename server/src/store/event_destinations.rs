//! Event destinations. A destination that a subscription sends to cannot be deleted (409) until
//! it is removed from the subscription. Each has a signing secret, which arrives here already
//! sealed with the server key (`keys.rs`) and bound to the destination's id: the database never
//! sees it in clear. After a rotation the previous one keeps signing until
//! `previous_secret_until`, so receivers can switch without losing a delivery.

use super::columns::{Json, Text, Value, record};
use super::records::{Changes, Record as _, UsedBy, exists, fetch};
use super::{Audit, Result, Store};
use tunnel_core::ids::IdKind;
use tunnel_core::resources::event_destination::EventTarget;

record! {
    #[derive(Debug, Clone, PartialEq)]
    pub struct DestinationRow {
        table: "event_destinations",
        kind: IdKind::EventDestination,
        used_by: UsedBy {
            ids: "SELECT subscription_id AS user_id, COUNT(*) OVER () AS total FROM event_subscription_destinations WHERE destination_id = $1 ORDER BY subscription_id LIMIT 10",
            by: "used by an event subscription; remove it from the subscription first",
        },
        search: ["id", "description", "metadata", "format", "target"],
        columns: {
            format: String = Text,
            target: EventTarget = Json,
        }
    }
}

/// The sealed signing secrets of a destination.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SealedSecrets {
    /// `None` for a destination created before destinations had secrets, until its first
    /// delivery gives it one.
    pub current: Option<Vec<u8>>,
    /// The secret before the last rotation, and until when (Unix ms) it still signs.
    pub previous: Option<(Vec<u8>, i64)>,
}

impl Store {
    /// Stores `row`, whose id was minted beforehand (the sealed secret is bound to it), with its
    /// sealed signing secret.
    pub async fn insert_destination(
        &self,
        account_id: &str,
        row: DestinationRow,
        secret_sealed: &[u8],
        audit: &Audit<'_, DestinationRow>,
    ) -> Result<DestinationRow> {
        let sealed = vec![("secret_sealed", Value::Blob(secret_sealed.to_vec()))];
        self.create_recorded(account_id, &row, sealed, audit)
            .await?;
        Ok(row)
    }

    /// Changes the description, metadata or target given, recording `event_destination_updated`
    /// when something changed.
    pub async fn update_destination(
        &self,
        account_id: &str,
        id: &str,
        description: Option<String>,
        metadata: Option<String>,
        target: Option<&EventTarget>,
        audit: &Audit<'_, DestinationRow>,
    ) -> Result<DestinationRow> {
        let set = Changes::new(description, metadata).json("target", target);
        self.apply(account_id, id, set, audit).await
    }

    /// Replaces the signing secret with `sealed`; the current one becomes the previous one,
    /// signing alongside until `previous_until_ms`. Records `event_destination_secret_rotated`
    /// in the same transaction.
    pub async fn rotate_destination_secret(
        &self,
        account_id: &str,
        id: &str,
        sealed: &[u8],
        previous_until_ms: i64,
        audit: &Audit<'_, DestinationRow>,
    ) -> Result<DestinationRow> {
        let mut tx = self.write_tx().await?;
        let row = fetch::<DestinationRow>(&mut tx.exec(), account_id, id).await?;
        // The right-hand sides see the row as it was: the old secret moves to `previous_*`.
        sqlx::query(
            "UPDATE event_destinations SET previous_secret_sealed = secret_sealed,
                previous_secret_until = CASE WHEN secret_sealed IS NULL THEN NULL ELSE $1 END,
                secret_sealed = $2
             WHERE account_id = $3 AND id = $4",
        )
        .bind(previous_until_ms)
        .bind(sealed)
        .bind(account_id)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        let event = audit.event("secret_rotated", id, &row);
        self.emit(&mut tx, account_id, event).await?;
        tx.commit().await?;
        Ok(row)
    }

    /// The sealed signing secrets of the destination `id` of the account.
    pub async fn destination_secrets(&self, account_id: &str, id: &str) -> Result<SealedSecrets> {
        type Columns = (Option<Vec<u8>>, Option<Vec<u8>>, Option<i64>);
        let query = sqlx::query_as(
            "SELECT secret_sealed, previous_secret_sealed, previous_secret_until
             FROM event_destinations WHERE account_id = $1 AND id = $2",
        )
        .bind(account_id)
        .bind(id);
        let found: Option<Columns> = self
            .reading(async |conn| Ok(query.fetch_optional(conn).await?))
            .await?;
        let (current, previous, until) =
            found.ok_or_else(|| super::records::not_found::<DestinationRow>(id))?;
        Ok(SealedSecrets {
            current,
            previous: previous.zip(until),
        })
    }

    /// Gives a destination without a signing secret (created before destinations had them)
    /// `sealed`; a destination that has one keeps it. The secrets it has now.
    pub async fn ensure_destination_secret(
        &self,
        account_id: &str,
        id: &str,
        sealed: &[u8],
    ) -> Result<SealedSecrets> {
        let mut tx = self.write_tx().await?;
        sqlx::query(
            "UPDATE event_destinations SET secret_sealed = $1
             WHERE account_id = $2 AND id = $3 AND secret_sealed IS NULL",
        )
        .bind(sealed)
        .bind(account_id)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.destination_secrets(account_id, id).await
    }

    /// The ids among `ids` that are not destinations of the account.
    pub async fn missing_destinations(
        &self,
        account_id: &str,
        ids: &[String],
    ) -> Result<Vec<String>> {
        self.reading(async |conn| {
            let mut missing = Vec::new();
            for id in ids {
                if !exists(conn, DestinationRow::TABLE, account_id, id).await? {
                    missing.push(id.clone());
                }
            }
            Ok(missing)
        })
        .await
    }
}
