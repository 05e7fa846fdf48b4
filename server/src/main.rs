//! The `tunnel-server` command line (DESIGN §11): parsing only; the work is in `tunnel_server::cli`.
//! Every flag of `serve` can also come from `TUNNEL_<FLAG>`. Logs go to stderr (`RUST_LOG`).
//! The parsed structs do not derive `Debug`: they hold the server key and the bootstrap key.

use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use tunnel_server::cli;

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
    /// Serve the API, the agent channel and the console.
    Serve(Serve),
    /// Manage accounts.
    #[command(subcommand)]
    Account(AccountCommand),
    /// Manage users and bots.
    #[command(subcommand)]
    User(UserCommand),
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

#[derive(Args)]
struct Database {
    /// sqlite://<file> (created if missing) or sqlite::memory:.
    #[arg(
        long,
        env = "TUNNEL_DATABASE",
        default_value = "sqlite://data/tunnel.db"
    )]
    database: String,
}

#[derive(Args)]
struct Serve {
    #[arg(long, env = "TUNNEL_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    #[command(flatten)]
    database: Database,
    /// Base URL of the API in every `uri` (default http://<listen>/api).
    #[arg(long, env = "TUNNEL_PUBLIC_URL")]
    public_url: Option<String>,
    /// Directory of the built console (`trunk build`), served at `/`.
    #[arg(long, env = "TUNNEL_CONSOLE_DIR", default_value = "dist")]
    console_dir: PathBuf,
    /// Region reported for tunnel sessions.
    #[arg(long, env = "TUNNEL_REGION", default_value = "local")]
    region: String,
    /// Latest agent version per major version, comma-separated (e.g. 3.4.1,2.9.0).
    #[arg(long, env = "TUNNEL_AGENT_LATEST", default_value = "")]
    agent_latest: String,
    /// Origin allowed by CORS (repeatable; comma-separated in the env variable).
    #[arg(
        long = "cors-origin",
        env = "TUNNEL_CORS_ORIGIN",
        value_delimiter = ','
    )]
    cors_origin: Vec<String>,
    /// Server key sealing SSH CA private keys, 64 hex digits (default: <data dir>/server.key).
    #[arg(long, env = "TUNNEL_SERVER_KEY", hide_env_values = true)]
    server_key: Option<String>,
    /// Make sure an admin of the default account holds exactly this API key.
    #[arg(long, env = "TUNNEL_BOOTSTRAP_API_KEY", hide_env_values = true)]
    bootstrap_api_key: Option<String>,
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
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn")),
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
        Command::Serve(s) => {
            return cli::serve(cli::ServeOptions {
                listen: s.listen,
                database: s.database.database,
                public_url: s.public_url,
                console_dir: Some(s.console_dir),
                region: s.region,
                agent_latest: s.agent_latest,
                cors_origins: s.cors_origin,
                server_key: s.server_key,
                bootstrap_api_key: s.bootstrap_api_key,
            })
            .await;
        }
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
        Command::Dev(DevCommand::SeedCredentials {
            account,
            count,
            database,
        }) => cli::seed_credentials(&database.database, &account, count).await?,
    };
    println!("{}", serde_json::to_string_pretty(&output)?);
    Ok(())
}
