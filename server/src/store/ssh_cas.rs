//! SSH certificate authorities. The private key arrives here already sealed (`keys.rs`): the
//! database never sees it in clear.

use super::columns::{Text, Value, record};
use super::records::Changes;
use super::{Audit, Result, Store};
use tunnel_core::ids::IdKind;

record! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SshCaRow {
        table: "ssh_certificate_authorities",
        kind: IdKind::SshCertificateAuthority,
        search: ["id", "description", "metadata", "key_type"],
        columns: {
            key_type: String = Text,
            public_key: String = Text,
        }
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
        audit: &Audit<'_, SshCaRow>,
    ) -> Result<SshCaRow> {
        let sealed = vec![(
            "private_key_sealed",
            Value::Blob(private_key_sealed.to_vec()),
        )];
        self.create_recorded(account_id, &row, sealed, audit)
            .await?;
        Ok(row)
    }

    /// The sealed private key of an authority. Only the integration tests read it today (they
    /// check that no key is stored in clear and that it opens with the server key); kept public
    /// rather than `#[cfg(test)]`, which `server/tests/` cannot see, and the way a future signing
    /// operation gets its key.
    pub async fn ssh_ca_sealed_key(&self, account_id: &str, id: &str) -> Result<Option<Vec<u8>>> {
        Ok(sqlx::query_scalar("SELECT private_key_sealed FROM ssh_certificate_authorities WHERE account_id = $1 AND id = $2")
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
        audit: &Audit<'_, SshCaRow>,
    ) -> Result<SshCaRow> {
        let set = Changes::new(description, metadata);
        self.apply(account_id, id, set, audit).await
    }
}
