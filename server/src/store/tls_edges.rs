//! TLS edges with their backend module (a reference to a tunnel-group backend of the account):
//! create, update of the edge's own fields, and setting or clearing the module.

use super::backends::BackendRow;
use super::columns::{Column, Fields, Json, Reads, Value, record};
use super::records::{Changes, fetch, insert, require};
use super::{Audit, Result, Store};
use sqlx::AnyConnection;
use tunnel_core::ids::IdKind;

record! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct TlsEdgeRow {
        table: "tls_edges",
        kind: IdKind::TlsEdge,
        search: ["id", "description", "metadata", "hostports"],
        columns: {
            hostports: Vec<String> = Json,
            /// The backend module: `(backend_id, enabled)`.
            backend: Option<(String, bool)> = BackendModule,
        }
    }
}

/// The backend module's two columns, `backend_id` and `backend_enabled`: both NULL when there
/// is none. Not written by the edge's `INSERT`: an edge created with one gets it by an `UPDATE`
/// in the same transaction.
#[derive(Debug)]
struct BackendModule;

impl Column<Option<(String, bool)>> for BackendModule {
    const READS: Reads = Reads::Columns(&["backend_id", "backend_enabled"]);
    fn decode(row: &dyn Fields, _: &str) -> Result<Option<(String, bool)>> {
        let backend_id = row.text("backend_id")?;
        // An integer column on every database (0 or 1), so one decoding serves them all.
        let enabled = row.integer("backend_enabled")?;
        Ok(backend_id.map(|id| (id, enabled.is_none_or(|e| e != 0))))
    }

    fn encode(_: &Option<(String, bool)>) -> Option<Value> {
        None
    }
}

/// The backend module of an edge being created: the backend, whether it is enabled, and the
/// request field that named the backend (for the 400 when it does not exist).
#[derive(Debug, Clone, Copy)]
pub struct NewModule<'a> {
    pub backend_id: &'a str,
    pub enabled: bool,
    pub field: &'a str,
}

impl Store {
    /// An edge serving `hostports`, with the backend module `module` or none. The backend is
    /// checked like [`Store::set_tls_edge_backend`] does, in the same write transaction as the
    /// insert; a missing one is [`super::Error::Missing`] on the module's `field`.
    pub async fn create_tls_edge(
        &self,
        account_id: &str,
        description: &str,
        metadata: &str,
        hostports: &[String],
        module: Option<NewModule<'_>>,
        audit: &Audit<'_, TlsEdgeRow>,
    ) -> Result<TlsEdgeRow> {
        let mut tx = self.write_tx().await?;
        if let Some(m) = &module {
            require::<BackendRow>(&mut tx, account_id, m.backend_id, m.field.into()).await?;
        }
        let module = module.map(|m| (m.backend_id, m.enabled));
        let row = TlsEdgeRow::new(
            self.mint(IdKind::TlsEdge),
            description,
            metadata,
            hostports.to_vec(),
            module.map(|(id, enabled)| (id.to_owned(), enabled)),
        );
        // The module's columns are not among the row's INSERT columns (see `BackendModule`).
        insert(&mut tx.exec(), account_id, &row, vec![]).await?;
        if module.is_some() {
            set_module(&mut tx, account_id, &row.id, module).await?;
        }
        let event = audit.event("created", &row.id, &row);
        self.emit(&mut tx, account_id, event).await?;
        tx.commit().await?;
        Ok(row)
    }

    /// Sets (or clears, with `None`) the backend module of an edge; [`super::Error::NotFound`]
    /// when the edge does not exist in the account. The backend must be one of the account's:
    /// checked inside the write transaction, so a concurrent delete of the backend is a
    /// [`super::Error::Missing`] (400), never a foreign-key failure (500).
    /// `field` names the backend id in the request, for that 400.
    pub async fn set_tls_edge_backend(
        &self,
        account_id: &str,
        edge_id: &str,
        module: Option<(&str, bool)>,
        field: &str,
        audit: &Audit<'_, TlsEdgeRow>,
    ) -> Result<()> {
        let mut tx = self.write_tx().await?;
        let before = fetch::<TlsEdgeRow>(&mut tx.exec(), account_id, edge_id).await?;
        if let Some((backend_id, _)) = module {
            require::<BackendRow>(&mut tx, account_id, backend_id, field.into()).await?;
        }
        set_module(&mut tx, account_id, edge_id, module).await?;
        // Which of the module's events: it appears, changes or goes.
        let verb = match (&before.backend, module) {
            (None, _) => "backend_created",
            (Some(_), Some(_)) => "backend_updated",
            (Some(_), None) => "backend_deleted",
        };
        self.record_update(&mut tx, account_id, &before, verb, audit)
            .await?;
        tx.commit().await
    }

    /// Changes the description, metadata and hostports (`None` leaves one as it is; given
    /// hostports replace the whole list). The backend module is not touched: it changes only
    /// through [`Store::set_tls_edge_backend`], which records its own events.
    pub async fn update_tls_edge(
        &self,
        account_id: &str,
        id: &str,
        description: Option<String>,
        metadata: Option<String>,
        hostports: Option<&[String]>,
        audit: &Audit<'_, TlsEdgeRow>,
    ) -> Result<TlsEdgeRow> {
        let set = Changes::new(description, metadata).json("hostports", hostports);
        self.apply(account_id, id, set, audit).await
    }
}

/// Writes the backend module columns of the edge `edge_id`; the number of rows changed.
async fn set_module(
    conn: &mut AnyConnection,
    account_id: &str,
    edge_id: &str,
    module: Option<(&str, bool)>,
) -> Result<u64> {
    let done = sqlx::query(
        "UPDATE tls_edges SET backend_id = $1, backend_enabled = $2 WHERE account_id = $3 AND id = $4",
    )
    .bind(module.map(|m| m.0))
    .bind(module.map(|m| i64::from(m.1)))
    .bind(account_id)
    .bind(edge_id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}
