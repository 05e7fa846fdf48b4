//! API keys as a resource of the API (docs/api/api_keys.md): rows, creation with a fresh key
//! (only its hash stored), the description and metadata update. Authentication with a key is
//! in `accounts.rs`. A key belongs to one principal ([`ApiKeyRow::principal_id`], `owner_id`
//! on the wire); members reach only their own (the `owner` of the generic reads).

use super::columns::{Text, record};
use super::exec::Exec;
use super::records::{Changes, Scope, insert};
use super::{Audit, Result, Store, new_token, token_columns};
use crate::secret::Secret;
use sqlx::AnyConnection;
use tunnel_core::ids::IdKind;

record! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ApiKeyRow {
        table: "api_keys",
        kind: IdKind::ApiKey,
        owner: "principal_id",
        search: ["id", "description", "metadata", "principal_id"],
        columns: {
            principal_id: String = Text,
        }
    }
}

/// An API key just created, with the key itself: the only moment it exists in clear.
#[derive(Debug, Clone)]
pub struct NewApiKey {
    pub row: ApiKeyRow,
    pub key: Secret,
}

impl Store {
    /// A key of `owner_id` (a principal of the account, checked by the caller).
    pub async fn create_api_key(
        &self,
        account_id: &str,
        description: &str,
        metadata: &str,
        owner_id: &str,
        audit: &Audit<'_, ApiKeyRow>,
    ) -> Result<NewApiKey> {
        let (row, key) = self.new_api_key(description, metadata, owner_id);
        self.create_recorded(account_id, &row, token_columns(&key), audit)
            .await?;
        Ok(NewApiKey {
            row,
            key: key.into(),
        })
    }

    /// A key of `owner_id` stored in `conn` without an event: the operator's commands and the
    /// first start, which no caller of the API causes. The key is `given` (the operator's
    /// bootstrap key) or fresh; answered in clear.
    pub(super) async fn insert_api_key(
        &self,
        conn: &mut AnyConnection,
        account_id: &str,
        owner_id: &str,
        given: Option<&str>,
    ) -> Result<String> {
        let (row, fresh) = self.new_api_key("", "", owner_id);
        let key = given.map_or(fresh, str::to_owned);
        insert(&mut Exec::Sqlx(conn), account_id, &row, token_columns(&key)).await?;
        Ok(key)
    }

    /// Changes the description and metadata (`None` leaves one as it is) of a key in `scope`.
    pub async fn update_api_key(
        &self,
        scope: Scope<'_>,
        id: &str,
        description: Option<String>,
        metadata: Option<String>,
        audit: &Audit<'_, ApiKeyRow>,
    ) -> Result<ApiKeyRow> {
        self.apply(scope, id, Changes::new(description, metadata), audit)
            .await
    }

    /// The row of a new key and the key, whose lookup part is the row's id.
    fn new_api_key(
        &self,
        description: &str,
        metadata: &str,
        owner_id: &str,
    ) -> (ApiKeyRow, String) {
        let minted = self.mint(IdKind::ApiKey);
        let key = new_token(&minted.0).expose();
        let row = ApiKeyRow::new(minted, description, metadata, owner_id.to_owned());
        (row, key)
    }
}
