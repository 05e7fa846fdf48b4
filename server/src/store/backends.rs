//! Tunnel-group backends. A backend that a TLS edge's backend module points at cannot be
//! deleted (409) until that module is removed.

use super::records::{Record, UsedBy, insert, insert_sql, json_col, to_json};
use super::{Result, Store};
use sqlx::Row as _;
use sqlx::sqlite::SqliteRow;
use std::collections::BTreeMap;
use tunnel_core::ids::IdKind;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendRow {
    pub id: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    pub labels: BTreeMap<String, String>,
}

impl Record for BackendRow {
    const TABLE: &'static str = "tunnel_group_backends";
    const KIND: IdKind = IdKind::TunnelGroupBackend;
    const USED_BY: Option<UsedBy> = Some(UsedBy {
        count: "SELECT COUNT(*) FROM tls_edges WHERE backend_id = ?",
        by: "the backend of a TLS edge; remove that backend module first",
    });

    fn decode(r: &SqliteRow) -> Result<BackendRow> {
        Ok(BackendRow {
            id: r.try_get("id")?,
            created_at: r.try_get("created_at")?,
            description: r.try_get("description")?,
            metadata: r.try_get("metadata")?,
            labels: json_col(r, "labels")?,
        })
    }
}

impl Store {
    pub async fn create_backend(
        &self,
        account_id: &str,
        description: &str,
        metadata: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<BackendRow> {
        let (id, created_at) = self.mint(IdKind::TunnelGroupBackend);
        let row = BackendRow {
            id,
            created_at,
            description: description.to_owned(),
            metadata: metadata.to_owned(),
            labels: labels.clone(),
        };
        let sql = insert_sql::<BackendRow>(&["labels"]);
        insert(
            &sql,
            account_id,
            [&row.id, &row.created_at, &row.description, &row.metadata],
        )
        .bind(to_json(&row.labels))
        .execute(&self.pool)
        .await?;
        Ok(row)
    }
}
