//! Event subscriptions. Their destinations live in a join table (in the order given), so that a
//! destination in use cannot be deleted.

use super::columns::{Joined, Json, record};
use super::event_destinations::DestinationRow;
use super::records::{Changes, fetch, insert, require, update};
use super::{Audit, Result, Store};
use sqlx::AnyConnection;
use tunnel_core::ids::IdKind;

record! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SubscriptionRow {
        table: "event_subscriptions",
        kind: IdKind::EventSubscription,
        search: ["id", "description", "metadata", "sources"],
        complete: with_destinations,
        columns: {
            /// Event types, in the order given.
            sources: Vec<String> = Json,
            /// Destination ids, in the order given.
            destination_ids: Vec<String> = Joined,
        }
    }
}

/// The fields a PATCH may change; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct SubscriptionChanges {
    pub description: Option<String>,
    pub metadata: Option<String>,
    pub sources: Option<Vec<String>>,
    pub destination_ids: Option<Vec<String>>,
}

/// Fills in the destinations of decoded subscriptions, from their join table.
async fn with_destinations(
    conn: &mut AnyConnection,
    mut rows: Vec<SubscriptionRow>,
) -> Result<Vec<SubscriptionRow>> {
    for row in &mut rows {
        row.destination_ids = sqlx::query_scalar(
            "SELECT destination_id FROM event_subscription_destinations WHERE subscription_id = $1 ORDER BY position",
        )
        .bind(&row.id)
        .fetch_all(&mut *conn)
        .await?;
    }
    Ok(rows)
}

/// Replaces the destinations of a subscription, inside the caller's write transaction. Each id
/// must be a destination of the account ([`require`]).
async fn set_destinations(
    conn: &mut AnyConnection,
    account_id: &str,
    subscription_id: &str,
    ids: &[String],
) -> Result<()> {
    sqlx::query("DELETE FROM event_subscription_destinations WHERE subscription_id = $1")
        .bind(subscription_id)
        .execute(&mut *conn)
        .await?;
    for (position, id) in ids.iter().enumerate() {
        require::<DestinationRow>(conn, account_id, id, format!("destination_ids[{position}]"))
            .await?;
        sqlx::query("INSERT INTO event_subscription_destinations (subscription_id, position, destination_id) VALUES ($1, $2, $3)")
            .bind(subscription_id)
            .bind(i64::try_from(position).unwrap_or(i64::MAX))
            .bind(id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

impl Store {
    /// A subscription sending the events of `sources` to the destinations, each of which must
    /// be the account's ([`super::Error::Missing`] otherwise, and nothing is written).
    pub async fn create_subscription(
        &self,
        account_id: &str,
        description: &str,
        metadata: &str,
        sources: &[String],
        destination_ids: &[String],
        audit: &Audit<'_, SubscriptionRow>,
    ) -> Result<SubscriptionRow> {
        let minted = self.mint(IdKind::EventSubscription);
        let row = SubscriptionRow::new(
            minted,
            description,
            metadata,
            sources.to_vec(),
            destination_ids.to_vec(),
        );
        let mut tx = self.write_tx().await?;
        insert(&mut tx.exec(), account_id, &row, vec![]).await?;
        set_destinations(&mut tx, account_id, &row.id, destination_ids).await?;
        let event = audit.event("created", &row.id, &row);
        self.emit(&mut tx, account_id, event).await?;
        tx.commit().await?;
        Ok(row)
    }

    /// Applies a partial update; new destinations are checked like at creation.
    pub async fn update_subscription(
        &self,
        account_id: &str,
        id: &str,
        changes: SubscriptionChanges,
        audit: &Audit<'_, SubscriptionRow>,
    ) -> Result<SubscriptionRow> {
        let mut tx = self.write_tx().await?;
        let before = fetch::<SubscriptionRow>(&mut tx.exec(), account_id, id).await?;
        let set = Changes::new(changes.description, changes.metadata)
            .json("sources", changes.sources.as_ref());
        update::<SubscriptionRow>(&mut tx.exec(), account_id, id, set).await?;
        if let Some(ids) = &changes.destination_ids {
            set_destinations(&mut tx, account_id, id, ids).await?;
        }
        let after = self
            .record_update(&mut tx, account_id, &before, "updated", audit)
            .await?;
        tx.commit().await?;
        Ok(after)
    }
}

/// One change to the sources of a subscription (`…/sources` operations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceEdit<'a> {
    Add(&'a str),
    Remove(&'a str),
}

/// Why a [`SourceEdit`] was not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceRefusal {
    /// The type to add is a source already.
    AlreadyThere,
    /// The type to remove is not a source.
    NotThere,
    /// The subscription has the most sources it may have.
    Full,
}

impl Store {
    /// Adds or removes one source of a subscription, read and written in one write transaction
    /// so two edits at once both apply, and records the update. The subscription as it is now,
    /// or why the edit does not apply (nothing written).
    pub async fn edit_sources(
        &self,
        account_id: &str,
        id: &str,
        edit: SourceEdit<'_>,
        audit: &Audit<'_, SubscriptionRow>,
    ) -> Result<std::result::Result<SubscriptionRow, SourceRefusal>> {
        let mut tx = self.write_tx().await?;
        let before = fetch::<SubscriptionRow>(&mut tx.exec(), account_id, id).await?;
        let mut sources = before.sources.clone();
        match edit {
            SourceEdit::Add(t) if sources.iter().any(|s| s == t) => {
                return Ok(Err(SourceRefusal::AlreadyThere));
            }
            SourceEdit::Add(_) if sources.len() >= tunnel_core::limits::MAX_EVENT_SOURCES => {
                return Ok(Err(SourceRefusal::Full));
            }
            SourceEdit::Add(t) => sources.push(t.to_owned()),
            SourceEdit::Remove(t) => {
                let Some(at) = sources.iter().position(|s| s == t) else {
                    return Ok(Err(SourceRefusal::NotThere));
                };
                sources.remove(at);
            }
        }
        let set = Changes::new(None, None).json("sources", Some(&sources));
        update::<SubscriptionRow>(&mut tx.exec(), account_id, id, set).await?;
        let after = self
            .record_update(&mut tx, account_id, &before, "updated", audit)
            .await?;
        tx.commit().await?;
        Ok(Ok(after))
    }
}
