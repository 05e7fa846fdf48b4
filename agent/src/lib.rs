//! `tunnel-agent` as a library: the agent's configuration, the channel to the server, its
//! commands and its update state machine. `main.rs` is only the command line around [`run`];
//! tests drive the same code over a real socket.
//!
//! Code map:
//! - [`config`]: what the agent asks for and how it behaves (built by `main` from the flags).
//! - [`channel`]: connect, hello, heartbeats, commands, reconnect with backoff.
//! - [`commands`]: what restart and stop do to the process (exec, exit).
//! - [`error`]: the one error type, its exit statuses and messages.
//! - [`tls`]: the rustls client configuration of `wss://` servers.
//! - [`update`]: idle → updating → updated-restart-pending, and the update refusals.

pub mod channel;
pub mod commands;
pub mod config;
pub mod error;
pub mod tls;
pub mod update;

pub use channel::{Event, Exit, run};
pub use config::Config;
pub use error::AgentError;
