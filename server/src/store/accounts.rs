//! Accounts, principals (users and bots) and their API keys.

use super::records::exists;
use super::{Result, Store, lookup_of};
use sqlx::{AnyConnection, Row as _};
use tunnel_core::ids::IdKind;

/// Who an API key authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyOwner {
    pub account_id: String,
    pub principal_id: String,
    pub is_admin: bool,
    /// The key's own id (`ak_…`).
    pub api_key_id: String,
}

/// A principal just created, with its API key: the only moment the key exists in clear.
#[derive(Clone)]
pub struct NewPrincipal {
    pub account_id: String,
    pub principal_id: String,
    pub api_key: String,
}

/// Never prints the API key.
impl std::fmt::Debug for NewPrincipal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewPrincipal")
            .field("account_id", &self.account_id)
            .field("principal_id", &self.principal_id)
            .finish_non_exhaustive()
    }
}

/// The name of the account created on first start or for the bootstrap key.
pub const DEFAULT_ACCOUNT_NAME: &str = "default";

/// A user or bot to create: its kind (`IdKind::User` or `IdKind::Bot`), name and admin flag.
#[derive(Debug, Clone, Copy)]
pub struct Principal<'a> {
    pub kind: IdKind,
    pub name: &'a str,
    pub admin: bool,
}

impl Store {
    /// A new account `name` with one admin user, named `admin_name`, and its API key.
    pub async fn create_account(&self, name: &str, admin_name: &str) -> Result<NewPrincipal> {
        let mut tx = self.write_tx().await?;
        let created = self
            .insert_account_with_admin(&mut tx, name, admin_name)
            .await?;
        tx.commit().await?;
        Ok(created)
    }

    /// The first account, with its admin, when the database has none yet; `None` when it has
    /// one. The check and the writes share a write transaction, so of several servers starting
    /// at once on one empty database, exactly one creates it.
    pub async fn create_first_account(&self, name: &str) -> Result<Option<NewPrincipal>> {
        let mut tx = self.write_tx().await?;
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM accounts")
            .fetch_one(&mut *tx)
            .await?;
        if n > 0 {
            return Ok(None);
        }
        // Unnamed: the operator names it with `user rename` (the banner says how).
        let created = self.insert_account_with_admin(&mut tx, name, "").await?;
        tx.commit().await?;
        Ok(Some(created))
    }

    /// A new account and its first admin user (named `admin_name`) with an API key, in `tx`.
    async fn insert_account_with_admin(
        &self,
        tx: &mut AnyConnection,
        name: &str,
        admin_name: &str,
    ) -> Result<NewPrincipal> {
        let account_id = self.insert_account(tx, name).await?;
        let admin = Principal {
            kind: IdKind::User,
            name: admin_name,
            admin: true,
        };
        self.insert_principal_with_key(tx, &account_id, &admin)
            .await
    }

    /// A new user or bot of `account_id` with a fresh API key, in `tx`.
    async fn insert_principal_with_key(
        &self,
        tx: &mut AnyConnection,
        account_id: &str,
        principal: &Principal<'_>,
    ) -> Result<NewPrincipal> {
        let principal_id = self.insert_principal(tx, account_id, principal).await?;
        let api_key = self
            .insert_api_key(tx, account_id, &principal_id, None)
            .await?;
        Ok(NewPrincipal {
            account_id: account_id.to_owned(),
            principal_id,
            api_key,
        })
    }

    /// A new account without principals, in `conn`; returns its id.
    async fn insert_account(&self, conn: &mut AnyConnection, name: &str) -> Result<String> {
        let (id, created_at) = self.mint(IdKind::Account);
        sqlx::query("INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)")
            .bind(&id)
            .bind(name)
            .bind(&created_at)
            .execute(conn)
            .await?;
        Ok(id)
    }

