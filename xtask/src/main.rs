//! `cargo xtask`: the project's developer commands. `test` is what CI runs; `run` starts the
//! console and server locally (`run --nodes N`: a cluster of N servers behind nginx). Both
//! install the toolchain pieces they need first (see `tools`).
//! `postgres` holds a throwaway PostgreSQL cluster open for running a test suite on it by hand.
//! `lighthouse` scores the accessibility of every console page (not part of `test`).
//! `fuzz` runs the cargo-fuzz targets of `fuzz/` for seconds each.
//! `fuzz-api` sends generated requests to the API for minutes (`test` runs a fixed budget of them).
//! `bench` measures against baselines; `soak` runs the server for minutes under agents and API
//! load and records whether what it holds keeps growing (neither is part of `test`).

mod bench;
mod fuzz;
mod fuzz_api;
mod lighthouse;
mod nodes;
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
        /// Address to listen on (with --nodes: nginx's).
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: String,
        /// The database (`sqlite://…` or `postgres://user:password@host:port/db`; with --nodes
        /// PostgreSQL only, a local throwaway cluster when not given).
        #[arg(long, env = "TUNNEL_DATABASE", default_value = run::DEFAULT_DATABASE)]
        database: String,
        /// Start N servers on one PostgreSQL database behind nginx (installed with apt when
        /// missing) instead of one.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
        nodes: u16,
    },
    /// Run every cargo-fuzz target of fuzz/ (ACL rules and binds, request bodies, agent
    /// messages, ids and tokens) for N seconds each; fails on the first crash.
    Fuzz {
        /// How long each target runs.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
    },
    /// Build the server in release and send it requests generated from its OpenAPI document
    /// (schemathesis, every check and the stateful phase) for minutes; fails on any finding.
    FuzzApi {
        /// How long to generate requests.
        #[arg(long, default_value_t = 10.0)]
        minutes: f64,
    },
    /// Start a throwaway PostgreSQL cluster for the tests and print its TUNNEL_TEST_POSTGRES;
    /// Enter stops it.
    Postgres,
    /// Lighthouse's accessibility score of every console page (signed in, light and dark, phone
    /// and desktop); fails when a page scores under 95.
    Lighthouse,
    /// Build in release and measure: writes BENCHMARKS.md and target/bench/results.json.
    Bench {
        /// Passed to `tunnel-bench run` (e.g. `--only throughput,scaling`, `--load-seconds 2` or
        /// `--no-postgres`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Build in release, then run the server for minutes under agents that connect, reconnect
    /// and are commanded, plus API load; writes the growth of its memory, file descriptors and
    /// tasks into BENCHMARKS.md.
    Soak {
        /// How long the load runs.
        #[arg(long, default_value_t = 10.0)]
        minutes: f64,
        /// Agents kept connected.
        #[arg(long, default_value_t = 200)]
        agents: usize,
    },
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Test => test::run(),
        Command::Run {
            listen,
            database,
            nodes: 1,
        } => run::run(&listen, &database),
        Command::Run {
            listen,
            database,
            nodes,
        } => nodes::run(&listen, &database, nodes.into()),
        Command::Bench { args } => bench::run(&args),
        Command::Soak { minutes, agents } => bench::soak(minutes, agents),
        Command::Postgres => test::hold_cluster(),
        Command::FuzzApi { minutes } => fuzz_api::fuzz(minutes),
        Command::Fuzz { seconds } => fuzz::run(seconds),
        Command::Lighthouse => lighthouse::run(),
    };
    if let Err(err) = result {
        eprintln!("xtask: error: {err:#}");
        std::process::exit(1);
    }
}
