//! The agent's configuration: what it reports in its hello and how it paces its channel.
//! Built from the command line in `main.rs`, or directly by tests.

use std::time::Duration;
use tunnel_core::acl::Bind;
use tunnel_core::agent_protocol::Hello;
use tunnel_core::paths::AGENT_CONNECT;

/// Everything the agent needs to run one process's worth of sessions.
#[derive(Clone)]
pub struct Config {
    /// The server's base address, e.g. `http://127.0.0.1:8080` (`ws://` also accepted).
    pub server: String,
    pub authtoken: String,
    /// Domains, wildcard domains, `host:port` addresses and `key=value` labels, as sent.
    pub binds: Vec<String>,
    pub metadata: String,
    pub update_checks: bool,
    /// The version reported in the hello.
    pub version: String,
    /// The OS reported in the hello.
    pub os: String,
    /// How long an update takes before it is "installed".
    pub update_duration: Duration,
    /// Interval of the agent's WebSocket pings; the link counts as lost after three silent ones.
    pub heartbeat: Duration,
    /// First and largest delay between reconnect attempts.
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
}

/// Never prints the authtoken.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("server", &self.server)
            .field("binds", &self.binds)
            .field("version", &self.version)
            .field("os", &self.os)
            .field("update_checks", &self.update_checks)
            .finish_non_exhaustive()
    }
}

/// The OS name reported when `--report-os` is not given: the Rust target OS (`linux`, `macos`,
/// `windows`, …), which is what `is_windows` and a human reader expect.
pub fn default_os() -> String {
    std::env::consts::OS.to_owned()
}

impl Config {
    /// A configuration with the default pacing (3 s updates, 10 s heartbeats, 0.25–30 s backoff).
    pub fn new(server: impl Into<String>, authtoken: impl Into<String>) -> Config {
        Config {
            server: server.into(),
            authtoken: authtoken.into(),
            binds: Vec::new(),
            metadata: String::new(),
            update_checks: true,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            os: default_os(),
            update_duration: Duration::from_secs(3),
            heartbeat: Duration::from_secs(10),
            backoff_initial: Duration::from_millis(250),
            backoff_max: Duration::from_secs(30),
        }
    }

    /// Checks what can be checked before connecting, so a typo fails fast with a clear message
    /// instead of a refusal from the server.
    pub fn validate(&self) -> Result<(), String> {
        connect_url(&self.server)?;
        if self.authtoken.trim().is_empty() {
            return Err(
                "the authtoken is empty; pass --authtoken or set TUNNEL_AUTHTOKEN".to_owned(),
            );
        }
        for bind in &self.binds {
            Bind::parse(bind).map_err(|e| format!("bind `{bind}`: {e}"))?;
        }
        if tunnel_core::version::Version::parse(&self.version).is_none() {
            return Err(format!(
                "`{}` is not a version of the form MAJOR.MINOR.PATCH",
                self.version
            ));
        }
        Ok(())
    }

    pub fn hello(&self) -> Hello {
        Hello {
            authtoken: self.authtoken.clone(),
            agent_version: self.version.clone(),
            os: self.os.clone(),
            metadata: self.metadata.clone(),
            update_checks: self.update_checks,
            binds: self.binds.clone(),
        }
    }
}

/// The WebSocket address of the agent channel for a server base address.
///
/// Only plain `ws://` is built in: TLS is expected to be terminated in front of the server for
/// now, and saying so beats a confusing handshake failure.
pub fn connect_url(server: &str) -> Result<String, String> {
    let server = server.trim().trim_end_matches('/');
    let rest = if let Some(rest) = server.strip_prefix("http://") {
        rest
    } else if let Some(rest) = server.strip_prefix("ws://") {
        rest
    } else if server.starts_with("https://") || server.starts_with("wss://") {
        return Err(format!(
            "`{server}`: this build of tunnel-agent speaks plain http/ws only"
        ));
    } else {
        return Err(format!(
            "`{server}` is not a server address like http://127.0.0.1:8080"
        ));
    };
    // A base URL of the API (`…/api`) is accepted too: the channel lives beside the API.
    let rest = rest.strip_suffix("/api").unwrap_or(rest);
    if rest.is_empty() {
        return Err(format!("`{server}` names no host"));
    }
    Ok(format!("ws://{rest}{AGENT_CONNECT}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_urls() {
        assert_eq!(
            connect_url("http://127.0.0.1:8080").unwrap(),
            "ws://127.0.0.1:8080/agent/v1/connect"
        );
        assert_eq!(
            connect_url("http://h:1/").unwrap(),
            "ws://h:1/agent/v1/connect"
        );
        assert_eq!(
            connect_url("http://h:1/api").unwrap(),
            "ws://h:1/agent/v1/connect"
        );
        assert_eq!(
            connect_url("ws://h:1").unwrap(),
            "ws://h:1/agent/v1/connect"
        );
        assert!(connect_url("https://h").unwrap_err().contains("plain"));
        assert!(connect_url("h:1").is_err());
        assert!(connect_url("http://").is_err());
    }

    #[test]
    fn validation_and_hidden_token() {
        let mut c = Config::new("http://127.0.0.1:1", "tok_secret");
        c.binds = vec![
            "a.example.com".into(),
            "env=prod".into(),
            "db.example.com:5432".into(),
        ];
        assert_eq!(c.validate(), Ok(()));
        assert!(!format!("{c:?}").contains("tok_secret"));
        c.binds.push("bad domain".into());
        assert!(c.validate().unwrap_err().contains("bad domain"));
        let mut c = Config::new("http://127.0.0.1:1", " ");
        assert!(c.validate().unwrap_err().contains("authtoken"));
        c.authtoken = "t".into();
        c.version = "3.4".into();
        assert!(c.validate().is_err());
    }
}
