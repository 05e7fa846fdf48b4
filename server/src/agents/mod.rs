//! Tunnel sessions and the agent channel: the in-memory registry of live sessions (read by the
//! tunnel-session routes), the WebSocket channel agents connect to, and the delivery of the
//! restart/stop/update commands.

pub mod channel;
pub mod commands;
pub mod registry;

pub use registry::{LiveSession, Registry, Timings};
