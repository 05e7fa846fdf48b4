//! Event destinations. A destination that a subscription sends to cannot be deleted (409) until
//! it is removed from the subscription.

use super::columns::{Json, Text, record};
use super::records::{Record as _, UsedBy, exists};
use super::{Audit, Result, Store};
use tunnel_core::ids::IdKind;
use tunnel_core::resources::event_destination::EventTarget;

record! {
    #[derive(Debug, Clone, PartialEq)]
    pub struct DestinationRow {
        table: "event_destinations",
        kind: IdKind::EventDestination,
        used_by: UsedBy {
            count: "SELECT COUNT(*) FROM event_subscription_destinations WHERE destination_id = ?",
            by: "used by an event subscription; remove it from the subscription first",
        },
        columns: {
            format: String = Text,
            target: EventTarget = Json,
        }
    }
}

impl Store {
    /// A destination sending events in `format` to `target`.
    pub async fn create_destination(
        &self,
        account_id: &str,
        description: &str,
        metadata: &str,
        format: &str,
        target: &EventTarget,
        audit: &Audit<'_, DestinationRow>,
    ) -> Result<DestinationRow> {
        let (format, target) = (format.to_owned(), target.clone());
        self.create(account_id, audit, |minted| {
            DestinationRow::new(minted, description, metadata, format, target)
        })
        .await
    }

    /// The ids among `ids` that are not destinations of the account.
    pub async fn missing_destinations(
        &self,
        account_id: &str,
        ids: &[String],
    ) -> Result<Vec<String>> {
        let mut conn = self.pool.acquire().await?;
        let mut missing = Vec::new();
        for id in ids {
            if !exists(&mut conn, DestinationRow::TABLE, account_id, id).await? {
                missing.push(id.clone());
            }
        }
        Ok(missing)
    }
}
