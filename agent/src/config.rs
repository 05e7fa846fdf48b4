//! The agent's configuration: what it reports in its hello and how it paces its channel.
//! Built from the command line in `main.rs`, or directly by tests.
//!
//! The server address decides the transport: `https://` (or `wss://`) is TLS, `http://` (or
//! `ws://`) is plain text, in which case the authtoken in the hello travels unencrypted; that
//! is only reasonable on the same machine, so anything else earns a warning.

use crate::error::AgentError;
use std::net::IpAddr;
use std::time::Duration;
use tunnel_core::agent_protocol::Hello;
use tunnel_core::paths::AGENT_CONNECT;
use tunnel_core::resources::Validate;

/// Everything the agent needs to run one process's worth of sessions.
#[derive(Clone)]
pub struct Config {
    /// The server's base address, e.g. `http://127.0.0.1:8080` (`ws://` also accepted).
    pub server: String,
    /// More servers of the same installation, tried in turn after `server` when a connection
    /// fails or a link is lost (the nodes of a cluster; empty for one server).
    pub fallback_servers: Vec<String>,
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
            .field("fallback_servers", &self.fallback_servers)
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
            fallback_servers: Vec::new(),
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
    /// instead of a refusal from the server. The hello is checked with the very rules the
    /// server applies (`Validate for Hello` in `tunnel-core`).
    pub fn validate(&self) -> Result<(), AgentError> {
        for server in self.servers() {
            connect_url(server)?;
        }
        if self.authtoken.trim().is_empty() {
            return Err(AgentError::Config(
                "the authtoken is empty; pass --authtoken or set TUNNEL_AUTHTOKEN".to_owned(),
            ));
        }
        let errors = self.hello().field_errors();
        if !errors.is_empty() {
            let messages: Vec<String> = errors.into_iter().map(|e| e.message).collect();
            return Err(AgentError::Config(messages.join("; ")));
        }
        Ok(())
    }

