//! Tunnel-group backends. A backend that a TLS edge's backend module points at cannot be
//! deleted (409) until that module is removed.

use super::columns::{Json, record};
use super::records::UsedBy;
use super::{Result, Store};
use std::collections::BTreeMap;
use tunnel_core::ids::IdKind;

record! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct BackendRow {
        table: "tunnel_group_backends",
        kind: IdKind::TunnelGroupBackend,
        used_by: UsedBy {
            count: "SELECT COUNT(*) FROM tls_edges WHERE backend_id = ?",
            by: "the backend of a TLS edge; remove that backend module first",
        },
        columns: {
            labels: BTreeMap<String, String> = Json,
        }
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
    ) -> Result<BackendRow> {
        self.create(account_id, |minted| {
            BackendRow::new(minted, description, metadata, labels.clone())
        })
        .await
    }
}
