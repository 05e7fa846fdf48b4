//! The `tunnel-server` command line (docs/command-line.md): parsing only; the work is in
//! `tunnel_server::cli`. The options of `serve` are `tunnel_server::config::ServeOptions`, where
//! every flag can also come from `TUNNEL_<FLAG>`. Logs go to stderr (`RUST_LOG`).

use clap::{Parser, Subcommand};
use tunnel_server::cli;
use tunnel_server::config::{DatabaseOption as Database, ServeOptions};

#[derive(Parser)]
#[command(
    name = "tunnel-server",
    version,
    about = "Tunnel Management API server and operator CLI"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    // Boxed: its options are far larger than the other commands'.
    /// Serve the API, the agent channel and the console.
    Serve(Box<ServeOptions>),
    /// Manage accounts.
    #[command(subcommand)]
    Account(AccountCommand),
    /// Manage users and bots.
    #[command(subcommand)]
    User(UserCommand),
    /// Move an installation to another database (e.g. from SQLite to PostgreSQL): copies
    /// every row into an empty database; prints what it moved.
    Migrate {
        /// The database moved from (left unchanged).
        #[arg(long)]
        from: String,
        /// The empty database moved to (its schema is created).
        #[arg(long)]
        to: String,
    },
    /// Developer commands (benchmarks); not part of the stable command line.
    #[command(subcommand, hide = true)]
    Dev(DevCommand),
}

#[derive(Subcommand)]
enum DevCommand {
    /// Bulk-load COUNT credentials owned by the account's admin; prints
    /// {"account_id","inserted","seconds","middle_id","deep_id"}.
    SeedCredentials {
        #[arg(long)]
        account: String,
        #[arg(long)]
        count: u64,
        #[command(flatten)]
        database: Database,
    },
}

#[derive(Subcommand)]
enum AccountCommand {
    /// Create an account with an admin user; prints {"account_id","user_id","api_key"}.
    Create {
        /// The account's name, shown in the console's top bar (`default` when not given).
        #[arg(long)]
        name: Option<String>,
        /// The admin user's name, shown wherever it owns something (none by default).
        #[arg(long)]
        admin_name: Option<String>,
        #[command(flatten)]
        database: Database,
    },
    /// List accounts; prints [{"account_id","name"}].
    List {
        #[command(flatten)]
        database: Database,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create a user (or bot) with an API key; prints {"user_id","api_key"}.
    Create {
        /// The account (acct_…) the user joins (`account list` shows them).
        #[arg(long)]
        account: String,
        /// The name shown wherever the user owns something (credentials, API keys).
        #[arg(long, default_value = "")]
        name: String,
        /// An admin, who manages every API key and owns what they choose (a member by default).
        #[arg(long)]
        admin: bool,
        /// A bot (bot_…), for automation, rather than a person (usr_…).
        #[arg(long)]
        bot: bool,
        #[command(flatten)]
        database: Database,
    },
    /// Name (or rename) a user or bot; prints {"user_id","name"}.
    Rename {
        /// The user (usr_…) or bot (bot_…).
        #[arg(long)]
        id: String,
        /// The new name (1 to 64 characters).
        #[arg(long)]
        name: String,
        #[command(flatten)]
        database: Database,
    },
    /// Make a user or bot an admin of its account, or a member again (an account keeps at
    /// least one admin); prints {"user_id","is_admin"}. Running servers apply it within 10 s.
    Role {
        /// The user (usr_…) or bot (bot_…).
        #[arg(long)]
        id: String,
        /// `admin` or `member`.
        #[arg(long, value_parser = ["admin", "member"])]
        role: String,
        #[command(flatten)]
        database: Database,
    },
    /// Remove a user or bot, with its API keys (someone who left); its credentials, which
    /// agents may be using, go to --to. Prints {"user_id","api_keys_deleted","credentials_moved"}.
    /// Running servers refuse its keys within 10 s.
    Remove {
        /// The user (usr_…) or bot (bot_…).
        #[arg(long)]
        id: String,
        /// Another user or bot of the account, who takes over the credentials it owns (required
        /// when it owns any).
        #[arg(long)]
        to: Option<String>,
        #[command(flatten)]
        database: Database,
    },
    /// List the users and bots of an account; prints [{"user_id","name","kind","is_admin"}].
    List {
        /// The account (acct_…).
        #[arg(long)]
        account: String,
        #[command(flatten)]
        database: Database,
    },
}

fn main() -> std::process::ExitCode {
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(start()),
        Err(err) => {
            eprintln!("tunnel-server: starting the async runtime: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// mimalloc, not glibc's malloc (BENCHMARKS.md, closing note, "mimalloc adopted"). With glibc the
/// server had to choose: eight arenas gave SQLite's pooled connections (each on a thread of its
/// own, allocating for every value they copy out) the throughput, but the arenas' memory rose in
/// steps for as long as a soak ran; two arenas kept memory in a band at a quarter less
/// throughput. mimalloc's per-thread heaps need no locks on the common path and give free pages
/// back to the system after a short delay. `override` routes SQLite's and libc's allocations
/// to it too, which is where most of the server's allocations are made; `no_thp`
/// (server/Cargo.toml) keeps its heaps in 4 KiB pages.
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Context as _;
use tracing_subscriber::filter::LevelFilter;

async fn start() -> std::process::ExitCode {
    let mut filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!(
            "info,{}",
            tunnel_server::store::QUIET_LOG_TARGETS
        ))
    });
    // The WebSocket library writes every message it receives at trace, an agent's hello with
    // its authtoken: with trace asked for anywhere, it stays at debug.
    if filter
        .max_level_hint()
        .is_none_or(|max| max >= LevelFilter::TRACE)
    {
        for target in ["tungstenite=debug", "tokio_tungstenite=debug"] {
            if let Ok(directive) = target.parse() {
                filter = filter.add_directive(directive);
            }
        }
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colours only for a terminal: logs piped to files or CI stay plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(filter)
        .init();
    match run(Cli::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tunnel-server: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    if let Command::Serve(options) = cli.command {
        return cli::serve(*options).await;
    }
    let output = match cli.command {
        Command::Serve(_) => unreachable!("served above"),
        Command::Account(AccountCommand::Create {
            name,
            admin_name,
            database,
        }) => {
            cli::account_create(&database.database, name.as_deref(), admin_name.as_deref()).await?
        }
        Command::Account(AccountCommand::List { database }) => {
            cli::account_list(&database.database).await?
        }
        Command::User(UserCommand::Create {
            account,
            name,
            admin,
            bot,
            database,
        }) => cli::user_create(&database.database, &account, &name, admin, bot).await?,
        Command::User(UserCommand::Rename { id, name, database }) => {
            cli::user_rename(&database.database, &id, &name).await?
        }
        Command::User(UserCommand::Role { id, role, database }) => {
            cli::user_role(&database.database, &id, role == "admin").await?
        }
        Command::User(UserCommand::Remove { id, to, database }) => {
            cli::user_remove(&database.database, &id, to.as_deref()).await?
        }
        Command::User(UserCommand::List { account, database }) => {
            cli::user_list(&database.database, &account).await?
        }
        Command::Migrate { from, to } => cli::migrate(&from, &to).await?,
        Command::Dev(DevCommand::SeedCredentials {
            account,
            count,
            database,
        }) => cli::seed_credentials(&database.database, &account, count).await?,
    };
    cli::print(&format!("{}\n", serde_json::to_string_pretty(&output)?))
        .context("cannot write the answer to stdout (what the command changed is kept)")
}
