//! Tunnel-group backends: create and update (`labels` replaced as a whole). A backend that a
//! TLS edge's backend module points at cannot be deleted (409) until that module is removed.
//!
//! A backend row carries its account, unlike other rows: its wire form lists the account's live
//! sessions it selects, and the generic handlers turn a row into the wire with the row alone.

use super::columns::{Column, Fields, Json, Value, record};
use super::records::{Changes, UsedBy};
use super::{Audit, Result, Store};
use std::collections::BTreeMap;
use tunnel_core::ids::IdKind;

record! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct BackendRow {
        table: "tunnel_group_backends",
        kind: IdKind::TunnelGroupBackend,
        used_by: UsedBy {
            ids: "SELECT id AS user_id, COUNT(*) OVER () AS total FROM tls_edges WHERE backend_id = $1 ORDER BY id LIMIT 10",
            by: "the backend of a TLS edge; remove that backend module first",
        },
        search: ["id", "description", "metadata", "labels"],
        columns: {
            labels: BTreeMap<String, String> = Json,
            /// The account the backend belongs to.
            account_id: String = Account,
        }
    }
}

/// The `account_id` column, read like any other; never in the row's `INSERT` columns, which
/// always write it first from the caller's account.
#[derive(Debug)]
struct Account;

impl Column<String> for Account {
    fn decode(row: &dyn Fields, name: &str) -> Result<String> {
        row.required_text(name)
    }

    fn encode(_: &String) -> Option<Value> {
        None
    }
}

impl Store {
    /// A backend selecting the tunnels with all of `labels`.
    pub async fn create_backend(
        &self,
        account_id: &str,
        description: &str,
        metadata: &str,
        labels: &BTreeMap<String, String>,
        audit: &Audit<'_, BackendRow>,
    ) -> Result<BackendRow> {
        self.create(account_id, audit, |minted| {
            BackendRow::new(
                minted,
                description,
                metadata,
                labels.clone(),
                account_id.to_owned(),
            )
        })
        .await
    }

    /// Changes the description, metadata and labels (`None` leaves one as it is; given labels
    /// replace the whole set).
    pub async fn update_backend(
        &self,
        account_id: &str,
        id: &str,
        description: Option<String>,
        metadata: Option<String>,
        labels: Option<&BTreeMap<String, String>>,
        audit: &Audit<'_, BackendRow>,
    ) -> Result<BackendRow> {
        let set = Changes::new(description, metadata).json("labels", labels);
        self.apply(account_id, id, set, audit).await
    }
}
