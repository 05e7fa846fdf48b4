//! The live tunnel sessions, as a service below the API (docs/agent-channel.md): the in-memory
//! registry of sessions, what happens on the WebSocket an agent connects with, and the delivery
//! of the restart/stop/update commands.
//!
//! Named `agents` (not `sessions`) because everything here is about the connected agents and
//! their channel; the sessions are what the registry records of them. It knows no routing and
//! imports nothing of `api`: the HTTP routes that read the registry, send commands and upgrade
//! the agent's connection are `api::tunnel_sessions` and `api::agent_channel`.

pub mod access;
pub mod channel;
pub mod commands;
pub mod registry;
pub mod updates;

pub use commands::Undelivered;
pub use registry::{LiveSession, Registry, Timings};
pub use updates::RestartWait;
