//! `tunnel-bench`: the measuring half of `cargo xtask bench` (the xtask builds everything in
//! release, then runs `tunnel-bench run` with the paths of what it built).
//!
//! Benchmarks are not tests: nothing here asserts a time. Every section measures a figure and a
//! baseline in the same run, on the same machine, and the report gives both and their ratio.
//!
//! Code map:
//! - [`procs`]: child processes in their own process group (the guard of `tunnel-testkit`,
//!   killed with `killpg` on drop), loopback ports, RSS from `/proc/<pid>/status`.
//! - [`http`]: a minimal HTTP/1.1 client on hyper (one keep-alive connection per worker) and the
//!   load generator (N connections, bounded by time and by count).
//! - [`baseline`]: the bare axum server returning a constant JSON body (`tunnel-bench
//!   baseline-server`, its own process like the real server).
//! - [`server`]: starting `tunnel-server` on a fresh database (SQLite, or PostgreSQL on the
//!   run's durable cluster), seeding it, the API client.
//! - [`browser`]: chromedriver + headless Chromium (launched by `tunnel-testkit`) through
//!   fantoccini, with a `performance.mark` injected before any page script runs.
//! - [`console`]: the console copy served during the run, with the static baseline page.
//! - [`sections`]: the sections of the report, one module each, listed in report order.
//! - [`report`]: `BENCHMARKS.md` and the raw JSON.
//! - [`machine`]: the machine, its load and the date, for the report's header.
//! - [`stats`]: medians and percentiles.
//! - [`soak`]: `tunnel-bench soak`, the long run of `cargo xtask soak`, apart from the sections.

mod baseline;
mod browser;
mod console;
mod http;
mod machine;
mod procs;
mod report;
mod sections;
mod server;
mod soak;
mod stats;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "tunnel-bench",
    about = "Tunnel Console benchmarks (run by cargo xtask bench)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run every section and write the report.
    Run(RunArgs),
    /// The soak: agents and API load for minutes, what the server holds sampled meanwhile.
    Soak(soak::SoakArgs),
    /// The baseline: a bare axum server answering every request with a constant JSON body.
    BaselineServer {
        #[arg(long)]
        listen: std::net::SocketAddr,
    },
    /// Load one endpoint of a running server as section 3 does, and print what it measured
    /// (JSON): for looking into one figure, under a profiler for example.
    Load(LoadArgs),
}

/// One endpoint under load.
#[derive(clap::Args, Debug)]
pub struct LoadArgs {
    /// The server's address (`127.0.0.1:PORT`).
    #[arg(long)]
    pub addr: std::net::SocketAddr,
    /// The path with its query (`/api/credentials?limit=100`).
    #[arg(long)]
    pub path: String,
    /// An API key sent as a bearer token.
    #[arg(long, env = "TUNNEL_BENCH_KEY")]
    pub key: Option<String>,
    /// POST this JSON body instead of a GET; `{n}` in it becomes the request's number.
    #[arg(long, conflicts_with = "patch")]
    pub post: Option<String>,
    /// PATCH this JSON body instead of a GET; `{n}` in it becomes the request's number, so
    /// that each request changes something.
    #[arg(long)]
    pub patch: Option<String>,
    #[arg(long, default_value_t = 32)]
    pub connections: usize,
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
}

/// Where things are, as built by `cargo xtask bench`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The release `tunnel-server` binary.
    #[arg(long)]
    pub server_bin: PathBuf,
    /// The release `tunnel-agent` binary.
    #[arg(long)]
    pub agent_bin: PathBuf,
    /// The release console build (trunk `--release` output).
    #[arg(long)]
    pub dist: PathBuf,
    /// Directory for the raw JSON and the scratch databases.
    #[arg(long)]
    pub out_dir: PathBuf,
    /// Where to write the Markdown report.
    #[arg(long)]
    pub report: PathBuf,
    /// Seconds per endpoint in the throughput section.
    #[arg(long, default_value_t = 10)]
    pub load_seconds: u64,
    /// Connections of the load generator.
    #[arg(long, default_value_t = 32)]
    pub connections: usize,
    /// Largest database of the scaling section (on each database; above 100 000 to have one
    /// beyond the 100 k database).
    #[arg(long, default_value_t = 1_000_000)]
    pub max_credentials: u64,
    /// Measure on SQLite only: no PostgreSQL cluster, no PostgreSQL rows in the throughput,
    /// scaling and SSH CA sections (a quicker run).
    #[arg(long)]
    pub no_postgres: bool,
    /// Browser runs per page in the console start section.
    #[arg(long, default_value_t = 5)]
    pub browser_runs: usize,
    /// Restarts in the agent section.
    #[arg(long, default_value_t = 50)]
    pub restarts: usize,
    /// Only these sections (comma-separated names, e.g. `throughput,scaling`, or their numbers
    /// in the report); all by default.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// The command line that started the run, for the report (set by the xtask).
    #[arg(long)]
    pub commands: Vec<String>,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => sections::run_all(args),
        Command::Soak(args) => soak::run(args),
        Command::BaselineServer { listen } => baseline::serve(listen),
        Command::Load(args) => http::load_command(args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tunnel-bench: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
