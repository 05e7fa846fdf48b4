//! TLS edges with their backend module, and tunnel-group backends (DESIGN §8).

use super::{Deleted, PageQuery, Result, Store, fetch_one, fetch_page, json_col, to_json};
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsEdgeRow {
    pub id: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    pub hostports: Vec<String>,
    /// The backend module: `(backend_id, enabled)`.
    pub backend: Option<(String, bool)>,
}

fn backend_row(r: &SqliteRow) -> Result<BackendRow> {
    Ok(BackendRow {
        id: r.try_get("id")?,
        created_at: r.try_get("created_at")?,
        description: r.try_get("description")?,
        metadata: r.try_get("metadata")?,
        labels: json_col(r, "labels")?,
    })
}

fn edge_row(r: &SqliteRow) -> Result<TlsEdgeRow> {
    let backend_id: Option<String> = r.try_get("backend_id")?;
    let enabled: Option<bool> = r.try_get("backend_enabled")?;
    Ok(TlsEdgeRow {
        id: r.try_get("id")?,
        created_at: r.try_get("created_at")?,
        description: r.try_get("description")?,
        metadata: r.try_get("metadata")?,
        hostports: json_col(r, "hostports")?,
        backend: backend_id.map(|id| (id, enabled.unwrap_or(true))),
    })
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
        sqlx::query(
            "INSERT INTO tunnel_group_backends (id, account_id, created_at, description, metadata, labels)
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(account_id)
        .bind(&created_at)
        .bind(description)
        .bind(metadata)
        .bind(to_json(labels))
        .execute(&self.pool)
        .await?;
        Ok(BackendRow {
            id,
            created_at,
            description: description.to_owned(),
            metadata: metadata.to_owned(),
            labels: labels.clone(),
        })
    }

    pub async fn get_backend(&self, account_id: &str, id: &str) -> Result<Option<BackendRow>> {
        fetch_one(&self.pool, "tunnel_group_backends", account_id, id)
            .await?
            .as_ref()
            .map(backend_row)
            .transpose()
    }

    pub async fn list_backends(
        &self,
        account_id: &str,
        page: &PageQuery,
    ) -> Result<Vec<BackendRow>> {
        fetch_page(&self.pool, "tunnel_group_backends", account_id, page)
            .await?
            .iter()
            .map(backend_row)
            .collect()
    }

    /// Refuses while a TLS edge's backend module points at the backend.
    pub async fn delete_backend(&self, account_id: &str, id: &str) -> Result<Deleted> {
        self.delete_unless_used(
            "tunnel_group_backends",
            "SELECT COUNT(*) FROM tls_edges WHERE backend_id = ?",
            account_id,
            id,
        )
        .await
    }

    pub async fn create_tls_edge(
        &self,
        account_id: &str,
        description: &str,
        metadata: &str,
        hostports: &[String],
    ) -> Result<TlsEdgeRow> {
        let (id, created_at) = self.mint(IdKind::TlsEdge);
        sqlx::query(
            "INSERT INTO tls_edges (id, account_id, created_at, description, metadata, hostports)
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(account_id)
        .bind(&created_at)
        .bind(description)
        .bind(metadata)
        .bind(to_json(&hostports))
        .execute(&self.pool)
        .await?;
        Ok(TlsEdgeRow {
            id,
            created_at,
            description: description.to_owned(),
            metadata: metadata.to_owned(),
            hostports: hostports.to_vec(),
            backend: None,
        })
    }

    pub async fn get_tls_edge(&self, account_id: &str, id: &str) -> Result<Option<TlsEdgeRow>> {
        fetch_one(&self.pool, "tls_edges", account_id, id)
            .await?
            .as_ref()
            .map(edge_row)
            .transpose()
    }

    pub async fn list_tls_edges(
        &self,
        account_id: &str,
        page: &PageQuery,
    ) -> Result<Vec<TlsEdgeRow>> {
        fetch_page(&self.pool, "tls_edges", account_id, page)
            .await?
            .iter()
            .map(edge_row)
            .collect()
    }

    pub async fn delete_tls_edge(&self, account_id: &str, id: &str) -> Result<bool> {
        super::delete_row(&self.pool, "tls_edges", account_id, id).await
    }

    /// Sets (or clears, with `None`) the backend module of an edge: `Ok(false)` when the edge
    /// does not exist in the account. The backend must be one of the account's: checked inside
    /// the write transaction, so a concurrent delete of the backend is a
    /// [`ReferenceError::Missing`] (400), never a foreign-key failure (500).
    pub async fn set_tls_edge_backend(
        &self,
        account_id: &str,
        edge_id: &str,
        module: Option<(&str, bool)>,
    ) -> std::result::Result<bool, ReferenceError> {
        let mut tx = self.write_tx().await?;
        if let Some((backend_id, _)) = module {
            let found: Option<String> = sqlx::query_scalar(
                "SELECT id FROM tunnel_group_backends WHERE account_id = ? AND id = ?",
            )
            .bind(account_id)
            .bind(backend_id)
            .fetch_optional(&mut *tx)
            .await?;
            if found.is_none() {
                return Err(ReferenceError::Missing {
                    field: "backend_id".into(),
                    kind: IdKind::TunnelGroupBackend,
                    id: backend_id.to_owned(),
                });
            }
        }
        let done = sqlx::query("UPDATE tls_edges SET backend_id = ?, backend_enabled = ? WHERE account_id = ? AND id = ?")
            .bind(module.map(|m| m.0))
            .bind(module.map(|m| m.1))
            .bind(account_id)
            .bind(edge_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }
}

/// A write refused because a resource it names (by a body id) does not exist in the account.
/// Found inside the write transaction, so a concurrent delete cannot slip between the check and
/// the write. The one mapping to the wire is in `crate::error`.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    #[error("{} `{id}` (field {field}) does not exist", kind.noun())]
    Missing {
        /// The request field naming it, e.g. `backend_id`, `destination_ids[2]`.
        field: String,
        kind: IdKind,
        id: String,
    },
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}