    /// Every server, in the order they are tried: `server`, then the fallbacks.
    pub fn servers(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.server).chain(&self.fallback_servers)
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

/// The WebSocket address of the agent channel for a server base address: `https://` and
/// `wss://` give `wss://` (TLS), `http://` and `ws://` give `ws://`. Parsed as a URL (the `url`
/// crate), so a port out of range or not a number is refused here rather than dropped, which
/// would send the hello, authtoken included, to the scheme's default port.
pub fn connect_url(server: &str) -> Result<String, AgentError> {
    let server = server.trim();
    let refused = |why: &str| {
        AgentError::Config(format!(
            "`{}` {why}; write a server address like https://tunnel.example.com or http://127.0.0.1:8080",
            shown_url(server)
        ))
    };
    let parsed = url::Url::parse(server).map_err(|e| match e {
        url::ParseError::InvalidPort => refused("has a port that is not a number from 0 to 65535"),
        url::ParseError::EmptyHost => refused("names no host"),
        _ => refused("is not a server address"),
    })?;
    let scheme = match parsed.scheme() {
        "https" | "wss" => "wss",
        "http" | "ws" => "ws",
        _ => return Err(refused("is not an http(s) or ws(s) address")),
    };
    let Some(host) = parsed.host_str().filter(|h| !h.is_empty()) else {
        return Err(refused("names no host"));
    };
    // A `:` with no port after it is the default port to a URL parser: a typo, most likely.
    let authority = server.split_once("://").map_or("", |(_, rest)| rest);
    let authority = authority.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.ends_with(':') {
        return Err(refused("has no port after its `:`"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(refused(
            "has a query or a fragment, which a server address never has",
        ));
    }
    // Credentials for a proxy in front of the server stay in the address.
    let userinfo = match (parsed.username(), parsed.password()) {
        ("", None) => String::new(),
        (user, None) => format!("{user}@"),
        (user, Some(password)) => format!("{user}:{password}@"),
    };
    let port = parsed.port().map(|p| format!(":{p}")).unwrap_or_default();
    // A base URL of the API (`…/api`) is accepted too: the channel lives beside the API.
    let path = parsed.path().trim_end_matches('/');
    let path = path.strip_suffix("/api").unwrap_or(path);
    Ok(format!(
        "{scheme}://{userinfo}{host}{port}{path}{AGENT_CONNECT}"
    ))
}

/// `url` as the agent shows it: a password in it (`user:password@host`, for a proxy in front
/// of the server) replaced by `***`.
pub fn shown_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    let Some((user, _password)) = userinfo.split_once(':') else {
        return url.to_owned();
    };
    let scheme = if scheme.is_empty() {
        String::new()
    } else {
        format!("{scheme}://")
    };
    format!("{scheme}{user}:***@{host}{path}")
}

/// The warning to print when the authtoken would cross a network unencrypted: a plain-text
/// address whose host is not this machine. `None` for TLS and for loopback.
pub fn plain_text_warning(connect_url: &str) -> Option<String> {
    if !connect_url.starts_with("ws://") {
        return None;
    }
    // Made by `connect_url`, so it parses; its host without brackets around IPv6.
    let host = match url::Url::parse(connect_url).ok()?.host()? {
        url::Host::Domain(name) => name.to_owned(),
        url::Host::Ipv4(ip) => ip.to_string(),
        url::Host::Ipv6(ip) => ip.to_string(),
    };
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    (!loopback).then(|| {
        format!(
            "warning: `{host}` is reached over plain http, so the authtoken travels unencrypted; \
             use an https:// server address"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_a_server_address_is_never_shown() {
        for (url, shown) in [
            (
                "ws://admin:ProxyPass123@127.0.0.1:8080/agent/v1/connect",
                "ws://admin:***@127.0.0.1:8080/agent/v1/connect",
            ),
            ("https://a:b:c@h/x?y", "https://a:***@h/x?y"),
            ("http://p:s@[::1]:80", "http://p:***@[::1]:80"),
            ("wss://user@host/x", "wss://user@host/x"),
            ("ws://host/a@b", "ws://host/a@b"),
            ("u:p@host", "u:***@host"),
        ] {
            assert_eq!(shown_url(url), shown, "{url}");
        }
        let refused = connect_url("ftp://admin:ProxyPass123@h").unwrap_err();
        assert!(
            !format!("{refused:?}").contains("ProxyPass123"),
            "{refused:?}"
        );
    }

    fn url(server: &str) -> String {
        connect_url(server).unwrap()
    }

    #[test]
    fn tls_and_plain_addresses_map_to_wss_and_ws() {
        assert_eq!(
            url("https://tunnel.example.com"),
            "wss://tunnel.example.com/agent/v1/connect"
        );
        assert_eq!(url("https://h:8443/api/"), "wss://h:8443/agent/v1/connect");
        assert_eq!(url("wss://h"), "wss://h/agent/v1/connect");
        assert_eq!(url("http://h:1"), "ws://h:1/agent/v1/connect");
        assert_eq!(url("HTTP://H:8080/"), "ws://h:8080/agent/v1/connect");
        assert_eq!(
            url("http://[::1]:9/x/api"),
            "ws://[::1]:9/x/agent/v1/connect"
        );
        assert_eq!(url("https://h:443"), "wss://h/agent/v1/connect");
        assert_eq!(url("http://u:p@h:8080"), "ws://u:p@h:8080/agent/v1/connect");
        // What was once sent to the default port: a port out of range, not a number, missing.
        for bad in [
            "https://",
            "https://:443",
            "ftp://h",
            "http://127.0.0.1:99999",
            "http://127.0.0.1:abc",
            "http://127.0.0.1:",
            "http://[::1]:99999",
            "https://h:70000/api",
            "http://h?tok=abc",
            "http://h/#x",
            "h:8080",
        ] {
            assert!(connect_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn plain_text_off_this_machine_is_warned_about() {
        for quiet in [
            "wss://tunnel.example.com/agent/v1/connect",
            "ws://127.0.0.1:8080/agent/v1/connect",
            "ws://127.8.9.1/agent/v1/connect",
            "ws://localhost:8080/agent/v1/connect",
            "ws://LOCALHOST/agent/v1/connect",
            "ws://[::1]:8080/agent/v1/connect",
        ] {
            assert_eq!(plain_text_warning(quiet), None, "{quiet}");
        }
        for loud in [
            "ws://tunnel.example.com/agent/v1/connect",
            "ws://10.0.0.5:8080/agent/v1/connect",
            "ws://[2001:db8::1]:8080/agent/v1/connect",
            "ws://localhost.example.com/agent/v1/connect",
            "ws://user@192.168.1.1/agent/v1/connect",
        ] {
            let warning = plain_text_warning(loud).unwrap_or_default();
            assert!(warning.contains("unencrypted"), "{loud}: {warning}");
        }
    }

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
        assert!(c.validate().is_ok());
        assert!(!format!("{c:?}").contains("tok_secret"));
        c.binds.push("bad domain".into());
        assert!(c.validate().unwrap_err().to_string().contains("bad domain"));
        let mut c = Config::new("http://127.0.0.1:1", " ");
        assert!(c.validate().unwrap_err().to_string().contains("authtoken"));
        c.authtoken = "t".into();
        c.version = "3.4".into();
        assert!(matches!(c.validate(), Err(AgentError::Config(_))));
    }

    #[test]
    fn the_servers_hello_limits_apply_before_connecting() {
        let mut c = Config::new("http://127.0.0.1:1", "t");
        c.metadata = "m".repeat(4096);
        c.os = "o".repeat(64);
        c.binds = vec!["env=prod".into(); 100];
        assert!(c.validate().is_ok());
        c.metadata.push('m');
        let err = c.validate().unwrap_err().to_string();
        assert!(err.contains("metadata must be at most 4096 bytes"), "{err}");
        c.metadata.clear();
        c.os.push('o');
        assert!(c.validate().unwrap_err().to_string().contains("os must"));
        c.os = "linux".into();
        c.binds.push("env=prod".into());
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("at most 100 binds")
        );
    }
}
