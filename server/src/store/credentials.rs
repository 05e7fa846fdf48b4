//! Tunnel credentials (authtokens): rows, the token hash, authtoken authentication for the
//! agent channel, and bulk seeding for benchmarks.

use super::columns::{Column as _, Json, Text, record};
use super::records::{Changes, Record as _, insert};
use super::{Audit, Result, Store, new_token, token_columns};
use crate::secret::Secret;
use sqlx::Row as _;
use tunnel_core::ids::IdKind;

record! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct CredentialRow {
        table: "credentials",
        kind: IdKind::Credential,
        search: ["id", "description", "metadata", "acl", "owner_id"],
        columns: {
            acl: Vec<String> = Json,
            owner_id: String = Text,
        }
    }
}

/// A credential just created, with its token: the only moment the token exists in clear.
#[derive(Debug, Clone)]
pub struct NewCredential {
    pub row: CredentialRow,
    pub token: Secret,
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

impl Store {
    /// A credential of `owner_id` with a fresh token (returned, and only its hash stored).
    pub async fn create_credential(
        &self,
        account_id: &str,
        description: &str,
        metadata: &str,
        acl: &[String],
        owner_id: &str,
        audit: &Audit<'_, CredentialRow>,
    ) -> Result<NewCredential> {
        let minted = self.mint(IdKind::Credential);
        let token = new_token(&minted.0).expose();
        let row = CredentialRow::new(
            minted,
            description,
            metadata,
            acl.to_vec(),
            owner_id.to_owned(),
        );
        self.create_recorded(account_id, &row, token_columns(&token), audit)
            .await?;
        Ok(NewCredential {
            row,
            token: token.into(),
        })
    }

    /// Applies a partial update.
    pub async fn update_credential(
        &self,
        account_id: &str,
        id: &str,
        changes: CredentialChanges,
        audit: &Audit<'_, CredentialRow>,
    ) -> Result<CredentialRow> {
        let set =
            Changes::new(changes.description, changes.metadata).json("acl", changes.acl.as_ref());
        self.apply(account_id, id, set, audit).await
    }

    /// The credential of a presented authtoken, or `None` when the token is unknown, malformed
    /// or its credential was deleted. The hash is compared in constant time.
    pub async fn authenticate_authtoken(&self, token: &str) -> Result<Option<AuthtokenCredential>> {
        if tunnel_core::ids::SecretToken::parse(token).is_none() {
            return Ok(None);
        }
        let sql = "SELECT id, account_id, acl, secret_hash FROM credentials WHERE lookup = $1";
        let found = self
            .reading(async |conn| super::find_secret(conn, sql, token).await)
            .await?;
        let Some(r) = found else {
            return Ok(None);
        };
        Ok(Some(AuthtokenCredential {
            id: r.try_get("id")?,
            account_id: r.try_get("account_id")?,
            acl: Json::decode(&r, "acl")?,
        }))
    }
}

/// What [`Store::seed_credentials`] did, with ids to page from in benchmarks.
#[derive(Debug, Clone)]
pub struct Seeded {
    pub inserted: u64,
    /// The id with as many rows older as newer than it.
    pub middle_id: String,
    /// The 101st oldest id: `before_id` of the last full page.
    pub deep_id: String,
}

/// Rows per transaction when seeding: large enough that commits (fsyncs) do not dominate, small
/// enough that the WAL stays a few tens of MB.
const SEED_BATCH: u64 = 50_000;

impl Store {
    /// Bulk-loads `count` credentials into `account_id`, owned by its oldest admin, for
    /// benchmarks (`tunnel-server dev seed-credentials`). Ids come from the same [`IdGenerator`]
    /// scheme as real ones, with timestamps one millisecond apart ending now, so they sort like
    /// credentials created over time and before anything created afterwards. Each row gets its
    /// own random token (only its hash is stored, as always); nobody ever sees those tokens.
    /// Returns `None` when the account has no admin.
    ///
    /// [`IdGenerator`]: tunnel_core::ids::IdGenerator
    pub async fn seed_credentials(&self, account_id: &str, count: u64) -> Result<Option<Seeded>> {
        let owner: Option<String> = sqlx::query_scalar(
            "SELECT id FROM principals WHERE account_id = $1 AND is_admin = 1 ORDER BY id LIMIT 1",
        )
        .bind(account_id)
        .fetch_optional(&self.pool)
        .await?;
        let Some(owner) = owner else { return Ok(None) };
        let now = time::OffsetDateTime::now_utc();
        let now_ms = u64::try_from(now.unix_timestamp_nanos() / 1_000_000).unwrap_or_default();
        let first_ms = now_ms.saturating_sub(count);
        let mut ids = tunnel_core::ids::IdGenerator::default();
        let acl = vec!["bind:*.example.com".to_owned()];
        let mut done = 0;
        let (mut middle_id, mut deep_id) = (String::new(), String::new());
        while done < count {
            let batch = SEED_BATCH.min(count - done);
            let mut tx = self.write_tx().await?;
            let table = [CredentialRow::TABLE];
            super::search::bulk_pending_lists(&mut tx, self.dialect, &table, true).await?;
            for i in done..done + batch {
                let millis = first_ms + i;
                let mut random = [0u8; 14];
                rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut random);
                let id = ids.next(IdKind::Credential, millis, random);
                if i == count / 2 {
                    middle_id.clone_from(&id);
                }
                if i == 100.min(count - 1) {
                    deep_id.clone_from(&id);
                }
                let created_at =
                    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(millis) * 1_000_000)
                        .map(super::rfc3339)
                        .unwrap_or_else(|_| super::rfc3339(now));
                let token = new_token(&id).expose();
                let description = format!("seeded credential {i}");
                let row = CredentialRow::new(
                    (id, created_at),
                    &description,
                    "",
                    acl.clone(),
                    owner.clone(),
                );
                insert(&mut tx.exec(), account_id, &row, token_columns(&token)).await?;
            }
            super::search::bulk_pending_lists(&mut tx, self.dialect, &table, false).await?;
            tx.commit().await?;
            done += batch;
        }
        self.refresh_statistics(&[CredentialRow::TABLE]).await?;
        Ok(Some(Seeded {
            inserted: done,
            middle_id,
            deep_id,
        }))
    }
}
