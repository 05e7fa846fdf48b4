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
        #[arg(long)]
        admin: bool,
        #[arg(long)]
        bot: bool,
        #[command(flatten)]
        database: Database,
    },
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
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
        Command::Account(AccountCommand::Create { name, database }) => {
            cli::account_create(&database.database, name.as_deref()).await?
        }
        Command::Account(AccountCommand::List { database }) => {
            cli::account_list(&database.database).await?
        }
        Command::User(UserCommand::Create {
            account,
            admin,
            bot,
            database,
        }) => cli::user_create(&database.database, &account, admin, bot).await?,
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
