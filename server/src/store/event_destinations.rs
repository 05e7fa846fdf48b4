//! Event destinations. A destination that a subscription sends to cannot be deleted (409) until
//! it is removed from the subscription.

use super::records::{Record, UsedBy, exists, insert, insert_sql, json_col, to_json};
use super::{Result, Store};
use sqlx::Row as _;
use sqlx::sqlite::SqliteRow;
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

impl Record for DestinationRow {
    const TABLE: &'static str = "event_destinations";
    const KIND: IdKind = IdKind::EventDestination;
    const USED_BY: Option<UsedBy> = Some(UsedBy {
        count: "SELECT COUNT(*) FROM event_subscription_destinations WHERE destination_id = ?",
        by: "used by an event subscription; remove it from the subscription first",
    });

    fn decode(r: &SqliteRow) -> Result<DestinationRow> {
        Ok(DestinationRow {
            id: r.try_get("id")?,
            created_at: r.try_get("created_at")?,
            description: r.try_get("description")?,
            metadata: r.try_get("metadata")?,
            format: r.try_get("format")?,
            target: json_col(r, "target")?,
        })
    }
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
        let row = DestinationRow {
            id,
            created_at,
            description: description.to_owned(),
            metadata: metadata.to_owned(),
            format: format.to_owned(),
            target: target.clone(),
        };
        let sql = insert_sql::<DestinationRow>(&["format", "target"]);
        insert(
            &sql,
            account_id,
            [&row.id, &row.created_at, &row.description, &row.metadata],
        )
        .bind(&row.format)
        .bind(to_json(&row.target))
        .execute(&self.pool)
        .await?;
        Ok(row)
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
