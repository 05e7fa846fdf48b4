//! `cargo xtask`: the project's developer commands. `test` is what CI runs; `run` starts the
//! console and server locally. Both install the toolchain pieces they need first (see `tools`).
//! `postgres` holds a throwaway PostgreSQL cluster open for running a test suite on it by hand.

mod bench;
mod run;
mod shell;
mod test;
mod tools;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "Tunnel Console developer commands")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Install missing tools, then fmt, clippy, the console build, native and browser tests.
    Test,
    /// Build the console (release) and start the server on 127.0.0.1:8080 with SQLite in data/.
    Run {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: String,
        /// The database (`sqlite://…` or `postgres://user:password@host:port/db`).
        #[arg(
            long,
            env = "TUNNEL_DATABASE",
            default_value = "sqlite://data/tunnel.db"
        )]
        database: String,
    },
    /// Start a throwaway PostgreSQL cluster for the tests and print its TUNNEL_TEST_POSTGRES;
    /// Enter stops it.
    Postgres,
    /// Build in release and measure: writes BENCHMARKS.md and target/bench/results.json.
    Bench {
        /// Passed to `tunnel-bench run` (e.g. `--only throughput,scaling`, `--load-seconds 2` or
        /// `--no-postgres`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Test => test::run(),
        Command::Run { listen, database } => run::run(&listen, &database),
        Command::Bench { args } => bench::run(&args),
        Command::Postgres => test::hold_cluster(),
    };
    if let Err(err) = result {
        eprintln!("xtask: error: {err:#}");
        std::process::exit(1);
    }
}
