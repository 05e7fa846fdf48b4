//! The options of `serve` (docs/command-line.md): [`ServeOptions`], the one struct both the
//! command line and the `TUNNEL_*` environment variables fill, turned once into the runtime
//! [`Config`] that `AppState` shares read-only.

use crate::ratelimit::{self, RateFlag};
use crate::secret::Secret;
use crate::store::DatabaseUrl;
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use tunnel_core::version::Version;

/// `--database`, shared by `serve` and the operator commands that open the same database.
/// A PostgreSQL URL may hold a password: `--help` does not print the variable's value, and
/// `Debug` shows the URL with its password masked ([`DatabaseUrl::redact_text`]).
#[derive(Clone, Args)]
pub struct DatabaseOption {
    /// sqlite://<file> (created if missing), sqlite::memory:, or
    /// postgres://user:password@host:port/database (docs/database.md).
    #[arg(
        long,
        env = "TUNNEL_DATABASE",
        default_value = "sqlite://data/tunnel.db",
        hide_env_values = true
    )]
    pub database: String,
}

impl std::fmt::Debug for DatabaseOption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseOption")
            .field("database", &DatabaseUrl::redact_text(&self.database))
            .finish()
    }
}

/// The options of `serve`, from flags or their `TUNNEL_<FLAG>` variables. The doc comments of
/// the fields are the `--help` text.
#[derive(Debug, Clone, Args)]
pub struct ServeOptions {
    #[arg(long, env = "TUNNEL_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Also serve the API alone at the root of this address (e.g. 127.0.0.1:8081), where the
    /// official ngrok client libraries expect it: the Rust one drops the `/api` of a base URL.
    /// Off by default.
    #[arg(long, env = "TUNNEL_API_LISTEN")]
    pub api_listen: Option<SocketAddr>,
    /// Serve the server's gauges at GET /metrics (Prometheus text format, no authentication) on
    /// this address, e.g. 127.0.0.1:9100. Off by default.
    #[arg(long, env = "TUNNEL_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    #[command(flatten)]
    pub database: DatabaseOption,
    /// How long a PostgreSQL connection may stay unused before it is closed (e.g. 10m, 30s).
    #[arg(long, env = "TUNNEL_DATABASE_IDLE_TIMEOUT", default_value = "10m", value_parser = parse_duration)]
    pub database_idle_timeout: Duration,
    /// Base URL of the API in every `uri` (default http://<listen>/api).
    #[arg(long, env = "TUNNEL_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Directory of the built console (`trunk build`), served at `/`.
    #[arg(long, env = "TUNNEL_CONSOLE_DIR", default_value = "dist")]
    pub console_dir: PathBuf,
    /// Region reported for tunnel sessions.
    #[arg(long, env = "TUNNEL_REGION", default_value = "local")]
    pub region: String,
    /// Latest agent version per major version, comma-separated (e.g. 3.4.1,2.9.0).
    #[arg(long, env = "TUNNEL_AGENT_LATEST", default_value = "")]
    pub agent_latest: String,
    /// Origin allowed by CORS (repeatable; comma-separated in the env variable).
    #[arg(
        long = "cors-origin",
        env = "TUNNEL_CORS_ORIGIN",
        value_delimiter = ','
    )]
    pub cors_origin: Vec<String>,
    /// Server key sealing SSH CA private keys and webhook signing secrets, 64 hex digits
    /// (default: <data dir>/server.key).
    #[arg(long, env = "TUNNEL_SERVER_KEY", hide_env_values = true)]
    pub server_key: Option<Secret>,
    /// Make sure an admin of the default account holds exactly this API key.
    #[arg(long, env = "TUNNEL_BOOTSTRAP_API_KEY", hide_env_values = true)]
    pub bootstrap_api_key: Option<Secret>,
    /// Let webhooks reach loopback, private and link-local addresses (tests, local demos).
    #[arg(
        long,
        env = "TUNNEL_ALLOW_PRIVATE_WEBHOOKS",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub allow_private_webhooks: bool,
    /// How long a webhook request may take (e.g. 10s, 500ms).
    #[arg(long, env = "TUNNEL_WEBHOOK_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub webhook_timeout: Duration,
    /// How many webhook requests may be in flight at once.
    #[arg(long, env = "TUNNEL_WEBHOOK_CONCURRENCY", default_value_t = 16,
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub webhook_concurrency: u16,
    /// The wait before the first webhook retry, in ms (tests shorten it).
    #[arg(long, env = "TUNNEL_WEBHOOK_RETRY_BASE_MS", default_value_t = 5000, hide = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub webhook_retry_base_ms: u64,
    /// How long events stay in the audit log (e.g. `90d`, `12h`); older ones are deleted in
    /// the background.
    #[arg(long, env = "TUNNEL_EVENT_RETENTION", default_value = "90d", value_parser = parse_duration)]
    pub event_retention: Duration,
    /// This server's name among the nodes of a cluster (letters, digits, `.`, `_`, `-`; at most
    /// 64). Default: a new random one at each start.
    #[arg(long, env = "TUNNEL_NODE_ID")]
    pub node_id: Option<String>,
    /// The URL other nodes reach this one on, e.g. http://10.0.0.5:8080 (default:
    /// http://<listen>).
    #[arg(long, env = "TUNNEL_ADVERTISE_URL")]
    pub advertise_url: Option<String>,
    /// The secret nodes authenticate each other with, at least 32 characters, the same on every
    /// node (default: derived from the server key).
    #[arg(long, env = "TUNNEL_CLUSTER_SECRET", hide_env_values = true)]
    pub cluster_secret: Option<Secret>,
    /// How long a node's sessions outlive its last heartbeat (tests shorten it).
    #[arg(long, env = "TUNNEL_NODE_LEASE", default_value = "15s", hide = true, value_parser = parse_duration)]
    pub node_lease: Duration,
    /// API requests per API key: `<n>/<s|m|h>[,<burst>]`, or `off` (docs/rate-limits.md).
    #[arg(long, value_name = "RATE", env = "TUNNEL_RATE_LIMIT_KEY", default_value = ratelimit::DEFAULT_PER_KEY, value_parser = RateFlag::parse)]
    pub rate_limit_key: RateFlag,
    /// API requests per client IP address, whatever the key.
    #[arg(long, value_name = "RATE", env = "TUNNEL_RATE_LIMIT_IP", default_value = ratelimit::DEFAULT_PER_IP, value_parser = RateFlag::parse)]
    pub rate_limit_ip: RateFlag,
    /// Unknown API keys per client IP address; once spent, the address is refused until the
    /// bucket has room again.
    #[arg(long, value_name = "RATE", env = "TUNNEL_RATE_LIMIT_AUTH_FAILURES", default_value = ratelimit::DEFAULT_AUTH_FAILURES, value_parser = RateFlag::parse)]
    pub rate_limit_auth_failures: RateFlag,
    /// Agent connections per client IP address.
    #[arg(long, value_name = "RATE", env = "TUNNEL_RATE_LIMIT_AGENT_CONNECTS", default_value = ratelimit::DEFAULT_AGENT_CONNECTS, value_parser = RateFlag::parse)]
    pub rate_limit_agent_connects: RateFlag,
}

