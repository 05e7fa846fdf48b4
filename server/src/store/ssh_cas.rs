//! SSH certificate authorities. The private key arrives here already sealed (`keys.rs`): the
//! database never sees it in clear.

use super::records::{Record, insert, insert_sql};
use super::{Result, Store};
use sqlx::Row as _;
use sqlx::sqlite::SqliteRow;
use tunnel_core::ids::IdKind;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshCaRow {
    pub id: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    pub key_type: String,
    pub public_key: String,
}

impl Record for SshCaRow {
    const TABLE: &'static str = "ssh_certificate_authorities";
    const KIND: IdKind = IdKind::SshCertificateAuthority;

    fn decode(r: &SqliteRow) -> Result<SshCaRow> {
        Ok(SshCaRow {
            id: r.try_get("id")?,
            created_at: r.try_get("created_at")?,
            description: r.try_get("description")?,
            metadata: r.try_get("metadata")?,
            key_type: r.try_get("key_type")?,
            public_key: r.try_get("public_key")?,
        })
    }
}

impl Store {
    /// Stores `row`, whose id was minted beforehand (the sealed key is bound to it), with the
    /// sealed private key.
    pub async fn insert_ssh_ca(
        &self,
        account_id: &str,
        row: SshCaRow,
        private_key_sealed: &[u8],
    ) -> Result<SshCaRow> {
        let sql = insert_sql::<SshCaRow>(&["key_type", "public_key", "private_key_sealed"]);
        insert(
            &sql,
            account_id,
            [&row.id, &row.created_at, &row.description, &row.metadata],
        )
        .bind(&row.key_type)
        .bind(&row.public_key)
        .bind(private_key_sealed)
        .execute(&self.pool)
        .await?;
        Ok(row)
    }

    /// The sealed private key of an authority. Only the integration tests read it today (they
    /// check that no key is stored in clear and that it opens with the server key); kept public
    /// rather than `#[cfg(test)]`, which `server/tests/` cannot see, and the way a future signing
    /// operation gets its key.
    pub async fn ssh_ca_sealed_key(&self, account_id: &str, id: &str) -> Result<Option<Vec<u8>>> {
        Ok(sqlx::query_scalar("SELECT private_key_sealed FROM ssh_certificate_authorities WHERE account_id = ? AND id = ?")
            .bind(account_id)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?)
    }

    /// Changes the description and metadata (`None` leaves one as it is).
    pub async fn update_ssh_ca(
        &self,
        account_id: &str,
        id: &str,
        description: Option<String>,
        metadata: Option<String>,
    ) -> Result<SshCaRow> {
        let done = sqlx::query(
            "UPDATE ssh_certificate_authorities SET description = COALESCE(?, description),
             metadata = COALESCE(?, metadata) WHERE account_id = ? AND id = ?",
        )
        .bind(description)
        .bind(metadata)
        .bind(account_id)
        .bind(id)
        .execute(&self.pool)
        .await?;
        self.updated(account_id, id, done.rows_affected()).await
    }
}
