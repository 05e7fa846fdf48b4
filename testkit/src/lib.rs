//! `tunnel-testkit`: what the end-to-end tests (`tests/`) and the benchmarks (`bench/`) both
//! need to run real programs on this machine, in one place so the two cannot drift apart:
//!
//! - [`process`]: a child process in its own process group, killed with its whole group on drop
//!   (also when a test fails), loopback ports, bounded waits for a port to listen.
//! - [`browser`]: chromedriver plus headless Chromium (Debian's builds) with one set of flags, a
//!   fresh empty profile for every session.
//! - [`nginx`]: the load balancer's configuration in front of the nodes of a cluster.
//! - [`postgres`]: a throwaway PostgreSQL cluster (Debian's server, run unprivileged) on a free
//!   loopback port, databases on it, and the `TUNNEL_TEST_POSTGRES` contract that points a test
//!   run at one shared cluster.
//!
//! Dev-only: nothing the project ships depends on it.

pub mod browser;
pub mod nginx;
pub mod postgres;
pub mod process;