/// A duration as `500ms`, `10s`, `2m`, `12h`, `90d`, or a number of seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration such as 10s or 500ms"))?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        "d" => Duration::from_secs(n.saturating_mul(86_400)),
        _ => return Err(format!("`{text}`: the unit is ms, s, m, h or d")),
    };
    if d.is_zero() {
        return Err("a duration of zero".into());
    }
    Ok(d)
}

impl ServeOptions {
    /// The runtime configuration of a server whose listener is bound to `listen` (the real
    /// address, so a `--listen` port 0 shows as the port it got in the default public URL).
    pub fn config(&self, listen: SocketAddr) -> anyhow::Result<Config> {
        Ok(Config {
            listen,
            database: DatabaseUrl::parse(&self.database.database)?,
            database_idle_timeout: self.database_idle_timeout,
            public_url: match &self.public_url {
                Some(url) => Config::parse_public_url(url)?,
                None => Config::default_public_url(listen),
            },
            console_dir: Some(self.console_dir.clone()),
            region: self.region.clone(),
            agent_latest: tunnel_core::version::parse_catalogue(&self.agent_latest)
                .map_err(|e| anyhow::anyhow!("--agent-latest: {e}"))?,
            cors_origins: Config::parse_cors_origins(&self.cors_origin)?,
            // A blank key (an empty variable) is no key: on PostgreSQL it is refused, with
            // SQLite the key file is used; taken as given, it sealed with a random one.
            server_key: self
                .server_key
                .clone()
                .filter(|key| !key.expose().trim().is_empty()),
            webhooks: crate::webhooks::Settings {
                allow_private: self.allow_private_webhooks,
                timeout: self.webhook_timeout,
                concurrency: usize::from(self.webhook_concurrency),
                retry_base: Duration::from_millis(self.webhook_retry_base_ms),
            },
            event_retention: self.event_retention,
            node: NodeConfig {
                id: match &self.node_id {
                    Some(id) => NodeConfig::parse_id(id)?,
                    None => NodeConfig::random_id(),
                },
                advertise_url: match &self.advertise_url {
                    Some(url) => NodeConfig::parse_advertise_url(url)?,
                    None => NodeConfig::default_advertise_url(listen),
                },
                cluster_secret: match &self.cluster_secret {
                    Some(secret) => Some(NodeConfig::check_secret(secret)?),
                    None => None,
                },
                lease: self.node_lease,
            },
            rate_limits: ratelimit::Settings {
                per_key: self.rate_limit_key.0,
                per_ip: self.rate_limit_ip.0,
                auth_failures: self.rate_limit_auth_failures.0,
                agent_connects: self.rate_limit_agent_connects.0,
            },
        })
    }
}

