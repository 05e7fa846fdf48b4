//! Tunnel credentials (authtokens): rows, the token hash, and authtoken authentication for the
//! agent channel.

use super::{
    PageQuery, Result, Store, fetch_one, fetch_page, hash_matches, hash_secret, json_col,
    lookup_of, new_token, to_json,
};
use sqlx::Row as _;
use sqlx::sqlite::SqliteRow;
use tunnel_core::ids::IdKind;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialRow {
    pub id: String,
    pub created_at: String,
    pub description: String,
    pub metadata: String,
    pub acl: Vec<String>,
    pub owner_id: String,
}

/// A credential just created, with its token: the only moment the token exists in clear.
#[derive(Clone)]
pub struct NewCredential {
    pub row: CredentialRow,
    pub token: String,
}

/// Never prints the token.
impl std::fmt::Debug for NewCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewCredential")
            .field("row", &self.row)
            .finish_non_exhaustive()
    }
}

/// The fields a PATCH may change; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct CredentialChanges {
    pub description: Option<String>,
    pub metadata: Option<String>,
    pub acl: Option<Vec<String>>,
}

/// What the agent channel needs to know about an authtoken it was presented.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthtokenCredential {
    pub id: String,
    pub account_id: String,
    /// The ACL rules (`tunnel_core::acl::Acl::parse` them); empty means unrestricted.
    pub acl: Vec<String>,
}

fn row(r: &SqliteRow) -> Result<CredentialRow> {
    Ok(CredentialRow {
        id: r.try_get("id")?,
        created_at: r.try_get("created_at")?,
        description: r.try_get("description")?,
        metadata: r.try_get("metadata")?,
        acl: json_col(r, "acl")?,
        owner_id: r.try_get("owner_id")?,
    })
}

impl Store {
    pub async fn create_credential(
        &self,
        account_id: &str,
        description: &str,
        metadata: &str,
        acl: &[String],
        owner_id: &str,
    ) -> Result<NewCredential> {
        let (id, created_at) = self.mint(IdKind::Credential);
        let token = new_token(&id).expose();
        sqlx::query(
            "INSERT INTO credentials (id, account_id, lookup, secret_hash, created_at, description, metadata, acl, owner_id)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(account_id)
        .bind(lookup_of(&token))
        .bind(hash_secret(&token))
        .bind(&created_at)
        .bind(description)
        .bind(metadata)
        .bind(to_json(&acl))
        .bind(owner_id)
        .execute(&self.pool)
        .await?;
        let row = CredentialRow {
            id,
            created_at,
            description: description.to_owned(),
            metadata: metadata.to_owned(),
            acl: acl.to_vec(),
            owner_id: owner_id.to_owned(),
        };
        Ok(NewCredential { row, token })
    }

    pub async fn get_credential(
        &self,
        account_id: &str,
        id: &str,
    ) -> Result<Option<CredentialRow>> {
        fetch_one(&self.pool, "credentials", account_id, id)
            .await?
            .as_ref()
            .map(row)
            .transpose()
    }

    pub async fn list_credentials(
        &self,
        account_id: &str,
        page: &PageQuery,
    ) -> Result<Vec<CredentialRow>> {
        fetch_page(&self.pool, "credentials", account_id, page)
            .await?
            .iter()
            .map(row)
            .collect()
    }

    /// Applies a partial update; `None` when the credential does not exist in the account.
    pub async fn update_credential(
        &self,
        account_id: &str,
        id: &str,
        changes: CredentialChanges,
    ) -> Result<Option<CredentialRow>> {
        let done = sqlx::query(
            "UPDATE credentials SET description = COALESCE(?, description), metadata = COALESCE(?, metadata),
             acl = COALESCE(?, acl) WHERE account_id = ? AND id = ?",
        )
        .bind(changes.description)
        .bind(changes.metadata)
        .bind(changes.acl.as_ref().map(to_json))
        .bind(account_id)
        .bind(id)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(None);
        }
        self.get_credential(account_id, id).await
    }

    pub async fn delete_credential(&self, account_id: &str, id: &str) -> Result<bool> {
        super::delete_row(&self.pool, "credentials", account_id, id).await
    }

    /// The credential of a presented authtoken, or `None` when the token is unknown, malformed
    /// or its credential was deleted. The hash is compared in constant time.
    pub async fn authenticate_authtoken(&self, token: &str) -> Result<Option<AuthtokenCredential>> {
        if tunnel_core::ids::SecretToken::parse(token).is_none() {
            return Ok(None);
        }
        let found = sqlx::query(
            "SELECT id, account_id, acl, secret_hash FROM credentials WHERE lookup = ?",
        )
        .bind(lookup_of(token))
        .fetch_optional(&self.pool)
        .await?;
        let Some(r) = found else { return Ok(None) };
        let stored: Vec<u8> = r.try_get("secret_hash")?;
        if !hash_matches(&stored, token) {
            return Ok(None);
        }
        Ok(Some(AuthtokenCredential {
            id: r.try_get("id")?,
            account_id: r.try_get("account_id")?,
            acl: json_col(&r, "acl")?,
        }))
    }
}
