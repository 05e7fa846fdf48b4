//! SSH certificate authorities. The private key arrives here already sealed (`keys.rs`): the
//! database never sees it in clear.

use super::{PageQuery, Result, Store, fetch_one, fetch_page};
use sqlx::Row as _;
use sqlx::sqlite::SqliteRow;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshCaRow {
    pub id: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    pub key_type: String,
    pub public_key: String,
}

fn row(r: &SqliteRow) -> Result<SshCaRow> {
    Ok(SshCaRow {
        id: r.try_get("id")?,
        created_at: r.try_get("created_at")?,
        description: r.try_get("description")?,
        metadata: r.try_get("metadata")?,
        key_type: r.try_get("key_type")?,
        public_key: r.try_get("public_key")?,
    })
}

impl Store {
    /// Stores an authority whose id was minted beforehand (the sealed key is bound to it).
    #[allow(clippy::too_many_arguments)]
    pub async fn insert_ssh_ca(
        &self,
        account_id: &str,
        id: &str,
        created_at: &str,
        description: &str,
        metadata: &str,
        key_type: &str,
        public_key: &str,
        private_key_sealed: &[u8],
    ) -> Result<SshCaRow> {
        sqlx::query(
            "INSERT INTO ssh_certificate_authorities
             (id, account_id, created_at, description, metadata, key_type, public_key, private_key_sealed)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(account_id)
        .bind(created_at)
        .bind(description)
        .bind(metadata)
        .bind(key_type)
        .bind(public_key)
        .bind(private_key_sealed)
        .execute(&self.pool)
        .await?;
        Ok(SshCaRow {
            id: id.to_owned(),
            created_at: created_at.to_owned(),
            description: description.to_owned(),
            metadata: metadata.to_owned(),
            key_type: key_type.to_owned(),
            public_key: public_key.to_owned(),
        })
    }

    pub async fn get_ssh_ca(&self, account_id: &str, id: &str) -> Result<Option<SshCaRow>> {
        fetch_one(&self.pool, "ssh_certificate_authorities", account_id, id)
            .await?
            .as_ref()
            .map(row)
            .transpose()
    }

    /// The sealed private key of an authority. Only the integration tests read it today (they
    /// check that no key is stored in clear and that it opens with the server key); kept public
    /// rather than `#[cfg(test)]`, which `server/tests/` cannot see, and the way a future signing
    /// operation gets its key.
    pub async fn ssh_ca_sealed_key(&self, account_id: &str, id: &str) -> Result<Option<Vec<u8>>> {
        sqlx::query_scalar("SELECT private_key_sealed FROM ssh_certificate_authorities WHERE account_id = ? AND id = ?")
            .bind(account_id)
            .bind(id)
            .fetch_optional(&self.pool)
            .await
    }

    pub async fn list_ssh_cas(&self, account_id: &str, page: &PageQuery) -> Result<Vec<SshCaRow>> {
        fetch_page(&self.pool, "ssh_certificate_authorities", account_id, page)
            .await?
            .iter()
            .map(row)
            .collect()
    }

    pub async fn update_ssh_ca(
        &self,
        account_id: &str,
        id: &str,
        description: Option<String>,
        metadata: Option<String>,
    ) -> Result<Option<SshCaRow>> {
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
        if done.rows_affected() == 0 {
            return Ok(None);
        }
        self.get_ssh_ca(account_id, id).await
    }

    pub async fn delete_ssh_ca(&self, account_id: &str, id: &str) -> Result<bool> {
        super::delete_row(&self.pool, "ssh_certificate_authorities", account_id, id).await
    }
}