    /// `(account_id, name)` of every account, oldest first.
    pub async fn list_accounts(&self) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query("SELECT id, name FROM accounts ORDER BY id")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("id")?, r.try_get("name")?)))
            .collect()
    }

    /// The name of the account `account_id` (`None` when there is none).
    pub async fn account_name(&self, account_id: &str) -> Result<Option<String>> {
        let query = sqlx::query_scalar("SELECT name FROM accounts WHERE id = $1").bind(account_id);
        self.reading(async |conn| Ok(query.fetch_optional(conn).await?))
            .await
    }

    /// A new user or bot of `account_id` with an API key; `None` when the account is unknown.
    pub async fn create_principal(
        &self,
        account_id: &str,
        principal: &Principal<'_>,
    ) -> Result<Option<NewPrincipal>> {
        let mut tx = self.write_tx().await?;
        let found: Option<String> = sqlx::query_scalar("SELECT id FROM accounts WHERE id = $1")
            .bind(account_id)
            .fetch_optional(&mut *tx)
            .await?;
        if found.is_none() {
            return Ok(None);
        }
        let created = self
            .insert_principal_with_key(&mut tx, account_id, principal)
            .await?;
        tx.commit().await?;
        Ok(Some(created))
    }

    /// Makes sure an admin of the default account holds exactly `api_key` (docs/accounts.md,
    /// `TUNNEL_BOOTSTRAP_API_KEY`). Returns `true` when something was created.
    pub async fn ensure_bootstrap_key(&self, api_key: &str) -> Result<bool> {
        if self
            .authenticate_api_key(api_key)
            .await?
            .is_some_and(|owner| owner.is_admin)
        {
            return Ok(false);
        }
        // Checked again, with the default account, inside the write transaction: of several
        // servers starting at once with the same key, one installs it and the others find it.
        let mut tx = self.write_tx().await?;
        if let Some(owner) = self.authenticate_api_key_in(&mut tx, api_key).await? {
            if owner.is_admin {
                return Ok(false);
            }
            // Its holder was made a member (`user role`): an admin holds the key, as asked.
            sqlx::query("UPDATE principals SET is_admin = 1 WHERE id = $1")
                .bind(&owner.principal_id)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            self.keys.clear();
            tracing::warn!(
                principal = %owner.principal_id,
                "the bootstrap API key's holder was a member: made an admin again, as the bootstrap key asks"
            );
            return Ok(true);
        }
        let account_id: Option<String> =
            sqlx::query_scalar("SELECT id FROM accounts WHERE name = $1 ORDER BY id LIMIT 1")
                .bind(DEFAULT_ACCOUNT_NAME)
                .fetch_optional(&mut *tx)
                .await?;
        let account_id = match account_id {
            Some(id) => id,
            None => self.insert_account(&mut tx, DEFAULT_ACCOUNT_NAME).await?,
        };
        let admin = Principal {
            kind: IdKind::User,
            name: "",
            admin: true,
        };
        let principal_id = self.insert_principal(&mut tx, &account_id, &admin).await?;
        // A key with the same lookup but another secret is replaced: the operator's env wins.
        sqlx::query("DELETE FROM api_keys WHERE lookup = $1")
            .bind(lookup_of(api_key))
            .execute(&mut *tx)
            .await?;
        self.insert_api_key(&mut tx, &account_id, &principal_id, Some(api_key))
            .await?;
        tx.commit().await?;
        self.keys.clear();
        Ok(true)
    }

    /// The owner of a presented API key, or `None` when it is unknown: from the keys this
    /// process authenticated recently when it is one of them (`key_cache`, by the key's SHA-256),
    /// else from the database (the stored hash compared in constant time).
    pub async fn authenticate_api_key(&self, api_key: &str) -> Result<Option<ApiKeyOwner>> {
        let hash = super::hash_secret(api_key);
        let generation = match self.keys.get(&hash) {
            Ok(owner) => return Ok(Some(owner)),
            Err(generation) => generation,
        };
        let owner = self
            .reading(async |conn| self.authenticate_api_key_in(conn, api_key).await)
            .await?;
        if let Some(owner) = &owner {
            self.keys.put(generation, hash, owner.clone());
        }
        Ok(owner)
    }

    /// Forgets the keys recently authenticated: another node of the cluster revoked one.
    pub fn forget_api_keys(&self) {
        self.keys.clear();
    }

    /// [`Store::authenticate_api_key`] in `conn` (a transaction's, to see its own writes).
    async fn authenticate_api_key_in(
        &self,
        conn: &mut AnyConnection,
        api_key: &str,
    ) -> Result<Option<ApiKeyOwner>> {
        let sql = "SELECT k.id, k.secret_hash, k.account_id, k.principal_id, p.is_admin
             FROM api_keys k JOIN principals p ON p.id = k.principal_id WHERE k.lookup = $1";
        let Some(row) = super::find_secret(conn, sql, api_key).await? else {
            return Ok(None);
        };
        Ok(Some(ApiKeyOwner {
            account_id: row.try_get("account_id")?,
            principal_id: row.try_get("principal_id")?,
            is_admin: row.try_get::<i64, _>("is_admin")? != 0,
            api_key_id: row.try_get("id")?,
        }))
    }

    /// Whether `principal_id` is a user or bot of `account_id`.
    pub async fn principal_exists(&self, account_id: &str, principal_id: &str) -> Result<bool> {
        self.reading(async |conn| exists(conn, "principals", account_id, principal_id).await)
            .await
    }

    /// A new user or bot of `account_id`, inside the caller's transaction; returns its id.
    async fn insert_principal(
        &self,
        conn: &mut AnyConnection,
        account_id: &str,
        principal: &Principal<'_>,
    ) -> Result<String> {
        let (id, created_at) = self.mint(principal.kind);
        sqlx::query(
            "INSERT INTO principals (id, account_id, is_admin, created_at, name) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&id)
        .bind(account_id)
        .bind(i64::from(principal.admin))
        .bind(&created_at)
        .bind(principal.name)
        .execute(conn)
        .await?;
        Ok(id)
    }
}
