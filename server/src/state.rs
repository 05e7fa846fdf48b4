//! The state every handler sees: the store, the configuration, the live tunnel sessions (this
//! node's connections and the node itself), the key vault, the limit on concurrent key
//! generations, the webhook sender and the rate limits' buckets. One `Arc` to clone: axum clones
//! the state for every layer and handler of every request, and cloning (then dropping) the
//! parts one by one, each behind `Arc`s of its own, cost about 5 % of the CPU of a `GET` of one
//! credential (BENCHMARKS.md, closing note).

use crate::agents::{Node, Registry, Sessions};
use crate::config::Config;
use crate::keys::{KeyGenLimiter, KeyVault};
use crate::ratelimit::Limits;
use crate::secret::Secret;
use crate::store::{DatabaseUrl, Store};
use crate::webhooks::client::Sender;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct AppState(Arc<Parts>);

/// What [`AppState`] shares; its fields are read through it (`state.store`).
#[derive(Debug, Clone)]
pub struct Parts {
    pub store: Store,
    pub config: Arc<Config>,
    pub registry: Registry,
    /// This server as a node of the installation's cluster (docs/cluster.md).
    pub node: Arc<Node>,
    pub keys: KeyVault,
    pub keygen: KeyGenLimiter,
    /// Sends webhooks: the delivery worker's deliveries and destination tests.
    pub webhooks: Sender,
    /// The rate limits' buckets (this node's).
    pub limits: Arc<Limits>,
}

/// What is sealed with the server key to recognise it ([`Store::server_key_check`]).
const KEY_CHECK: &[u8] = b"tunnel-server key check";
const KEY_CHECK_CONTEXT: &str = "server_key_check";
const WRONG_KEY: &str = "the server key is not the one this database was sealed with: start with \
     the key it was created with";

impl AppState {
    /// Opens the database (running migrations), loads the server key, and joins the cluster
    /// (with a heartbeat task that keeps this node's membership while the runtime runs).
    pub async fn open(config: Config) -> anyhow::Result<AppState> {
        // On PostgreSQL there is no data directory to keep a key file in, and every server of
        // the installation must seal with the same key: it is given, never made up.
        anyhow::ensure!(
            config.database.data_dir().is_some()
                || config.database == DatabaseUrl::SqliteMemory
                || config.server_key.is_some(),
            "with PostgreSQL, give the server key with --server-key or TUNNEL_SERVER_KEY \
             (64 hex digits, e.g. from `openssl rand -hex 32`; the same on every server of the \
             installation, and kept safe: SSH CA private keys and webhook secrets are sealed with it)"
        );
        let store = Store::open_with(&config.database, config.database_idle_timeout).await?;
        let data_dir = config.database.data_dir();
        // Where the key it was created with is given, for the message of a wrong one.
        let given_as = match &data_dir {
            Some(dir) => format!(
                "--server-key, TUNNEL_SERVER_KEY, or {}",
                dir.join(crate::keys::SERVER_KEY_FILE).display()
            ),
            None => "--server-key or TUNNEL_SERVER_KEY".to_owned(),
        };
        let stored_check = store.stored_key_check().await?;
        // No key given and no key file: a new key would be made and written. A database that
        // has met a key already cannot open with it; refused before the wrong file is written.
        let would_make_key = config.server_key.is_none()
            && data_dir
                .as_ref()
                .is_some_and(|dir| !dir.join(crate::keys::SERVER_KEY_FILE).exists());
        if would_make_key && (stored_check.is_some() || store.sealed_sample().await?.is_some()) {
            anyhow::bail!(
                "this database was sealed with a server key that is not here: give it with {given_as}"
            );
        }
        let keys = KeyVault::load(
            config.server_key.as_ref().map(Secret::expose),
            data_dir.as_deref(),
        )?;
        let check = match stored_check {
            Some(check) => check,
            None => {
                // The database meets a key for the first time (new, or sealed by a version
                // without the check, or moved by `migrate`): what it already holds sealed must
                // open with this key before the key is adopted.
                if let Some((id, sealed)) = store.sealed_sample().await? {
                    anyhow::ensure!(keys.open(&sealed, &id).is_ok(), "{WRONG_KEY} ({given_as})");
                }
                store
                    .server_key_check(&keys.seal(KEY_CHECK, KEY_CHECK_CONTEXT)?)
                    .await?
            }
        };
        anyhow::ensure!(
            keys.open(&check, KEY_CHECK_CONTEXT).ok().as_deref() == Some(KEY_CHECK),
            "{WRONG_KEY} ({given_as})"
        );
        let webhooks = Sender::new(config.webhooks.timeout, config.webhooks.allow_private)?;
        let secret = config
            .node
            .cluster_secret
            .clone()
            .unwrap_or_else(|| Secret::from(keys.cluster_secret()));
        let node = Arc::new(Node::new(
            config.node.id.clone(),
            config.node.advertise_url.clone(),
            secret,
            config.node.lease,
        )?);
        node.join(&store).await?;
        node.clone().spawn_heartbeat(store.clone());
        let config_limits = config.rate_limits;
        Ok(AppState(Arc::new(Parts {
            webhooks,
            store,
            config: Arc::new(config),
            registry: Registry::default(),
            node,
            keys,
            keygen: KeyGenLimiter::default(),
            limits: Arc::new(Limits::new(config_limits)),
        })))
    }

    /// The same state with `change` made to its parts (tests: a registry with other timings, a
    /// smaller key generation limiter). Before the state is shared, nothing is copied.
    pub fn with(mut self, change: impl FnOnce(&mut Parts)) -> AppState {
        change(Arc::make_mut(&mut self.0));
        self
    }

    /// The live tunnel sessions as the API and the agent channel act on them.
    pub fn sessions(&self) -> Sessions {
        Sessions {
            registry: self.registry.clone(),
            store: self.store.clone(),
            config: self.config.clone(),
            node: self.node.clone(),
        }
    }

    /// The absolute `uri` of an API path (`{base_url}` + path).
    pub fn uri(&self, path: &str) -> String {
        self.config.uri(path)
    }
}

impl std::ops::Deref for AppState {
    type Target = Parts;
    fn deref(&self) -> &Parts {
        &self.0
    }
}
