//! TLS edges with their backend module (a reference to a tunnel-group backend of the account).

use super::backends::BackendRow;
use super::records::{Record, insert, insert_sql, json_col, require, to_json};
use super::{Result, Store};
use sqlx::Row as _;
use sqlx::sqlite::SqliteRow;
use tunnel_core::ids::IdKind;

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

impl Record for TlsEdgeRow {
    const TABLE: &'static str = "tls_edges";
    const KIND: IdKind = IdKind::TlsEdge;

    fn decode(r: &SqliteRow) -> Result<TlsEdgeRow> {
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
}

impl Store {
    pub async fn create_tls_edge(
        &self,
        account_id: &str,
        description: &str,
        metadata: &str,
        hostports: &[String],
    ) -> Result<TlsEdgeRow> {
        let (id, created_at) = self.mint(IdKind::TlsEdge);
        let row = TlsEdgeRow {
            id,
            created_at,
            description: description.to_owned(),
            metadata: metadata.to_owned(),
            hostports: hostports.to_vec(),
            backend: None,
        };
        let sql = insert_sql::<TlsEdgeRow>(&["hostports"]);
        insert(
            &sql,
            account_id,
            [&row.id, &row.created_at, &row.description, &row.metadata],
        )
        .bind(to_json(&row.hostports))
        .execute(&self.pool)
        .await?;
        Ok(row)
    }

    /// Sets (or clears, with `None`) the backend module of an edge; [`super::Error::NotFound`]
    /// when the edge does not exist in the account. The backend must be one of the account's:
    /// checked inside the write transaction, so a concurrent delete of the backend is a
    /// [`super::Error::Missing`] (400), never a foreign-key failure (500).
    pub async fn set_tls_edge_backend(
        &self,
        account_id: &str,
        edge_id: &str,
        module: Option<(&str, bool)>,
    ) -> Result<()> {
        let mut tx = self.write_tx().await?;
        if let Some((backend_id, _)) = module {
            require::<BackendRow>(&mut tx, account_id, backend_id, "backend_id".into()).await?;
        }
        let done = sqlx::query("UPDATE tls_edges SET backend_id = ?, backend_enabled = ? WHERE account_id = ? AND id = ?")
            .bind(module.map(|m| m.0))
            .bind(module.map(|m| m.1))
            .bind(account_id)
            .bind(edge_id)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 0 {
            return Err(super::Error::NotFound {
                kind: IdKind::TlsEdge,
                id: edge_id.to_owned(),
            });
        }
        tx.commit().await?;
        Ok(())
    }
}
