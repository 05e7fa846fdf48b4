//! The state every handler sees: the store, the configuration, the live tunnel sessions, the
//! key vault, the limit on concurrent key generations and the webhook sender. Cheap to clone
//! (everything is shared behind `Arc`s or pools).

use crate::agents::Registry;
use crate::config::Config;
use crate::keys::{KeyGenLimiter, KeyVault};
use crate::secret::Secret;
use crate::store::Store;
use crate::webhooks::client::Sender;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct AppState {
    pub store: Store,
    pub config: Arc<Config>,
    pub registry: Registry,
    pub keys: KeyVault,
    pub keygen: KeyGenLimiter,
    /// Sends webhooks: the delivery worker's deliveries and destination tests.
    pub webhooks: Sender,
}

impl AppState {
    /// Opens the database (running migrations) and loads the server key.
    pub async fn open(config: Config) -> anyhow::Result<AppState> {
        let store = Store::open(&config.database).await?;
        let keys = KeyVault::load(
            config.server_key.as_ref().map(Secret::expose),
            config.database.data_dir().as_deref(),
        )?;
        let webhooks = Sender::new(config.webhooks.timeout, config.webhooks.allow_private)?;
        Ok(AppState {
            webhooks,
            store,
            config: Arc::new(config),
            registry: Registry::default(),
            keys,
            keygen: KeyGenLimiter::default(),
        })
    }

    /// The absolute `uri` of an API path (`{base_url}` + path).
    pub fn uri(&self, path: &str) -> String {
        self.config.uri(path)
    }
}