/// A node's lease by default (`--node-lease`): the sessions of a node that died leave every
/// list within it.
pub const DEFAULT_NODE_LEASE: Duration = Duration::from_secs(15);

/// This server as a node of a cluster (`--node-id`, `--advertise-url`, `--cluster-secret`;
/// docs/cluster.md).
#[derive(Debug, Clone)]
pub struct NodeConfig {
    pub id: String,
    /// Where other nodes reach this one (no trailing slash).
    pub advertise_url: String,
    /// `None`: derived from the server key.
    pub cluster_secret: Option<Secret>,
    /// How long the node's sessions outlive its last heartbeat.
    pub lease: Duration,
}

impl NodeConfig {
    /// A node on `listen` with a random id (tests, and servers started without `--node-id`).
    pub fn on(listen: SocketAddr) -> NodeConfig {
        NodeConfig {
            id: NodeConfig::random_id(),
            advertise_url: NodeConfig::default_advertise_url(listen),
            cluster_secret: None,
            lease: DEFAULT_NODE_LEASE,
        }
    }

    /// `node-` and 12 random hex digits.
    pub fn random_id() -> String {
        let bytes: [u8; 6] = rand::random();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!("node-{hex}")
    }

    pub fn parse_id(id: &str) -> anyhow::Result<String> {
        anyhow::ensure!(
            !id.is_empty()
                && id.len() <= 64
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')),
            "--node-id `{}`: 1 to 64 letters, digits, `.`, `_` or `-`",
            id.chars().take(80).collect::<String>()
        );
        Ok(id.to_owned())
    }

