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
        #[arg(long)]
        account: String,
        /// The name shown wherever the user owns something (credentials, API keys).
        #[arg(long, default_value = "")]
        name: String,
        #[arg(long)]
        admin: bool,
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
        #[arg(long)]
        name: String,
        #[command(flatten)]
        database: Database,
    },
    /// List the users and bots of an account; prints [{"user_id","name","kind","is_admin"}].
    List {
        #[arg(long)]
        account: String,
        #[command(flatten)]
        database: Database,
    },
}

fn main() -> std::process::ExitCode {
    cap_malloc_arenas();
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(start()),
        Err(err) => {
            eprintln!("tunnel-server: starting the async runtime: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// At most two glibc malloc arenas, unless the operator set `MALLOC_ARENA_MAX`. glibc gives
/// threads that contend for the allocator arenas of their own, up to eight per core, and each
/// arena keeps memory freed into it. Under the soak's churn of agents and API requests the
/// arenas' resident memory stepped up by 1.1 to 1.8 MiB, one arena at a time: with eight
/// arenas the server still rose in such steps at 52 minutes (anonymous memory 12.9 MiB at the
/// start of the load, 21.3 at 52 minutes), also with a fixed mmap threshold; with two it stays
/// in a band (BENCHMARKS.md, closing note, "Two arenas again"). Two cost about a quarter of
/// the throughput of listing 100 credentials (3.0k req/s against 4.1k with eight): SQLite's
/// eight pooled connections each run on a thread of their own and allocate for every value
/// they copy out, and they queue on the two arenas' locks. Bounded memory comes first for a
/// server that runs for months; an operator who prefers the throughput sets
/// `MALLOC_ARENA_MAX=8`. Set before the runtime starts its threads. The workspace's one
/// `unsafe` block.
#[allow(unsafe_code)]
fn cap_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only changes a tuning parameter of the allocator, with a valid option
        // and value; nothing else runs yet.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

async fn start() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colours only for a terminal: logs piped to files or CI stay plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new(format!(
                    "info,{}",
                    tunnel_server::store::QUIET_LOG_TARGETS
                ))
            }),
        )
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
    let output = match cli.command {
        Command::Serve(options) => return cli::serve(*options).await,
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
    println!("{}", serde_json::to_string_pretty(&output)?);
    Ok(())
}
