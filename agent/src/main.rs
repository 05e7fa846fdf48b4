//! `tunnel-agent`: the command line (`docs/command-line.md`) around the library's channel loop.
//!
//! Exit status: 0 after a stop command; 2 for a bad command line; 3 when the authtoken is
//! refused; 4 when a bind is outside the credential's ACL; 5 when the credential was deleted;
//! 6 for any other refusal; 1 when a restart could not re-execute the agent. The mapping lives
//! in one place, `AgentError::exit_code`.

use clap::Parser;
use std::process::ExitCode;
use std::time::Duration;
use tunnel_agent::config::{connect_url, plain_text_warning};
use tunnel_agent::{AgentError, Config, Event, Exit, commands};

#[derive(Debug, Parser)]
#[command(
    name = "tunnel-agent",
    version,
    about = "Opens a tunnel session and obeys restart/stop/update."
)]
struct Args {
    /// Server address, e.g. https://tunnel.example.com (TLS) or http://127.0.0.1:8080.
    /// Repeatable (comma-separated in the variable): the nodes of one installation, tried in
    /// turn when a connection fails or a link is lost.
    #[arg(
        long = "server",
        env = "TUNNEL_AGENT_SERVER",
        value_delimiter = ',',
        required = true,
        hide_env_values = true
    )]
    servers: Vec<String>,
    /// The credential's authtoken. Prefer the environment variable: a flag shows in process lists.
    #[arg(long, env = "TUNNEL_AUTHTOKEN", hide_env_values = true)]
    authtoken: String,
    /// A domain, wildcard domain (`*.example.com`) or `host:port` to bind; repeatable.
    #[arg(long = "bind", value_name = "BIND")]
    binds: Vec<String>,
    /// A `key=value` label to bind; repeatable.
    #[arg(long = "label", value_name = "KEY=VALUE")]
    labels: Vec<String>,
    /// Free text reported as the session's metadata.
    #[arg(long, env = "TUNNEL_AGENT_METADATA", default_value = "")]
    metadata: String,
    /// Disable update checks: update commands are then refused.
    #[arg(
        long,
        env = "TUNNEL_AGENT_NO_UPDATE_CHECK",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    no_update_check: bool,
    /// Report this version instead of the agent's own (stands in for other builds).
    #[arg(long, env = "TUNNEL_AGENT_REPORT_VERSION", value_name = "X.Y.Z")]
    report_version: Option<String>,
    /// Report this OS instead of the real one (e.g. `windows`).
    #[arg(long, env = "TUNNEL_AGENT_REPORT_OS", value_name = "NAME")]
    report_os: Option<String>,
    /// How long an update takes, in milliseconds (tests shorten it).
    #[arg(
        long,
        env = "TUNNEL_AGENT_UPDATE_DURATION_MS",
        default_value_t = 3000,
        hide = true
    )]
    update_duration_ms: u64,
    /// Heartbeat interval, in milliseconds.
    #[arg(
        long,
        env = "TUNNEL_AGENT_HEARTBEAT_MS",
        default_value_t = 10_000,
        hide = true
    )]
    heartbeat_ms: u64,
    /// Largest delay between reconnect attempts, in milliseconds.
    #[arg(
        long,
        env = "TUNNEL_AGENT_BACKOFF_MAX_MS",
        default_value_t = 30_000,
        hide = true
    )]
    backoff_max_ms: u64,
}

impl Args {
    fn config(self) -> Config {
        let mut servers = self.servers.into_iter();
        // A token never holds whitespace: a pasted line end or space is not part of it.
        let authtoken = self.authtoken.trim().to_owned();
        let mut config = Config::new(servers.next().unwrap_or_default(), authtoken);
        config.fallback_servers = servers.collect();
        config.binds = self.binds.into_iter().chain(self.labels).collect();
        config.metadata = self.metadata;
        config.update_checks = !self.no_update_check;
        config.version = commands::reported_version(self.report_version);
        if let Some(os) = self.report_os {
            config.os = os;
        }
        config.update_duration = Duration::from_millis(self.update_duration_ms);
        config.heartbeat = Duration::from_millis(self.heartbeat_ms.max(10));
        config.backoff_max =
            Duration::from_millis(self.backoff_max_ms.max(1)).max(config.backoff_initial);
        config
    }
}

/// Writes one line to stdout. A failed write (a reader gone from the pipe, a full disk) is
/// dropped: the tunnel matters more than its log, and `println!` would end the agent.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// [`say`] on stderr.
macro_rules! warn {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// One line per event on stdout: scripts and tests read the session id from `session … opened`.
fn print_event(event: Event) {
    match event {
        Event::Connecting { url } => say!("connecting to {url}"),
        Event::Opened { session_id } => say!("session {session_id} opened"),
        Event::Lost { reason, retry_in } => {
            say!(
                "connection lost ({reason}); reconnecting in {} ms",
                retry_in.as_millis()
            );
        }
        Event::Command {
            command,
            refused: None,
        } => say!("command {} accepted", command.as_str()),
        Event::Command {
            command,
            refused: Some(r),
        } => {
            say!("command {} refused: {}", command.as_str(), r.code().title());
        }
        Event::Updating { target } => say!("updating to {target}"),
        Event::Updated { target } => say!("updated to {target}; restart pending"),
    }
}

fn main() -> ExitCode {
    match agent(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            warn!("{}", e.message());
            ExitCode::from(e.exit_code())
        }
    }
}

/// Runs the agent until it stops (`Ok`) or must exit with an error; a restart does not return.
fn agent(args: Args) -> Result<(), AgentError> {
    // A label without `=` would silently be taken for a domain bind.
    if let Some(label) = args.labels.iter().find(|l| !l.contains('=')) {
        return Err(AgentError::Config(format!(
            "label `{label}` is not of the form key=value"
        )));
    }
    // A `key=value` given to --bind is bound as the label it is, as it always was (command
    // lines written so keep working), with a word on where it belongs.
    for bind in args.binds.iter().filter(|b| b.contains('=')) {
        warn!(
            "tunnel-agent: `{bind}` given to --bind is a label, bound as one; give labels with --label"
        );
    }
    let config = args.config();
    config.validate()?;
    for server in config.servers() {
        if let Some(warning) = plain_text_warning(&connect_url(server)?) {
            warn!("tunnel-agent: {warning}");
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(AgentError::Start)?;
    let exit = runtime.block_on(tunnel_agent::run(&config, &mut print_event));
    drop(runtime);
    match exit? {
        Exit::Stopped => {
            say!("stopped");
            Ok(())
        }
        Exit::Restart { updated_version } => {
            say!("restarting");
            let version = updated_version.map(|v| v.to_string());
            Err(AgentError::Restart(commands::restart(version.as_deref())))
        }
    }
}