    /// `http://<listen>`, loopback when listening on every address: right for nodes on one
    /// machine; nodes on several machines give `--advertise-url`.
    pub fn default_advertise_url(listen: SocketAddr) -> String {
        let mut shown = listen;
        if shown.ip().is_unspecified() {
            shown.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        format!("http://{shown}")
    }

    pub fn parse_advertise_url(text: &str) -> anyhow::Result<String> {
        let parsed =
            url::Url::parse(text).map_err(|e| anyhow::anyhow!("--advertise-url `{text}`: {e}"))?;
        anyhow::ensure!(
            matches!(parsed.scheme(), "http" | "https")
                && parsed.host_str().is_some_and(|h| !h.is_empty())
                && parsed.username().is_empty()
                && parsed.password().is_none()
                && parsed.query().is_none(),
            "--advertise-url `{text}`: an http:// or https:// URL of this node, e.g. http://10.0.0.5:8080"
        );
        Ok(text.trim_end_matches('/').to_owned())
    }

    fn check_secret(secret: &Secret) -> anyhow::Result<Secret> {
        let text = secret.expose().trim();
        anyhow::ensure!(
            text.len() >= 32 && text.len() <= 200 && text.bytes().all(|b| b.is_ascii_graphic()),
            "--cluster-secret must be 32 to 200 printable characters without spaces \
             (e.g. from `openssl rand -hex 32`)"
        );
        Ok(Secret::from(text.to_owned()))
    }
}

/// The server's configuration at run time, checked and normalised.
/// `--event-retention`'s default: 90 days.
pub const DEFAULT_EVENT_RETENTION: std::time::Duration =
    std::time::Duration::from_secs(90 * 86_400);

#[derive(Debug, Clone)]
pub struct Config {
    /// Address of the one listener.
    pub listen: SocketAddr,
    pub database: DatabaseUrl,
    /// How long a PostgreSQL connection stays open unused (`Store::open_with`).
    pub database_idle_timeout: Duration,
    /// `{base_url}`: every `uri` of the API starts with it (no trailing slash), e.g.
    /// `http://127.0.0.1:8080/api`.
    pub public_url: String,
    /// The built console, served at `/` with an `index.html` fallback.
    pub console_dir: Option<PathBuf>,
    /// Region reported for tunnel sessions.
    pub region: String,
    /// Latest agent version of each major version, for the update command.
    pub agent_latest: Vec<Version>,
    /// Origins allowed by CORS besides same-origin, as browsers send them in `Origin`
    /// (`scheme://host[:port]`, checked by [`Config::parse_cors_origins`]).
    pub cors_origins: Vec<String>,
    /// Hex server key sealing SSH CA private keys (else `server.key` in the data directory).
    pub server_key: Option<Secret>,
    /// Webhook delivery: the address check, timeout, concurrency and retry schedule.
    pub webhooks: crate::webhooks::Settings,
    /// How long events stay in the audit log (`crate::retention`).
    pub event_retention: Duration,
    /// This server as a node of a cluster.
    pub node: NodeConfig,
    /// The rate limits (`crate::ratelimit`).
    pub rate_limits: ratelimit::Settings,
}

impl Config {
    /// The default `{base_url}` for a listen address: loopback when listening on all addresses.
    pub fn default_public_url(listen: SocketAddr) -> String {
        let mut shown = listen;
        if shown.ip().is_unspecified() {
            shown.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        format!("http://{shown}{}", tunnel_core::paths::API_PREFIX)
    }

    /// The absolute `uri` of an API path (`{base_url}` + path).
    pub fn uri(&self, path: &str) -> String {
        // Not `format!`: every row of a list page has one, and its machinery was a few
        // percent of a page's CPU.
        [self.public_url.as_str(), path].concat()
    }

    /// An in-memory configuration, as used by tests.
    pub fn in_memory() -> Config {
        let listen: SocketAddr = ([127, 0, 0, 1], 8080).into();
        Config {
            listen,
            database: DatabaseUrl::SqliteMemory,
            database_idle_timeout: crate::store::DEFAULT_IDLE_TIMEOUT,
            public_url: Config::default_public_url(listen),
            console_dir: None,
            region: "local".into(),
            agent_latest: Vec::new(),
            cors_origins: Vec::new(),
            server_key: None,
            webhooks: crate::webhooks::Settings::default(),
            event_retention: DEFAULT_EVENT_RETENTION,
            node: NodeConfig::on(listen),
            // In-process tests send hundreds of requests a second with one key; the tests of
            // the limits themselves set theirs.
            rate_limits: ratelimit::Settings::off(),
        }
    }

    /// Normalises a `--public-url` (drops a trailing `/`) and checks it is an http(s) URL.
    pub fn parse_public_url(text: &str) -> anyhow::Result<String> {
        // The text is not shown: it may hold a password.
        let parsed =
            url::Url::parse(text).map_err(|e| anyhow::anyhow!("--public-url is not a URL: {e}"))?;
        anyhow::ensure!(
            matches!(parsed.scheme(), "http" | "https"),
            "--public-url must be an http:// or https:// URL"
        );
        // Every `uri` is the URL followed by a path, and it is logged at start.
        anyhow::ensure!(
            parsed.query().is_none() && parsed.fragment().is_none(),
            "--public-url takes no query or fragment: every uri is the URL followed by a path"
        );
        anyhow::ensure!(
            parsed.username().is_empty() && parsed.password().is_none(),
            "--public-url takes no user or password: it is shown in every uri and in the log"
        );
        // As parsed (`http:/h/api` is `http://h/api`), not as typed.
        Ok(parsed.as_str().trim_end_matches('/').to_owned())
    }

    /// Checks and normalises the `--cors-origin` values: each must be an origin,
    /// `http(s)://host[:port]` with no path, query or credentials, and is kept as browsers
    /// serialise it in the `Origin` header (lower-case host, default port dropped). Empty entries
    /// (e.g. a trailing comma in `TUNNEL_CORS_ORIGIN`) are skipped.
    ///
    /// Decision: `*` is refused rather than mapped to "any origin". The console signs in with a
    /// Bearer API key; allowing every site to call the API from a browser is never what an
    /// operator of this server wants, and a typo-level flag should not open it. Each origin that
    /// hosts a console must be listed.
    pub fn parse_cors_origins(values: &[String]) -> anyhow::Result<Vec<String>> {
        let mut origins = Vec::new();
        for value in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
            let origin = parse_origin(value)
                .map_err(|why| anyhow::anyhow!("--cors-origin `{value}`: {why}"))?;
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        Ok(origins)
    }
}

fn parse_origin(value: &str) -> Result<String, String> {
    if value == "*" {
        return Err(
            "a wildcard origin is not accepted: it would let any web site call the API \
             with a signed-in console's key; list each origin of a console instead, \
             e.g. https://console.example.com"
                .into(),
        );
    }
    let url = url::Url::parse(value).map_err(|e| {
        format!("{e}; an origin is scheme://host[:port], e.g. https://console.example.com")
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("an origin must start with http:// or https://".into());
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("an origin needs a host".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("an origin has no user name or password".into());
    }
    // `Url` parses `https://a.example` and `https://a.example/` both with path `/`.
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(
            "an origin is scheme://host[:port] only, without a path, query or fragment".into(),
        );
    }
    Ok(url.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_option_prints_without_its_password() {
        let shown = |url: &str| {
            format!(
                "{:?}",
                DatabaseOption {
                    database: url.to_owned()
                }
            )
        };
        let pg = shown("postgres://tunnel:pw-3e9a@db.example:5432/tunnel");
        assert!(pg.contains("db.example:5432/tunnel"), "{pg}");
        assert!(!pg.contains("pw-3e9a"), "{pg}");
        let query = shown("postgres://db.example/tunnel?password=pw-3e9a");
        assert!(!query.contains("pw-3e9a"), "{query}");
        let unparsed = shown("postgres://tunnel:pw-3e9a@");
        assert!(!unparsed.contains("pw-3e9a"), "{unparsed}");
        assert!(shown("sqlite://data/tunnel.db").contains("data/tunnel.db"));
    }

    #[test]
    fn the_public_url_is_a_base_for_paths() {
        assert_eq!(
            Config::parse_public_url("https://tunnel.example.com/api/").unwrap(),
            "https://tunnel.example.com/api"
        );
        assert_eq!(
            Config::parse_public_url("http:/h/api").unwrap(),
            "http://h/api"
        );
        for (bad, said) in [
            ("https://user:pw-5e1@x:70000/api", "not a URL"),
            ("ftp://x/api", "http:// or https://"),
            ("http://x/api?tenant=1", "no query or fragment"),
            ("http://x/api#top", "no query or fragment"),
            ("https://user:pw-5e1@x/api", "no user or password"),
            ("https://user@x/api", "no user or password"),
        ] {
            let error = Config::parse_public_url(bad).unwrap_err().to_string();
            assert!(error.contains(said), "{bad}: {error}");
            assert!(!error.contains("pw-5e1"), "{error}");
        }
    }

    #[test]
    fn node_options_are_checked() {
        assert_eq!(
            NodeConfig::parse_id("node-1.eu_west").unwrap(),
            "node-1.eu_west"
        );
        for bad in ["", "node 1", "nœud", &"n".repeat(65), "a/b"] {
            assert!(NodeConfig::parse_id(bad).is_err(), "{bad:?}");
        }
        assert!(NodeConfig::random_id().starts_with("node-"));
        assert_ne!(NodeConfig::random_id(), NodeConfig::random_id());
        assert_eq!(
            NodeConfig::parse_advertise_url("http://10.0.0.5:8080/").unwrap(),
            "http://10.0.0.5:8080"
        );
        for bad in [
            "10.0.0.5:8080",
            "ftp://x",
            "http://user:pw@x",
            "http://x/?a=1",
        ] {
            assert!(NodeConfig::parse_advertise_url(bad).is_err(), "{bad}");
        }
        let listen: SocketAddr = ([0, 0, 0, 0], 9000).into();
        assert_eq!(
            NodeConfig::default_advertise_url(listen),
            "http://127.0.0.1:9000"
        );
        let short = Secret::from("too short".to_owned());
        assert!(NodeConfig::check_secret(&short).is_err());
        let long = Secret::from(format!("  {}  ", "s".repeat(40)));
        assert_eq!(
            NodeConfig::check_secret(&long).unwrap().expose(),
            "s".repeat(40)
        );
    }

    #[test]
    fn durations_take_a_unit_or_seconds() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert!(parse_duration("0s").is_err());
        assert_eq!(parse_duration("12h"), Ok(Duration::from_secs(12 * 3600)));
        assert_eq!(parse_duration("90d"), Ok(Duration::from_secs(90 * 86_400)));
        assert!(parse_duration("10y").is_err());
        assert!(parse_duration("s").is_err());
    }
}
